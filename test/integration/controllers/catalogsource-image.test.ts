/**
 * CatalogSources of sourceType grpc with `spec.image`, read by a running manager from real
 * registries (Debian's docker-registry on 127.0.0.1, test/support/registry.ts), with images built
 * by Bosun's image library from the sample bundles and catalog: the catalog becomes READY from
 * its image and names the digest it read; a Subscription installs an operator whose bundles the
 * catalog names by image only, unpacked in-process (no Pod, no Job); a new catalog pushed to the
 * same tag upgrades it at the next poll, and a poll of the same digest reads nothing.
 *
 * What goes wrong keeps the last good catalog and says why, naming the image: the registry down,
 * an unknown tag or digest, a blob that fails its digest, no pull Secret / a wrong one / a
 * missing one / one of another type at a Basic-auth registry, and images that are not a catalog
 * or are hostile (a layer with `..`, an absolute path, a symlink out, a hard link out, a device).
 * A bundle image that cannot be pulled, is not a bundle, is hostile, or is another operator's
 * fails its InstallPlan, naming the image and the cause.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importedCorpus } from '../../support/corpus-import.js';
import type { KubeObject, ResourceType } from '../../../src/apis/meta.js';
import type { CatalogSource, ClusterServiceVersion, InstallPlan } from '../../../src/apis/operators.js';
import { CatalogImageLabel } from '../../../src/olm/image-kind.js';
import { credentialsFromDockerConfig } from '../../../src/oci/auth.js';
import { RegistryClient } from '../../../src/oci/client.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { gzipLayer, imageOf, type TarEntry } from '../../support/oci-images.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { eventually, freshNamespace } from '../support.js';
import { uniqueGroup } from './operator-support.js';
import {
  imageOnlyCatalog,
  pushCatalog,
  pushCatalogFolder,
  pushRaw,
  pushSampleBundles,
  sampleCatalog,
} from './image-catalogs.js';
import {
  catalogSource,
  catalogSourceWhen,
  client,
  create,
  eventsFor,
  get,
  list,
  mergePatch,
  namespaceWithOperatorGroup,
  readyCondition,
  Resources,
  startTestManager,
  subscription,
} from './support.js';
import { collectionPath } from '../../../src/kube/client.js';
import { parseReference } from '../../../src/oci/reference.js';

const missing = await registryAvailable();
if (missing) console.warn(`the catalog image tests are skipped: ${missing}`);

const Pod: ResourceType = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const Job: ResourceType = { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true };
const Secret: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
};

let manager: RunningManager;
let registry: TestRegistry;
let push: RegistryClient;
/** Sample bundle name → its image pinned by digest. */
let bundleImages: Map<string, string>;

beforeAll(async () => {
  if (missing) return;
  registry = await startRegistry({ kind: 'plain' });
  push = new RegistryClient();
  bundleImages = await pushSampleBundles(push, registry.host);
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
  await push?.close();
});

