/**
 * Which credentials a registry client is made with: the pull Secrets named, each read; one that
 * cannot be read is an error naming the field that names it, except a missing global pull Secret
 * (missingIsAnonymous), which is no credentials, as catalogd pulls while its Secret is absent.
 */
import { describe, expect, it } from 'vitest';
import { type CredentialStore, emptyCredentials } from '../../../../src/oci/auth.js';
import { RegistryClient } from '../../../../src/oci/client.js';
import { type PullSecretReader, registryAccess } from '../../../../src/catalog/content/registry-access.js';

const dockerConfig = (host: string) => ({
  metadata: { name: 'pull', namespace: 'olm' },
  type: 'kubernetes.io/dockerconfigjson',
  data: {
    '.dockerconfigjson': Buffer.from(
      JSON.stringify({ auths: { [host]: { auth: Buffer.from('alice:s3cret').toString('base64') } } }),
    ).toString('base64'),
  },
});

function access(read: PullSecretReader) {
  const made: CredentialStore[] = [];
  const a = registryAccess({
    readSecret: read,
    newClient: (opts) => {
      made.push(opts.credentials);
      return new RegistryClient(opts);
    },
  });
  return { a, made };
}

describe('registryAccess.clientFor', () => {
  const missing: PullSecretReader = async () => ({ ok: false, notFound: true, message: 'not found' });
  const forbidden: PullSecretReader = async () => ({ ok: false, notFound: false, message: 'is forbidden' });
  const present: PullSecretReader = async () => ({ ok: true, secret: dockerConfig('registry.example') });
  const wrongType: PullSecretReader = async () => ({
    ok: true,
    secret: { ...dockerConfig('r'), type: 'Opaque' },
  });
  const global = { field: () => 'the global pull secret', missingIsAnonymous: true };

  it('names the field of a Secret that does not exist: spec.secrets[i] by default, or as told', async () => {
    expect(await access(missing).a.clientFor('ns', ['a', 'b'])).toEqual({
      ok: false,
      message: 'spec.secrets[0]: Secret ns/a does not exist',
    });
    expect(
      await access(forbidden).a.clientFor('olm', ['pull'], { field: () => 'the global pull secret' }),
    ).toEqual({
      ok: false,
      message: 'the global pull secret: Secret olm/pull is forbidden',
    });
  });

  it('a missing global pull Secret is no credentials; one that is forbidden or malformed is still an error', async () => {
    const { a, made } = access(missing);
    const opened = await a.clientFor('olm', ['pull'], global);
    expect(opened.ok).toBe(true);
    if (opened.ok) await opened.client.close();
    expect(made).toEqual([emptyCredentials]);
    expect(await access(forbidden).a.clientFor('olm', ['pull'], global)).toMatchObject({
      ok: false,
      message: 'the global pull secret: Secret olm/pull is forbidden',
    });
    expect(await access(wrongType).a.clientFor('olm', ['pull'], global)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^the global pull secret: /),
    });
  });

  it('a present global pull Secret gives its credentials', async () => {
    const { a, made } = access(present);
    const opened = await a.clientFor('olm', ['pull'], global);
    expect(opened.ok).toBe(true);
    if (opened.ok) await opened.client.close();
    expect(made[0]?.entries.length).toBeGreaterThan(0);
  });
});
