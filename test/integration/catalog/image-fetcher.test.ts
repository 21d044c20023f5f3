/**
 * The catalog image fetcher against a registry with a self-signed TLS certificate, as the
 * manager runs it: the CA an admin gives in BOSUN_REGISTRY_CA_FILES makes the registry trusted;
 * without it the fetch fails naming the image and the untrusted certificate, and plain HTTP is
 * never tried instead. A reference pinned by digest that the store holds needs no registry at all.
 * And what it keeps of a layered image is what the image holds once every layer is applied.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogSource } from '../../../src/apis/operators.js';
import { imageFetcher } from '../../../src/catalog/content/image.js';
import { registryAccess } from '../../../src/catalog/content/registry-access.js';
import { CatalogSpool } from '../../../src/catalog/content/spool.js';
import { pullCatalogImage } from '../../../src/catalog/image.js';
import { loadCatalog } from '../../../src/catalog/load.js';
import { CatalogImageLabel } from '../../../src/olm/image-kind.js';
import { registryTransport } from '../../../src/manager/registry-settings.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { parseReference } from '../../../src/oci/reference.js';
import { gzipLayer, imageOf } from '../../support/oci-images.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { tempDir } from '../../support/temp-dir.js';
import { imageOnlyCatalog, pushCatalog, pushRaw, sampleCatalog } from '../controllers/image-catalogs.js';

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

/**
 * The fetcher parses each catalog file as soon as it is extracted, while later entries are still
 * coming: what it keeps must be exactly what the image holds at the end, as extracting it whole
 * and then loading the folder reads it, whatever later entries do to a file already parsed.
 */
describe.skipIf(missing !== undefined)(
  'a catalog image whose later entries change files already extracted',
  () => {
    let registry: TestRegistry;
    let spool: CatalogSpool;
    beforeAll(async () => {
      registry = await startRegistry({ kind: 'plain' });
      spool = await CatalogSpool.open(await tempDir('bosun-image-fetcher-'));
    });
    afterAll(async () => {
      await spool?.close();
    });

    /** A small valid catalog of one package, its description telling which copy was read. */
    const fbc = (pkg: string, description: string) =>
      [
        { schema: 'olm.package', name: pkg, defaultChannel: 'stable', description },
        { schema: 'olm.channel', package: pkg, name: 'stable', entries: [{ name: `${pkg}.v0.1.0` }] },
        {
          schema: 'olm.bundle',
          package: pkg,
          name: `${pkg}.v0.1.0`,
          image: `quay.io/x/${pkg}:v0.1.0`,
          properties: [{ type: 'olm.package', value: { packageName: pkg, version: '0.1.0' } }],
        },
      ]
        .map((d) => JSON.stringify(d))
        .join('\n');

    it('keeps what the image holds at the end: a file replaced by a later layer or entry, removed, hard-linked or ignored', async () => {
      const labels = { [CatalogImageLabel.Configs]: '/configs' };
      const lower = gzipLayer([
        { path: 'configs/a/catalog.json', data: fbc('alpha', 'replaced by the upper layer') },
        { path: 'configs/b/catalog.json', data: fbc('beta', 'removed by a whiteout') },
        { path: 'configs/c.json', data: fbc('gamma', 'read through the hard link d.json') },
        { path: 'configs/e.json', data: fbc('epsilon', 'left out by .indexignore') },
      ]);
      const upper = gzipLayer([
        { path: 'configs/a/catalog.json', data: fbc('alpha', 'the upper layer') },
        { path: 'configs/b/.wh.catalog.json', data: '' },
        { path: 'configs/d.json', type: 'link', linkpath: 'configs/c.json' },
        { path: 'configs/.wh.c.json', data: '' },
        { path: 'configs/.indexignore', data: 'e.json\n' },
        // The same path twice in one layer: the later entry is the file.
        { path: 'configs/f.json', data: fbc('zeta-first', 'replaced within its layer') },
        { path: 'configs/f.json', data: fbc('zeta', 'the later entry') },
      ]);
      const image = `${registry.host}/catalogs/layered:v1`;
      const push = new RegistryClient();
      const digest = await pushRaw(push, image, imageOf([lower, upper], { labels }));

      const fetcher = imageFetcher({ spool, access: registryAccess({ readSecret: noSecrets }) });
      const got = await fetcher.fetch(source(image), undefined, AbortSignal.timeout(60_000));
      if (!got.ok) throw new Error(got.message);
      expect(got.content.digest).toBe(digest);
      const packages = got.content.config.packages.map((p) => [p.name, p.description]);
      expect(packages).toEqual([
        ['alpha', 'the upper layer'],
        ['gamma', 'read through the hard link d.json'],
        ['zeta', 'the later entry'],
      ]);

      // The same as extracting the image whole, then loading its folder.
      const dest = join(await tempDir('bosun-image-fetcher-whole-'), 'image');
      const pulled = await pullCatalogImage(
        push,
        parseReference(`${image.replace(/:v1$/, '')}@${digest}`),
        dest,
      );
      const loaded = await loadCatalog(pulled.configs);
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
      expect(got.content.config).toEqual(loaded.value);
      await push.close();
    });
  },
);
