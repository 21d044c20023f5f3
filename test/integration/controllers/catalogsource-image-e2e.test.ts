/**
 * Catalog images end to end, against a running manager and real registries (Debian's
 * docker-registry on 127.0.0.1): what catalogsource-image.test.ts does not prove yet of issue 22.
 *
 * - A catalog mirrored by `bosun catalog mirror` into a second registry installs an operator
 *   with the first registry stopped: the catalog and every bundle come from the mirror.
 * - Bundle and catalog images built with crane alone (not Bosun) install unchanged.
 * - A catalog image index without linux/amd64, and a catalog file past the catalog file limit,
 *   each fail naming the image and the cause, keep the last good catalog (a Subscription still
 *   installs from it), and leave the manager serving.
 */
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogSource, ClusterServiceVersion, InstallPlan } from '../../../src/apis/operators.js';
import { CatalogLimitEnv } from '../../../src/catalog/limits.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { CatalogImageLabel } from '../../../src/olm/image-kind.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { parseReference } from '../../../src/oci/reference.js';
import { craneBinary, craneImage } from '../../support/crane.js';
import {
  gzipLayer,
  imageOf,
  indexOf,
  tarLayer,
  type TestImage,
  zstdLayer,
} from '../../support/oci-images.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { tempDir } from '../../support/temp-dir.js';
import { repo, runBosun } from '../../unit/cli/run-bosun.js';
import { eventually } from '../support.js';
import {
  imageOnlyCatalog,
  pushCatalog,
  pushRaw,
  pushSampleBundles,
  SampleGroup,
  sampleCatalog,
} from './image-catalogs.js';
import { uniqueGroup } from './operator-support.js';
import {
  catalogSource,
  catalogSourceWhen,
  create,
  get,
  list,
  mergePatch,
  namespaceWithOperatorGroup,
  readyCondition,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

const missing = await registryAvailable();
if (missing) console.warn(`the catalog image end-to-end tests are skipped: ${missing}`);

let manager: RunningManager;
let push: RegistryClient;

beforeAll(async () => {
  if (missing) return;
  push = new RegistryClient();
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
  await push?.close();
});

/**
 * Subscribes to bosun-sample's stable channel from `source` (from `startingCSV` when given, so
 * the upgrade pulls a second bundle) and waits for `csv` to be Succeeded; returns the
 * namespace's InstallPlans.
 */
async function installs(
  ns: string,
  source: string,
  csv: string,
  startingCSV?: string,
): Promise<InstallPlan[]> {
  await create(
    Resources.Subscription,
    ns,
    subscription(ns, 'sample', {
      name: 'bosun-sample',
      source,
      channel: 'stable',
      ...(startingCSV && { startingCSV }),
    }),
  );
  try {
    await eventually(
      `CSV ${csv} to be Succeeded`,
      async () => {
        const got = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv);
        return got?.status?.phase === 'Succeeded' ? got : undefined;
      },
      120_000,
    );
  } catch (err) {
    // Say where it stopped: the plans' phases and messages.
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    const where = plans.map((p) => `${p.metadata.name}: ${p.status?.phase} ${p.status?.message ?? ''}`);
    throw new Error(`${(err as Error).message}; InstallPlans: ${where.join('; ') || 'none'}`, { cause: err });
  }
  return list<InstallPlan>(Resources.InstallPlan, ns);
}

const isSample01 = (b: string) => b === 'bosun-sample.v0.1.0' || b === 'bosun-sample.v0.1.1';

