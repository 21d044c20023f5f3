/**
 * `bosun catalog mirror` between two real registries: a catalog of two bundles whose related
 * images live in the first registry (one of them a two-platform index) is mirrored into the
 * second; then the first registry is stopped and everything is read from the mirror alone:
 * the catalog renders naming only copies, each bundle pulls, each related image resolves by the
 * digest it had at the source. An image that cannot be copied is an error naming its bundle, and
 * no catalog is pushed.
 */
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../../src/oci/client.js';
import { OciError } from '../../../src/oci/errors.js';
import { parseReference } from '../../../src/oci/reference.js';
import { gzipLayer, imageOf, indexOf, type TestImage } from '../../support/oci-images.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { tempDir } from '../../support/temp-dir.js';
import { json, repo, runBosun, type Run } from '../../unit/cli/run-bosun.js';

const missing = await registryAvailable();
if (missing) console.warn(`catalog mirror tests skipped: ${missing}`);

const bosun = (cwd: string, ...args: string[]): Promise<Run> =>
  runBosun(args, { cwd, env: { ...process.env, DOCKER_CONFIG: join(cwd, 'no-docker-config') } });

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile())
      out.set(relative(dir, join(e.parentPath, e.name)), await readFile(join(e.parentPath, e.name), 'utf8'));
  return new Map([...out].sort());
}

async function pushTestImage(client: RegistryClient, ref: string, image: TestImage, tag?: string) {
  const r = parseReference(ref);
  for (const blob of [image.config, ...image.layers])
    await client.pushBlob(r, { ...blob.descriptor, data: blob.data });
  await client.pushManifest(r, image.manifest, image.mediaType, tag ?? image.digest);
}