async function csvSucceeded(ns: string, csv: string) {
  try {
    return await eventually(
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
    const where = plans
      .map((p) => `${p.metadata.name}: ${p.status?.phase} ${p.status?.message ?? ''}`)
      .join('; ');
    throw new Error(`${(err as Error).message}; InstallPlans: ${where || 'none'}`, { cause: err });
  }
}

const isSample01 = (b: string) => b === 'bosun-sample.v0.1.0' || b === 'bosun-sample.v0.1.1';
const imageOf_ = (b: string) => bundleImages.get(b)!;

describe.skipIf(missing !== undefined)('a CatalogSource with spec.image', () => {
  it('becomes READY from the image, installs bundles named by image only with no Pod or Job, reads a poll of the same digest not at all, and upgrades when a new catalog is pushed to its tag', async () => {
    const config = await sampleCatalog();
    const group = uniqueGroup();
    const images = await pushSampleBundles(push, registry.host, group);
    const image = (b: string) => images.get(b)!;
    const tag = `${registry.host}/catalogs/samples:latest`;
    const first = await pushCatalog(push, tag, imageOnlyCatalog(config, image, isSample01, group));
    const ns = await namespaceWithOperatorGroup('image-catsrc');
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'images', {
        sourceType: 'grpc',
        image: tag,
        updateStrategy: { registryPoll: { interval: '1s' } },
      }),
    );
    const cs = await catalogSourceWhen(
      ns,
      'images',
      (c) => c?.status === 'True',
      'the image CatalogSource to be READY',
    );
    const pinned = `${registry.host}/catalogs/samples@${first}`;
    // OLM shows spec.image as the address; the digest read is in the Ready condition and an Event.
    expect(cs.status?.connectionState).toMatchObject({ lastObservedState: 'READY', address: tag });
    expect(readyCondition(cs)?.message).toBe(`catalog synced: 1 packages, 2 bundles from ${pinned}`);
    expect((await eventsFor(ns, 'images')).find((e) => e.reason === 'CatalogSynced')?.message).toContain(
      pinned,
    );
    const ref = { namespace: ns, name: 'images' };
    const held = manager.ctx.catalogs.get(ref)!;
    expect(held.digest).toBe(first);
    expect(held.config.bundles.every((b) => !b.properties.some((p) => p.type === 'olm.bundle.object'))).toBe(
      true,
    );

    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'sample', { name: 'bosun-sample', source: 'images', channel: 'stable' }),
    );
    await csvSucceeded(ns, 'bosun-sample.v0.1.1');
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    const lookups = plans.flatMap((p) => p.status?.bundleLookups ?? []);
    expect(lookups).toContainEqual(
      expect.objectContaining({
        identifier: 'bosun-sample.v0.1.1',
        path: image('bosun-sample.v0.1.1'),
        catalogSourceRef: expect.objectContaining({ namespace: ns, name: 'images' }),
      }),
    );

    // Polled every second: the same digest is neither pulled nor parsed, so the store keeps the very same content.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(manager.ctx.catalogs.get(ref)).toBe(held);
    expect((await eventsFor(ns, 'images')).filter((e) => e.reason === 'CatalogSynced')).toHaveLength(1);

    const second = await pushCatalog(
      push,
      tag,
      imageOnlyCatalog(config, image, () => true, group),
    );
    await catalogSourceWhen(
      ns,
      'images',
      (c) => c?.message?.endsWith(`@${second}`) === true,
      'the CatalogSource to read the new digest',
    );
    await csvSucceeded(ns, 'bosun-sample.v0.2.1');

    // Nothing ran in the cluster for catalogs or bundles: no Job anywhere in the namespace, and
    // every Pod there is the operator's own (its Deployment's ReplicaSet's).
    expect(await list<KubeObject>(Job, ns)).toEqual([]);
    const pods = await list<KubeObject & { metadata: { ownerReferences?: { kind: string }[] } }>(Pod, ns);
    for (const pod of pods) expect(pod.metadata.ownerReferences?.map((o) => o.kind)).toEqual(['ReplicaSet']);
    const allJobs = await client().request<{ items: unknown[] }>({ path: collectionPath(Job) });
    expect(allJobs.items).toEqual([]);
  });

  it('keeps the last good catalog and says why, naming the image, when the registry is down, a tag or digest is unknown, a blob fails its digest, or the image is not a catalog or is hostile', async () => {
    const config = await sampleCatalog();
    const repo = `${registry.host}/catalogs/failing`;
    const good = await pushCatalog(push, `${repo}:good`, imageOnlyCatalog(config, imageOf_, isSample01));
    const ns = await freshNamespace('image-failing');
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'c', {
        sourceType: 'grpc',
        image: `${repo}:good`,
        updateStrategy: { registryPoll: { interval: '1s' } },
      }),
    );
    await catalogSourceWhen(ns, 'c', (c) => c?.status === 'True', 'the CatalogSource to be READY');
    const ref = { namespace: ns, name: 'c' };
    expect(manager.ctx.catalogs.get(ref)?.digest).toBe(good);

    /** Points the CatalogSource at `image` and waits for it to fail with `reason`; the good catalog stays. */
    const failsWith = async (image: string, reason: string, ...says: (string | RegExp)[]) => {
      await mergePatch(Resources.CatalogSource, ns, 'c', { spec: { image } });
      const cs = await catalogSourceWhen(
        ns,
        'c',
        (c) =>
          c?.status === 'False' &&
          c.reason === reason &&
          c.message?.includes(image.replace(/:[^:/@]+$/, '')) === true,
        `${image} to fail with ${reason}`,
      );
      for (const s of says) expect(readyCondition(cs)?.message).toMatch(s);
      expect(cs.status?.connectionState).toMatchObject({
        lastObservedState: 'TRANSIENT_FAILURE',
        address: image,
      });
      expect(manager.ctx.catalogs.get(ref)?.digest).toBe(good);
      expect(manager.ctx.catalogs.health(ref)?.healthy).toBe(false);
      // The next good image is read again at once.
      await mergePatch(Resources.CatalogSource, ns, 'c', { spec: { image: `${repo}:good` } });
      await catalogSourceWhen(ns, 'c', (c) => c?.status === 'True', 'the CatalogSource to be READY again');
    };

    await failsWith(`${repo}:nope`, 'RegistryServerError', 'cannot resolve nope', /404|MANIFEST_UNKNOWN/);
    await failsWith(`${repo}@sha256:${'0'.repeat(64)}`, 'RegistryServerError', /404|MANIFEST_UNKNOWN/);
    await failsWith(
      `${registry.host}/nowhere/catalog:v1`,
      'RegistryServerError',
      /404|NAME_UNKNOWN|MANIFEST_UNKNOWN/,
    );

    // Not a catalog image: a bundle image, and an image with no OLM label at all.
    const bundle = imageOf_('bosun-sample.v0.1.0');
    await failsWith(
      bundle,
      'InvalidCatalog',
      'is a registry+v1 bundle image',
      'not a file-based catalog image',
    );
    await pushRaw(push, `${repo}:plain`, imageOf([gzipLayer([{ path: 'configs/x.json', data: '{}' }])]));
    await failsWith(`${repo}:plain`, 'InvalidCatalog', `has no label ${CatalogImageLabel.Configs}`);

    // Hostile layers in an image labelled as a catalog: each refused, naming the entry.
    const labels = { [CatalogImageLabel.Configs]: '/configs' };
    const hostile: [string, TarEntry[], string][] = [
      ['dotdot', [{ path: 'configs/../../etc/evil.json', data: '{}' }], 'configs/../../etc/evil.json'],
      ['absolute', [{ path: '/etc/evil.json', data: '{}' }], '/etc/evil.json'],
      [
        'symlink-out',
        [{ path: 'configs/link', type: 'symlink', linkpath: '../../../../etc' }],
        'configs/link',
      ],
      [
        'below-link',
        [
          { path: 'configs/in', type: 'symlink', linkpath: '/etc' },
          { path: 'configs/in/passwd', data: 'x' },
        ],
        'configs/in/passwd',
      ],
      ['hardlink-out', [{ path: 'configs/h', type: 'link', linkpath: '/etc/passwd' }], 'configs/h'],
      ['device', [{ path: 'configs/dev', type: 'char' }], 'configs/dev'],
    ];
    for (const [name, entries, entry] of hostile) {
      await pushRaw(push, `${repo}:${name}`, imageOf([gzipLayer(entries)], { labels }));
      await failsWith(`${repo}:${name}`, 'InvalidCatalog', entry);
    }
    // A configs label that leads out of the image.
    await pushRaw(
      push,
      `${repo}:label-out`,
      imageOf([gzipLayer([{ path: 'configs/x.json', data: '{}' }])], {
        labels: { [CatalogImageLabel.Configs]: '../../etc' },
      }),
    );
    await failsWith(`${repo}:label-out`, 'InvalidCatalog', 'does not name a folder inside the image');
    // A valid image whose FBC is not a valid catalog.
    await pushCatalog(
      push,
      `${repo}:invalid-fbc`,
      new Map([['catalog.json', Buffer.from('{"schema":"olm.channel","name":"c","package":"ghost"}')]]),
    );
    await failsWith(`${repo}:invalid-fbc`, 'InvalidCatalog', 'is not a valid file-based catalog', 'ghost');

    // A layer the registry serves other than its digest says (tampered with on disk).
    const tampered = imageOf(
      [gzipLayer([{ path: 'configs/x.json', data: '{"schema":"olm.package","name":"t"}' }])],
      { labels },
    );
    await pushRaw(push, `${repo}:tampered`, tampered);
    const { writeFile } = await import('node:fs/promises');
    const layer = tampered.layers[0]!;
    await writeFile(registry.blobPath(layer.descriptor.digest), Buffer.alloc(layer.data.length, 0x41));
    await failsWith(`${repo}:tampered`, 'RegistryServerError', /digest/);

    // The registry down: the poll fails, the catalog stays, and it is READY again once the registry is back.
    await registry.stop();
    try {
      const cs = await catalogSourceWhen(
        ns,
        'c',
        (c) => c?.status === 'False',
        'the poll to fail while the registry is down',
      );
      expect(readyCondition(cs)).toMatchObject({ reason: 'RegistryServerError' });
      expect(readyCondition(cs)?.message).toContain(`image ${repo}:good`);
      expect(readyCondition(cs)?.message).toContain(registry.host);
      expect(manager.ctx.catalogs.get(ref)?.digest).toBe(good);
    } finally {
      await registry.start();
    }
    await catalogSourceWhen(
      ns,
      'c',
      (c) => c?.status === 'True',
      'the CatalogSource to be READY once the registry is back',
    );
  });
});

