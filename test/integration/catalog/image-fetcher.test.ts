/**
 * The catalog image fetcher against a registry with a self-signed TLS certificate, as the
 * manager runs it: the CA an admin gives in BOSUN_REGISTRY_CA_FILES makes the registry trusted;
 * without it the fetch fails naming the image and the untrusted certificate, and plain HTTP is
 * never tried instead. A reference pinned by digest that the store holds needs no registry at all.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogSource } from '../../../src/apis/operators.js';
import { imageFetcher } from '../../../src/catalog/content/image.js';
import { registryAccess } from '../../../src/catalog/content/registry-access.js';
import { CatalogSpool } from '../../../src/catalog/content/spool.js';
import { registryTransport } from '../../../src/manager/registry-settings.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { tempDir } from '../../support/temp-dir.js';
import { imageOnlyCatalog, pushCatalog, sampleCatalog } from '../controllers/image-catalogs.js';

const missing = await registryAvailable();
if (missing) console.warn(`the catalog image fetcher TLS tests are skipped: ${missing}`);

const noSecrets = async () => ({ ok: false as const, notFound: true, message: '' });
const source = (image: string): CatalogSource => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { namespace: 'olm', name: 'tls' },
  spec: { sourceType: 'grpc', image },
});

describe.skipIf(missing !== undefined)(
  'the catalog image fetcher at a registry with a self-signed certificate',
  () => {
    let registry: TestRegistry;
    let spool: CatalogSpool;
    let tag: string;
    let digest: string;
    let caFile: string;
    beforeAll(async () => {
      registry = await startRegistry({ kind: 'tls' });
      spool = await CatalogSpool.open(await tempDir('bosun-image-fetcher-'));
      caFile = join(await tempDir('bosun-image-fetcher-ca-'), 'ca.pem');
      await writeFile(caFile, registry.ca!);
      const push = new RegistryClient({ ca: registry.ca! });
      tag = `${registry.host}/catalogs/secure:v1`;
      digest = await pushCatalog(
        push,
        tag,
        imageOnlyCatalog(await sampleCatalog(), (b) => `quay.io/x/${b}:v1`),
      );
      await push.close();
    });
    afterAll(async () => {
      await spool?.close();
    });

    it('reads the image with the CA an admin gives, and needs no registry for a pinned digest the store holds', async () => {
      const transport = await registryTransport({ BOSUN_REGISTRY_CA_FILES: caFile });
      const fetcher = imageFetcher({ spool, access: registryAccess({ readSecret: noSecrets, transport }) });
      const got = await fetcher.fetch(source(tag), undefined, AbortSignal.timeout(60_000));
      if (!got.ok) throw new Error(got.message);
      expect(got.content.digest).toBe(digest);
      expect(got.image).toBe(`${registry.host}/catalogs/secure@${digest}`);
      expect(got.content.config.packages.map((p) => p.name).sort()).toEqual([
        'bosun-sample',
        'bosun-sample-dashboard',
      ]);

      await registry.stop();
      try {
        const pinned = await fetcher.fetch(
          source(`${registry.host}/catalogs/secure@${digest}`),
          got.content,
          AbortSignal.timeout(60_000),
        );
        expect(pinned.ok && pinned.content).toBe(got.content);
      } finally {
        await registry.start();
      }
    });

    it('is refused without the CA, naming the image and the certificate, and never over plain HTTP', async () => {
      const fetcher = imageFetcher({ spool, access: registryAccess({ readSecret: noSecrets }) });
      const got = await fetcher.fetch(source(tag), undefined, AbortSignal.timeout(60_000));
      expect(got).toMatchObject({ ok: false, reason: 'RegistryServerError', address: tag });
      expect(!got.ok && got.message).toMatch(
        new RegExp(
          `^image ${RegExp.escape(tag)}: cannot resolve v1: its TLS certificate is not trusted .*give Bosun the registry's CA certificate$`,
        ),
      );
    });
  },
);
