/**
 * Authentication and TLS against real registries: Basic auth from an htpasswd file, Docker's
 * bearer-token flow with a token server whose JWTs the registry verifies, and TLS with a
 * certificate from a CA only the test knows. Good credentials work; wrong or missing ones, and
 * an untrusted certificate, are errors naming the registry, the repository and why.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { credentialsFromDockerConfig } from '../../../src/oci/auth.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { parseReference } from '../../../src/oci/reference.js';
import { gzipLayer, imageOf, type TestImage } from '../../support/oci-images.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';

const missing = await registryAvailable();
if (missing) console.warn(`OCI registry tests skipped: ${missing}`);

const image = imageOf([
  gzipLayer([{ path: 'configs/index.json', data: '{"schema":"olm.package","name":"x"}' }]),
]);

/** A Docker config as `docker login` writes it: `auth` holds base64 of `user:password`. */
const dockerConfig = (host: string, user: string, password: string, source: string) =>
  credentialsFromDockerConfig(
    JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${user}:${password}`).toString('base64') } } }),
    source,
  );

async function pushImage(client: RegistryClient, ref: string, img: TestImage): Promise<void> {
  const r = parseReference(ref);
  for (const blob of [img.config, ...img.layers])
    await client.pushBlob(r, { ...blob.descriptor, data: blob.data });
  await client.pushManifest(r, img.manifest, img.mediaType);
}

describe.skipIf(missing !== undefined)('a registry with Basic auth', () => {
  let registry: TestRegistry;
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'basic', username: 'alice', password: 's3cret' });
  });

  it('pushes and pulls with the right credentials', async () => {
    const client = new RegistryClient({
      credentials: dockerConfig(registry.host, 'alice', 's3cret', 'config.json'),
    });
    await pushImage(client, `${registry.host}/team/op:v1`, image);
    expect((await client.getImage(parseReference(`${registry.host}/team/op:v1`))).digest).toBe(image.digest);
    await client.close();
  });

  it('says whose credentials were refused, and asks for credentials when there are none', async () => {
    const wrong = new RegistryClient({
      credentials: dockerConfig(`https://${registry.host}`, 'alice', 'wrong', 'Secret olm/pull'),
    });
    await expect(wrong.getImage(parseReference(`${registry.host}/team/op:v1`))).rejects.toThrow(
      `${registry.host}/team/op:v1: cannot fetch the manifest v1: the registry refused the credentials of alice (Secret olm/pull): UNAUTHORIZED: authentication required`,
    );
    await wrong.close();
    const none = new RegistryClient();
    await expect(none.resolve(parseReference(`${registry.host}/team/op:v1`))).rejects.toThrow(
      `${registry.host}/team/op:v1: cannot resolve v1: the registry asks for credentials and none are configured for ${registry.host}`,
    );
    await none.close();
  });
});

describe.skipIf(missing !== undefined)('a registry with bearer tokens', () => {
  let registry: TestRegistry;
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'token', username: 'bob', password: 'hunter2' });
  });

  it('pushes with a token for pull and push, and reuses the token until it expires', async () => {
    const client = new RegistryClient({
      credentials: dockerConfig(registry.host, 'bob', 'hunter2', 'config.json'),
    });
    await pushImage(client, `${registry.host}/team/op:v1`, image);
    const afterPush = registry.tokensIssued!();
    // One token for the push scope (the 401 of the first request), reused for every upload.
    expect(afterPush).toBe(1);
    const pulled = await client.getImage(parseReference(`${registry.host}/team/op:v1`));
    expect(pulled.digest).toBe(image.digest);
    await client.blobBytes(pulled.ref, pulled.manifest.layers[0]!, 1 << 20);
    // Pulling asks for a pull-only token once, then reuses it.
    expect(registry.tokensIssued!()).toBe(afterPush + 1);
    await client.close();
  });

  it('pulls anonymously with an anonymous token, and may not push with it', async () => {
    const anonymous = new RegistryClient();
    expect((await anonymous.getImage(parseReference(`${registry.host}/team/op:v1`))).digest).toBe(
      image.digest,
    );
    const other = imageOf([gzipLayer([{ path: 'other', data: 'anonymous push' }])]);
    await expect(pushImage(anonymous, `${registry.host}/team/other:v1`, other)).rejects.toThrow(
      new RegExp(
        `^${registry.host}/team/other:v1: cannot push the blob sha256:[0-9a-f]{64}: the registry refused an anonymous token: UNAUTHORIZED`,
      ),
    );
    await anonymous.close();
  });

  it('names the user whose password the token server refused', async () => {
    const wrong = new RegistryClient({
      credentials: dockerConfig(registry.host, 'bob', 'nope', 'Secret olm/pull'),
    });
    await expect(wrong.getImage(parseReference(`${registry.host}/team/op:v1`))).rejects.toThrow(
      `${registry.host}/team/op:v1: cannot fetch the manifest v1: the token server 127.0.0.1:`,
    );
    await expect(wrong.getImage(parseReference(`${registry.host}/team/op:v1`))).rejects.toThrow(
      /refused the credentials of bob \(Secret olm\/pull\): 401 UNAUTHORIZED: wrong username or password$/,
    );
    await wrong.close();
  });
});

describe.skipIf(missing !== undefined)('a registry with a self-signed TLS certificate', () => {
  let registry: TestRegistry;
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'tls' });
  });

  it('is reached over TLS with its CA added to the system roots', async () => {
    const client = new RegistryClient({ ca: registry.ca! });
    await pushImage(client, `${registry.host}/secure/op:v1`, image);
    expect((await client.resolve(parseReference(`${registry.host}/secure/op:v1`))).digest).toBe(image.digest);
    await client.close();
  });

  it('is refused without the CA, and plain HTTP is not tried instead', async () => {
    const client = new RegistryClient();
    const err = (await client
      .getImage(parseReference(`${registry.host}/secure/op:v1`))
      .catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      new RegExp(
        `^${registry.host}/secure/op:v1: cannot fetch the manifest v1: its TLS certificate is not trusted \\(UNABLE_TO_VERIFY_LEAF_SIGNATURE: .*\\); give Bosun the registry's CA certificate$`,
      ),
    );
    await client.close();
  });

  it('refuses a CA that did not issue the certificate', async () => {
    const other = await startRegistry({ kind: 'tls' });
    const client = new RegistryClient({ ca: other.ca! });
    await expect(client.resolve(parseReference(`${registry.host}/secure/op:v1`))).rejects.toThrow(
      /its TLS certificate is not trusted/,
    );
    await client.close();
    await other.stop();
  });
});