/** A pull Secret as `kubectl create secret docker-registry` makes it. */
function pullSecret(
  name: string,
  host: string,
  username: string,
  password: string,
  type = 'kubernetes.io/dockerconfigjson',
) {
  const config = { auths: { [host]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } } };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    type,
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') },
  };
}

describe.skipIf(missing !== undefined)(
  'a CatalogSource with spec.image at a registry that asks for credentials',
  () => {
    it('is refused without a pull Secret, with a wrong, missing or mistyped one, naming it; with the right one it is READY and its bundle images are pulled with it too', async () => {
      const auth = await startRegistry({ kind: 'basic', username: 'alice', password: 's3cret' });
      const alice = new RegistryClient({
        credentials: credentialsFromDockerConfig(
          JSON.stringify({
            auths: { [auth.host]: { auth: Buffer.from('alice:s3cret').toString('base64') } },
          }),
          'test',
        ),
      });
      try {
        const group = uniqueGroup();
        const images = await pushSampleBundles(alice, auth.host, group);
        const tag = `${auth.host}/catalogs/private:v1`;
        await pushCatalog(
          alice,
          tag,
          imageOnlyCatalog(await sampleCatalog(), (b) => images.get(b)!, isSample01, group),
        );
        const ns = await namespaceWithOperatorGroup('image-auth');
        await create(Secret, ns, pullSecret('wrong', auth.host, 'alice', 'guess') as never);
        await create(Secret, ns, pullSecret('opaque', auth.host, 'alice', 's3cret', 'Opaque') as never);
        await create(Secret, ns, pullSecret('right', auth.host, 'alice', 's3cret') as never);
        await create(
          Resources.CatalogSource,
          ns,
          catalogSource(ns, 'private', {
            sourceType: 'grpc',
            image: tag,
            updateStrategy: { registryPoll: { interval: '1s' } },
          }),
        );
        const failing = async (secrets: string[], ...says: string[]) => {
          if (secrets.length) await mergePatch(Resources.CatalogSource, ns, 'private', { spec: { secrets } });
          const cs = await catalogSourceWhen(
            ns,
            'private',
            (c) => c?.status === 'False' && says.every((s) => c.message?.includes(s)),
            `the CatalogSource to fail with secrets ${JSON.stringify(secrets)}`,
          );
          expect(readyCondition(cs)).toMatchObject({ reason: 'RegistryServerError' });
          expect(readyCondition(cs)?.message).toMatch(new RegExp(`^image ${RegExp.escape(tag)}: `));
          expect(readyCondition(cs)?.message).not.toContain('s3cret');
        };
        await failing([], 'asks for credentials and none are configured');
        await failing(['wrong'], 'refused the credentials of alice');
        await failing(['absent'], `spec.secrets[0]: Secret ${ns}/absent does not exist`);
        await failing(['right', 'opaque'], 'spec.secrets[1]: ', 'type: is "Opaque"');
        expect(manager.ctx.catalogs.get({ namespace: ns, name: 'private' })).toBeUndefined();

        await mergePatch(Resources.CatalogSource, ns, 'private', { spec: { secrets: ['right'] } });
        await catalogSourceWhen(
          ns,
          'private',
          (c) => c?.status === 'True',
          'the CatalogSource to be READY with the right Secret',
        );
        await create(
          Resources.Subscription,
          ns,
          subscription(ns, 'sample', { name: 'bosun-sample', source: 'private', channel: 'stable' }),
        );
        await csvSucceeded(ns, 'bosun-sample.v0.1.1');
      } finally {
        await alice.close();
        await auth.stop();
      }
    });
  },
);