describe.skipIf(missing !== undefined)('a catalog mirrored with bosun catalog mirror', () => {
  it('installs an operator from the mirror alone, the source registry stopped, every bundle pulled from the mirror', async () => {
    const source = await startRegistry({ kind: 'plain' });
    const mirror = await startRegistry({ kind: 'plain' });
    const group = uniqueGroup();
    const images = await pushSampleBundles(push, source.host, group);
    // The operator images the catalog's relatedImages name live in the source registry too, so
    // the mirror copies them and the mirrored catalog names nothing of the source.
    for (const version of ['v0.1.0', 'v0.1.1'])
      await pushRaw(
        push,
        `${source.host}/ops/sample-operator:${version}`,
        imageOf([gzipLayer([{ path: 'bin/op', data: `operator ${version}` }])]),
      );
    const files = imageOnlyCatalog(await sampleCatalog(), (b) => images.get(b)!, isSample01, group);
    const text = files.get('catalog.json')!.toString('utf8');
    expect(text).toContain('registry.example/bosun/');
    const catalog = `${source.host}/catalogs/samples:v1`;
    await pushCatalog(
      push,
      catalog,
      new Map([
        ['catalog.json', Buffer.from(text.replaceAll('registry.example/bosun/', `${source.host}/ops/`))],
      ]),
    );

    const work = await tempDir('bosun-e2e-mirror-');
    const mirrored = await runBosun(['catalog', 'mirror', catalog, `${mirror.host}/mirror`], {
      cwd: work,
      env: { ...process.env, DOCKER_CONFIG: join(work, 'no-docker-config') },
    });
    expect(mirrored.code, mirrored.stderr).toBe(0);
    // Two bundle images, two operator images, the catalog by digest and the rewritten catalog.
    expect(
      mirrored.stdout
        .trim()
        .split('\n')
        .filter((l) => l.includes('=')),
    ).toHaveLength(6);
    await source.stop();

    const ns = await namespaceWithOperatorGroup('e2e-mirror');
    const image = `${mirror.host}/mirror/catalogs/samples:v1`;
    await create(Resources.CatalogSource, ns, catalogSource(ns, 'mirrored', { sourceType: 'grpc', image }));
    const cs = await catalogSourceWhen(
      ns,
      'mirrored',
      (c) => c?.status === 'True',
      'the mirrored catalog to be READY',
    );
    expect(readyCondition(cs)?.message).toMatch(
      new RegExp(
        `^catalog synced: 1 packages, 2 bundles from ${RegExp.escape(mirror.host)}/mirror/catalogs/samples@sha256:`,
      ),
    );
    const held = manager.ctx.catalogs.get({ namespace: ns, name: 'mirrored' })!;
    expect(held.config.bundles.map((b) => b.image)).toEqual(
      held.config.bundles.map(() =>
        expect.stringMatching(new RegExp(`^${RegExp.escape(mirror.host)}/mirror/`)),
      ),
    );

    // Installed at v0.1.0 and upgraded to v0.1.1: both bundles are pulled.
    const plans = await installs(ns, 'mirrored', 'bosun-sample.v0.1.1', 'bosun-sample.v0.1.0');
    const lookups = plans.flatMap((p) => p.status?.bundleLookups ?? []);
    expect(lookups.map((l) => l.identifier).sort()).toEqual(['bosun-sample.v0.1.0', 'bosun-sample.v0.1.1']);
    // The bundles came from the mirror: each lookup names its copy there, pinned by the digest the source had.
    for (const l of lookups) {
      const digest = images.get(l.identifier)!.split('@')[1]!;
      expect(l.path).toBe(`${mirror.host}/mirror/bundles/${group.split('.')[0]}/bosun-sample@${digest}`);
    }
  });
});