interface BundleDocJson {
  schema: string;
  name: string;
  image: string;
  relatedImages?: { image: string }[];
}
const bundleDocs = (r: Run) =>
  r.stdout
    .split(/\n(?=\{)/)
    .map((d) => JSON.parse(d) as BundleDocJson)
    .filter((d) => d.schema === 'olm.bundle');

describe.skipIf(missing !== undefined)('catalog mirror', () => {
  let source: TestRegistry;
  let mirror: TestRegistry;
  let work: string;
  /** The digest each related image had at the source. */
  const sourceDigests = new Map<string, string>();
  const bundleDirs: string[] = [];

  beforeAll(async () => {
    source = await startRegistry({ kind: 'plain' });
    mirror = await startRegistry({ kind: 'plain' });
    work = await tempDir('bosun-mirror-');
    const client = new RegistryClient();
    // The operator images the bundles name: v0.1.0 a plain image, v0.2.0 an index of two platforms.
    const v1 = imageOf([gzipLayer([{ path: 'bin/op', data: 'operator v0.1.0' }])]);
    await pushTestImage(client, `${source.host}/ops/sample-operator:v0.1.0`, v1, 'v0.1.0');
    sourceDigests.set(`${source.host}/ops/sample-operator:v0.1.0`, v1.digest);
    const amd = imageOf([gzipLayer([{ path: 'bin/op', data: 'operator v0.2.0 amd64' }])]);
    const arm = imageOf([gzipLayer([{ path: 'bin/op', data: 'operator v0.2.0 arm64' }])], {
      platform: { os: 'linux', architecture: 'arm64' },
    });
    await pushTestImage(client, `${source.host}/ops/sample-operator:v0.2.0`, amd);
    await pushTestImage(client, `${source.host}/ops/sample-operator:v0.2.0`, arm);
    const index = indexOf([
      { image: amd, platform: { os: 'linux', architecture: 'amd64' } },
      { image: arm, platform: { os: 'linux', architecture: 'arm64' } },
    ]);
    await client.pushManifest(
      parseReference(`${source.host}/ops/sample-operator:v0.2.0`),
      index.bytes,
      index.mediaType,
      'v0.2.0',
    );
    sourceDigests.set(`${source.host}/ops/sample-operator:v0.2.0`, index.digest);
    await client.close();

    // Two sample bundles whose operator image is in the source registry.
    const catalog = join(work, 'catalog');
    for (const version of ['0.1.0', '0.2.0']) {
      const dir = join(work, 'bundles', version);
      await cp(join(repo, 'bundles/bosun-sample', version), dir, { recursive: true });
      const csv = join(dir, 'manifests/bosun-sample.clusterserviceversion.yaml');
      await writeFile(
        csv,
        (await readFile(csv, 'utf8')).replaceAll('registry.example/bosun/', `${source.host}/ops/`),
      );
      bundleDirs.push(dir);
      const ref = `${source.host}/bundles/bosun-sample:${version}`;
      const built = await bosun(work, 'bundle', 'build', dir, '-t', ref);
      expect(built.code, built.stderr).toBe(0);
      const published = await bosun(work, 'catalog', 'publish', '--semver', catalog, ref);
      expect(published.code, published.stderr).toBe(0);
    }
    const built = await bosun(work, 'catalog', 'build', catalog, '-t', `${source.host}/catalogs/sample:v1`);
    expect(built.code, built.stderr).toBe(0);
  });

  it('an image that cannot be copied is an error naming its bundle, and no catalog is pushed or written', async () => {
    const broken = join(work, 'broken');
    const dir = join(work, 'bundles/broken');
    await cp(join(repo, 'bundles/bosun-sample/0.2.1'), dir, { recursive: true });
    const csv = join(dir, 'manifests/bosun-sample.clusterserviceversion.yaml');
    await writeFile(
      csv,
      (await readFile(csv, 'utf8')).replaceAll('registry.example/bosun/', `${source.host}/gone/`),
    );
    const ref = `${source.host}/bundles/broken:0.2.1`;
    expect((await bosun(work, 'bundle', 'build', dir, '-t', ref)).code).toBe(0);
    expect((await bosun(work, 'catalog', 'publish', broken, ref)).code).toBe(0);
    expect(
      (await bosun(work, 'catalog', 'build', broken, '-t', `${source.host}/catalogs/broken:v1`)).code,
    ).toBe(0);

    const out = join(work, 'broken-out');
    const r = await bosun(
      work,
      'catalog',
      'mirror',
      `${source.host}/catalogs/broken:v1`,
      `${mirror.host}/m`,
      '--dir',
      out,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `error: bundle bosun-sample/bosun-sample.v0.2.1: cannot copy ${source.host}/gone/sample-operator:v0.2.1: .*404`,
      ),
    );
    expect(existsSync(out)).toBe(false);
    const client = new RegistryClient();
    await expect(client.getImage(parseReference(`${mirror.host}/m/catalogs/broken:v1`))).rejects.toThrow(
      OciError,
    );
    await client.close();
  });

  it('copies the catalog and every image it names, and the mirror alone then serves them all', async () => {
    const out = join(work, 'mirrored');
    const r = await bosun(
      work,
      'catalog',
      'mirror',
      `${source.host}/catalogs/sample:v1`,
      `${mirror.host}/m`,
      '--dir',
      out,
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const mappings = new Map(
      lines.filter((l) => l.includes('=')).map((l) => l.split('=') as [string, string]),
    );
    // Two bundle images, two operator images, the catalog by digest, and the rewritten catalog.
    expect(mappings.size).toBe(6);
    for (const [from, to] of mappings) {
      expect(from.startsWith(source.host)).toBe(true);
      expect(to.startsWith(`${mirror.host}/m/`)).toBe(true);
    }
    for (const [ref, digest] of sourceDigests) expect(mappings.get(ref)).toMatch(new RegExp(`@${digest}$`));
    const newCatalog = mappings.get(`${source.host}/catalogs/sample:v1`)!;
    expect(newCatalog).toMatch(new RegExp(`^${mirror.host}/m/catalogs/sample:v1@sha256:`));

    const json1 = await bosun(
      work,
      'catalog',
      'mirror',
      `${source.host}/catalogs/sample:v1`,
      `${mirror.host}/m`,
      '--output',
      'json',
    );
    // Everything is there already: the second mirror sends no blob, and pushes the same catalog.
    expect(json(json1)).toMatchObject({ catalog: newCatalog, blobs: { uploaded: 0 }, bytes: 0 });
    expect(json(json1).blobs.present).toBeGreaterThanOrEqual(8);

    await source.stop();

    const rendered = await bosun(
      work,
      'catalog',
      'render',
      `${mirror.host}/m/catalogs/sample:v1`,
      '-o',
      'json',
    );
    expect(rendered.code, rendered.stderr).toBe(0);
    const docs = bundleDocs(rendered);
    // The catalog's references name copies only; manifests inside bundles stay as published.
    for (const d of docs) expect(JSON.stringify([d.image, d.relatedImages])).not.toContain(source.host);
    expect(docs.map((d) => d.name).sort()).toEqual(['bosun-sample.v0.1.0', 'bosun-sample.v0.2.0']);
    const fromDir = await bosun(work, 'catalog', 'render', out, '-o', 'json');
    expect(fromDir.stdout).toBe(rendered.stdout);

    const client = new RegistryClient();
    try {
      for (const [i, doc] of docs.entries()) {
        expect(doc.image).toMatch(new RegExp(`^${mirror.host}/m/bundles/bosun-sample@sha256:`));
        const dest = join(work, `pulled-${i}`);
        const pulled = await bosun(work, 'bundle', 'pull', doc.image, dest);
        expect(pulled.code, pulled.stderr).toBe(0);
        const version = doc.name.replace('bosun-sample.v', '');
        expect(await filesUnder(dest)).toEqual(
          await filesUnder(bundleDirs.find((d) => d.endsWith(version))!),
        );
        for (const related of doc.relatedImages ?? []) {
          expect(related.image.startsWith(`${mirror.host}/m/`)).toBe(true);
          const ref = parseReference(related.image);
          const top = await client.getManifest(ref);
          expect(top.digest).toBe(ref.digest);
          // Every platform of the index came along.
          if (top.manifest.kind === 'index')
            for (const p of ['amd64', 'arm64']) await client.getImage(ref, { os: 'linux', architecture: p });
        }
      }
    } finally {
      await client.close();
      await source.start();
    }
  });

  it('mirrors into a registry that asks for credentials, with those of the Docker config', async () => {
    const guarded = await startRegistry({ kind: 'basic', username: 'mirror', password: 'pw' });
    const config = await tempDir('bosun-mirror-docker-');
    const auth = Buffer.from('mirror:pw').toString('base64');
    await writeFile(join(config, 'config.json'), JSON.stringify({ auths: { [guarded.host]: { auth } } }));
    const env = { ...process.env, DOCKER_CONFIG: config };
    const args = ['catalog', 'mirror', `${source.host}/catalogs/sample:v1`, `${guarded.host}/m`];
    const refused = await runBosun(args, {
      cwd: work,
      env: { ...process.env, DOCKER_CONFIG: join(work, 'none') },
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/asks for credentials and none are configured/);
    const r = await runBosun([...args, '--output', 'json'], { cwd: work, env });
    expect(r.code, r.stderr).toBe(0);
    expect(json(r).blobs.uploaded).toBeGreaterThanOrEqual(8);
    const rendered = await runBosun(
      ['catalog', 'render', `${guarded.host}/m/catalogs/sample:v1`, '-o', 'json'],
      {
        cwd: work,
        env,
      },
    );
    expect(rendered.code, rendered.stderr).toBe(0);
    for (const d of bundleDocs(rendered)) expect(d.image.startsWith(`${guarded.host}/m/`)).toBe(true);
  });
});