describe.skipIf(missing !== undefined)('a bundle named by an image that cannot be its manifests', () => {
  it("fails the InstallPlan, naming the image and the cause, when the image is missing, not a bundle, hostile or another operator's", async () => {
    const config = await sampleCatalog();
    await pushCatalog(push, `${registry.host}/catalogs/not-a-bundle:v1`, imageOnlyCatalog(config, imageOf_));
    const bundleLabels = { 'operators.operatorframework.io.bundle.package.v1': 'bosun-sample' };
    await pushRaw(
      push,
      `${registry.host}/bundles/hostile:dotdot`,
      imageOf([gzipLayer([{ path: 'manifests/../../x.yaml', data: 'a: b' }])], { labels: bundleLabels }),
    );
    await pushRaw(
      push,
      `${registry.host}/bundles/hostile:symlink`,
      imageOf(
        [
          gzipLayer([
            {
              path: 'manifests/csv.yaml',
              type: 'symlink',
              linkpath: '/var/run/secrets/kubernetes.io/serviceaccount/token',
            },
          ]),
        ],
        {
          labels: bundleLabels,
        },
      ),
    );
    const hostileDigest = async (tag: string) =>
      `${registry.host}/bundles/hostile@${(await push.resolve(parseReference(`${registry.host}/bundles/hostile:${tag}`))).digest}`;
    const cases: { name: string; image: string; reason: string; says: (string | RegExp)[] }[] = [
      {
        name: 'missing',
        image: `${registry.host}/bundles/bosun-sample@sha256:${'1'.repeat(64)}`,
        reason: 'BundleImagePullFailed',
        says: [/404|MANIFEST_UNKNOWN/],
      },
      {
        name: 'catalog',
        image: `${registry.host}/catalogs/not-a-bundle:v1`,
        reason: 'BundleImageInvalid',
        says: ['not a registry+v1 bundle image'],
      },
      {
        name: 'other',
        image: imageOf_('bosun-sample-dashboard.v0.1.0'),
        reason: 'BundleImageInvalid',
        says: [
          'holds bundle bosun-sample-dashboard.v0.1.0 of package bosun-sample-dashboard, but the catalog names it for bundle bosun-sample.v0.1.0',
        ],
      },
      {
        name: 'dotdot',
        image: await hostileDigest('dotdot'),
        reason: 'BundleImageInvalid',
        says: ['manifests/../../x.yaml', 'leaves the image root'],
      },
      {
        name: 'symlink',
        image: await hostileDigest('symlink'),
        reason: 'BundleImageInvalid',
        says: ['manifests/csv.yaml'],
      },
    ];
    await Promise.all(
      cases.map(async ({ name, image, reason, says }) => {
        const tag = `${registry.host}/catalogs/bad-bundle:${name}`;
        await pushCatalog(
          push,
          tag,
          imageOnlyCatalog(
            config,
            () => image,
            (b) => b === 'bosun-sample.v0.1.0',
          ),
        );
        const ns = await namespaceWithOperatorGroup(`bad-bundle-${name}`);
        await create(Resources.CatalogSource, ns, catalogSource(ns, 'c', { sourceType: 'grpc', image: tag }));
        await catalogSourceWhen(ns, 'c', (c) => c?.status === 'True', `catalog ${name} to be READY`);
        await create(
          Resources.Subscription,
          ns,
          subscription(ns, 'sample', { name: 'bosun-sample', source: 'c', channel: 'stable' }),
        );
        const ip = await eventually(
          `the InstallPlan of ${name} to fail`,
          async () =>
            (await list<InstallPlan>(Resources.InstallPlan, ns)).find((p) => p.status?.phase === 'Failed'),
          120_000,
        );
        const installed = ip.status?.conditions?.find((c) => c.type === 'Installed');
        expect(installed).toMatchObject({ status: 'False', reason: 'InstallCheckFailed' });
        expect(installed?.message).toMatch(/^bundle bosun-sample\.v0\.1\.0: image /);
        expect(installed?.message).toContain(image.replace(/:[^:/@]+$/, ''));
        for (const s of says) expect(installed?.message).toMatch(s);
        expect(ip.status?.bundleLookups).toEqual([
          expect.objectContaining({
            path: image,
            identifier: 'bosun-sample.v0.1.0',
            conditions: [expect.objectContaining({ type: 'BundleLookupFailed', status: 'True', reason })],
          }),
        ]);
        expect(
          await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, 'bosun-sample.v0.1.0'),
        ).toBeUndefined();
      }),
    );
  });
});