describe.skipIf(missing !== undefined)('images built with crane alone', () => {
  it('a catalog image and bundle images crane built, the catalog naming the bundles by digest, install unchanged', async (ctx) => {
    const crane = await craneBinary();
    if (!crane.ok) {
      console.warn(`the crane end-to-end test is skipped: ${crane.why}`);
      ctx.skip();
      return;
    }
    const registry = await startRegistry({ kind: 'plain' });
    const work = await tempDir('bosun-e2e-crane-');
    const group = uniqueGroup();
    /** Bundle name → the crane-built image, pinned by the digest crane reports. */
    const images = new Map<string, string>();
    for (const [version, oci] of [
      ['0.1.0', false],
      ['0.1.1', true],
    ] as const) {
      // The sample bundle with its API moved to this test's group (a CRD is cluster-wide).
      const dir = join(work, 'bundles', version);
      await cp(join(repo, 'bundles/bosun-sample', version), dir, { recursive: true });
      for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
        if (e.isFile()) {
          const path = join(e.parentPath, e.name);
          await writeFile(path, (await readFile(path, 'utf8')).replaceAll(SampleGroup, group));
        }
      const labels = Object.fromEntries(
        (await readFile(join(dir, 'metadata/annotations.yaml'), 'utf8'))
          .split('\n')
          .map((l) => /^\s+(\S+):\s*(\S+)\s*$/.exec(l))
          .filter((m) => m !== null)
          .map((m) => [m[1]!, m[2]!.replace(/^["']|["']$/g, '')]),
      );
      const repository = `${registry.host}/crane/bosun-sample`;
      const digest = await craneImage(crane.path, work, {
        ref: `${repository}:${version}`,
        dir,
        names: ['manifests', 'metadata'],
        labels,
        oci,
      });
      images.set(`bosun-sample.v${version}`, `${repository}@${digest}`);
    }
    const root = join(work, 'catalog-root');
    await mkdir(join(root, 'configs'), { recursive: true });
    const files = imageOnlyCatalog(await sampleCatalog(), (b) => images.get(b)!, isSample01, group);
    await writeFile(join(root, 'configs/catalog.json'), files.get('catalog.json')!);
    const tag = `${registry.host}/crane/catalog:v1`;
    const catalogDigest = await craneImage(crane.path, work, {
      ref: tag,
      dir: root,
      names: ['configs'],
      labels: { [CatalogImageLabel.Configs]: '/configs' },
      oci: true,
    });

    const ns = await namespaceWithOperatorGroup('e2e-crane');
    await create(Resources.CatalogSource, ns, catalogSource(ns, 'crane', { sourceType: 'grpc', image: tag }));
    const cs = await catalogSourceWhen(
      ns,
      'crane',
      (c) => c?.status === 'True',
      'the crane catalog to be READY',
    );
    expect(readyCondition(cs)?.message).toBe(
      `catalog synced: 1 packages, 2 bundles from ${registry.host}/crane/catalog@${catalogDigest}`,
    );
    // Installed at v0.1.0 (Docker media types) and upgraded to v0.1.1 (OCI's): both crane images are pulled.
    const plans = await installs(ns, 'crane', 'bosun-sample.v0.1.1', 'bosun-sample.v0.1.0');
    const lookups = plans.flatMap((p) => p.status?.bundleLookups ?? []);
    expect(lookups.map((l) => [l.identifier, l.path]).sort()).toEqual([...images].sort());
    const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, 'bosun-sample.v0.1.1');
    expect(JSON.stringify(csv?.spec)).toContain(group);
  });
});

describe.skipIf(missing !== undefined)('a catalog image the manager cannot read', () => {
  let registry: TestRegistry;
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'plain' });
  });

  /** Pushes an image by its digest only (an index's member). */
  async function pushByDigest(repository: string, img: TestImage) {
    const r = parseReference(`${repository}:unused`);
    for (const blob of [img.config, ...img.layers])
      await push.pushBlob(r, { ...blob.descriptor, data: blob.data });
    await push.pushManifest(r, img.manifest, img.mediaType, img.digest);
  }

  it('an index without linux/amd64, or a catalog file past the file limit, names the image and the cause; the last good catalog stays, a Subscription installs from it, and the manager serves on', async () => {
    const group = uniqueGroup();
    const images = await pushSampleBundles(push, registry.host, group);
    const good = imageOnlyCatalog(await sampleCatalog(), (b) => images.get(b)!, isSample01, group);
    const repository = `${registry.host}/catalogs/unreadable`;
    const goodDigest = await pushCatalog(push, `${repository}:good`, good);
    const ns = await namespaceWithOperatorGroup('e2e-unreadable');
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'c', {
        sourceType: 'grpc',
        image: `${repository}:good`,
        updateStrategy: { registryPoll: { interval: '1s' } },
      }),
    );
    await catalogSourceWhen(ns, 'c', (c) => c?.status === 'True', 'the CatalogSource to be READY');
    const ref = { namespace: ns, name: 'c' };
    const held = manager.ctx.catalogs.get(ref)!;
    expect(held.digest).toBe(goodDigest);

    /** Points the CatalogSource at `image`, waits for it to fail with `reason` saying `says`; the good catalog stays. */
    const failsWith = async (image: string, reason: string, ...says: (string | RegExp)[]) => {
      await mergePatch(Resources.CatalogSource, ns, 'c', { spec: { image } });
      const cs = await catalogSourceWhen(
        ns,
        'c',
        (c) => c?.status === 'False' && c.message?.includes(image) === true,
        `${image} to fail`,
      );
      expect(readyCondition(cs)?.reason).toBe(reason);
      for (const s of says) expect(readyCondition(cs)?.message).toMatch(s);
      expect(cs.status?.connectionState).toMatchObject({
        lastObservedState: 'TRANSIENT_FAILURE',
        address: image,
      });
      // The very content read from the good image, not a copy read again.
      expect(manager.ctx.catalogs.get(ref)).toBe(held);
      return cs;
    };
    const restore = async () => {
      await mergePatch(Resources.CatalogSource, ns, 'c', { spec: { image: `${repository}:good` } });
      await catalogSourceWhen(ns, 'c', (c) => c?.status === 'True', 'the CatalogSource to be READY again');
    };

    // Indexes whose every image is a valid catalog, but none for linux/amd64: OCI and Docker
    // lists of other architectures, and amd64 of another OS.
    const labels = { [CatalogImageLabel.Configs]: '/configs' };
    const catalogOn = (os: string, architecture: string) =>
      imageOf([gzipLayer([{ path: 'configs/catalog.json', data: good.get('catalog.json')! }])], {
        labels,
        platform: { os, architecture },
      });
    const indexes: [string, [string, string][], boolean, string][] = [
      [
        'oci-arm64-s390x',
        [
          ['linux', 'arm64'],
          ['linux', 's390x'],
        ],
        false,
        'linux/arm64, linux/s390x',
      ],
      ['docker-arm64', [['linux', 'arm64']], true, 'linux/arm64'],
      ['windows-amd64', [['windows', 'amd64']], false, 'windows/amd64'],
    ];
    for (const [tag, platforms, docker, has] of indexes) {
      const members = platforms.map(([os, architecture]) => ({
        image: catalogOn(os, architecture),
        platform: { os, architecture },
      }));
      for (const m of members) await pushByDigest(repository, m.image);
      const index = indexOf(members, docker);
      await push.pushManifest(parseReference(`${repository}:${tag}`), index.bytes, index.mediaType, tag);
      await failsWith(
        `${repository}:${tag}`,
        'ImagePlatformMissing',
        `has no linux/amd64 image (ImagePlatformMissing); it has images for ${has}`,
        index.digest,
      );
      await restore();
    }

    // A catalog file past the file limit, lowered to 1 MiB for the manager: a 2 MiB file in a
    // gzip layer that compresses to a few kilobytes, in an uncompressed layer, and in zstd.
    const huge = JSON.stringify({
      schema: 'olm.package',
      name: 'huge',
      description: 'x'.repeat(2 * 2 ** 20),
    });
    const before = process.env[CatalogLimitEnv.File];
    process.env[CatalogLimitEnv.File] = '1';
    try {
      for (const [tag, layer] of [
        ['huge-gzip', gzipLayer],
        ['huge-tar', tarLayer],
        ['huge-zstd', zstdLayer],
      ] as const) {
        const entries = [
          { path: 'configs/catalog.json', data: good.get('catalog.json')! },
          { path: 'configs/huge/catalog.json', data: huge },
        ];
        await pushRaw(push, `${repository}:${tag}`, imageOf([layer(entries)], { labels }));
        await failsWith(
          `${repository}:${tag}`,
          'InvalidCatalog',
          'configs/huge/catalog.json',
          `past the limit of ${2 ** 20} for one file (BOSUN_CATALOG_MAX_FILE_MIB raises it, up to 500)`,
        );
        if (tag !== 'huge-zstd') await restore();
      }
      // Left failing: a Subscription still resolves and installs from the last good catalog.
      const plans = await installs(ns, 'c', 'bosun-sample.v0.1.1');
      expect(plans.flatMap((p) => p.status?.bundleLookups ?? [])).toContainEqual(
        expect.objectContaining({
          identifier: 'bosun-sample.v0.1.1',
          path: images.get('bosun-sample.v0.1.1'),
        }),
      );
      expect(readyCondition(await get<CatalogSource>(Resources.CatalogSource, ns, 'c'))?.status).toBe(
        'False',
      );
    } finally {
      if (before === undefined) delete process.env[CatalogLimitEnv.File];
      else process.env[CatalogLimitEnv.File] = before;
    }

    // The manager is up and serving: its health endpoint answers and the source is read again.
    expect(manager.ready()).toBe(true);
    expect(manager.url).toBeDefined();
    expect((await fetch(new URL('/healthz', manager.url))).status).toBe(200);
    await restore();
  });
});