describe.skipIf(missing !== undefined)('the 2021 OperatorHub corpus as one catalog image', () => {
  it('is READY in the manager with every package and bundle the import wrote', async (ctx) => {
    const corpus = process.env.BOSUN_CORPUS_DIR;
    if (!corpus) {
      console.warn('the corpus catalog image test is skipped: BOSUN_CORPUS_DIR is not set');
      ctx.skip();
    }
    const { dir, ...imported } = await importedCorpus(corpus!);
    expect(imported.code, imported.stderr.slice(-2000)).toBe(0);
    const tag = `${registry.host}/catalogs/corpus:2021`;
    const { digest, local } = await pushCatalogFolder(push, dir, tag);
    const ns = await freshNamespace('image-corpus');
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'corpus', { sourceType: 'grpc', image: tag }),
    );
    const cs = await eventually(
      'the corpus catalog image to be READY',
      async () => {
        const got = await get<CatalogSource>(Resources.CatalogSource, ns, 'corpus');
        return readyCondition(got)?.status === 'True' ? got : undefined;
      },
      600_000,
    );
    expect(readyCondition(cs)?.message).toBe(
      `catalog synced: ${local.packages.length} packages, ${local.bundles.length} bundles from ${registry.host}/catalogs/corpus@${digest}`,
    );
    expect(manager.ctx.catalogs.get({ namespace: ns, name: 'corpus' })?.digest).toBe(digest);
  }, 900_000);
});
