/**
 * OLM v1's ClusterExtension on a running manager, from ClusterCatalogs whose images are pushed to
 * a real registry (Debian's docker-registry on 127.0.0.1) and whose bundles are images too: the
 * extension resolves with v1's rules, installs through the engine Subscriptions use (InstallPlan,
 * CSV, the operator's Deployment), and reports `Installed` and `Progressing` in v1's words. A
 * pinned version stays where it is when a newer bundle is published; widened to a range, it
 * upgrades along the catalog's edges, one successor at a time as v1 does, once the operator's
 * OperatorCondition lets it. The operators a bundle needs are installed first, each by a
 * ClusterExtension generated for it. A SelfCertified downgrade that would drop a CRD field is refused by
 * the CRD safety check and retried, and goes through once enforcement is None. A package a
 * Subscription manages is refused, naming both. Deleting the extension uninstalls the operator.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../../src/apis/meta.js';
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../../../src/apis/olmv1.js';
import {
  type ClusterServiceVersion,
  type InstallPlan,
  type OperatorGroup,
  type Subscription,
  Resources,
} from '../../../src/apis/operators.js';
import { Builtin } from '../../../src/kube/resources.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { eventually, freshNamespace } from '../support.js';
import {
  imageOnlyCatalog,
  pushCatalog,
  pushSampleBundles,
  sampleCatalog,
} from '../controllers/image-catalogs.js';
import { uniqueGroup } from '../controllers/operator-support.js';
import {
  create,
  get,
  list,
  mergePatch,
  remove,
  subscription,
  startTestManager,
} from '../controllers/support.js';
import { extensionNamespace, extensionWhen } from './support.js';

const missing = await registryAvailable();
if (missing) console.warn(`the ClusterExtension tests are skipped: ${missing}`);

const CC = V1Resources.ClusterCatalog;
const CE = V1Resources.ClusterExtension;

let manager: RunningManager;
let registry: TestRegistry;
let push: RegistryClient;
/** This file's own copy of the sample API group: its CRDs are no other test's. */
const group = uniqueGroup();
let bundleImages: Map<string, string>;
/** Labels this file's ClusterCatalogs carry, so its extensions resolve from them only. */
const catalogLabel = { 'bosun.dev/test': `ce-${randomBytes(3).toString('hex')}` };

beforeAll(async () => {
  if (missing) return;
  registry = await startRegistry({ kind: 'plain' });
  push = new RegistryClient();
  bundleImages = await pushSampleBundles(push, registry.host, group);
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
  await push?.close();
});

/** A ClusterCatalog of the sample bundles `keep` keeps, each named by its image; Serving before it returns. */
async function publish(keep: (bundle: string) => boolean, priority = 0): Promise<string> {
  const name = `ce-samples-${randomBytes(3).toString('hex')}`;
  const files = imageOnlyCatalog(await sampleCatalog(), (b) => bundleImages.get(b)!, keep, group);
  const ref = `${registry.host}/catalogs/${name}:latest`;
  await pushCatalog(push, ref, files);
  await create<ClusterCatalog>(CC, '', {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name, labels: catalogLabel },
    spec: { source: { type: 'Image', image: { ref } }, priority },
  });
  await eventually(`ClusterCatalog ${name} to be Serving`, async () => {
    const cc = await get<ClusterCatalog>(CC, '', name);
    return condition(cc, 'Serving')?.status === 'True' ? cc : undefined;
  });
  return name;
}

function extension(name: string, namespace: string, version?: string): ClusterExtension {
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterExtension',
    metadata: { name },
    spec: {
      namespace,
      serviceAccount: { name: 'installer' },
      source: {
        sourceType: 'Catalog',
        catalog: {
          packageName: 'bosun-sample',
          ...(version ? { version } : {}),
          selector: { matchLabels: catalogLabel },
        },
      },
    },
  };
}

const condition = <C extends Pick<Condition, 'type'>>(
  o: { status?: { conditions?: C[] } } | undefined,
  type: string,
): C | undefined => o?.status?.conditions?.find((c) => c.type === type);

const installedAt = (version: string) => (ext: ClusterExtension) =>
  ext.status?.install?.bundle.version === version &&
  condition(ext, 'Installed')?.status === 'True' &&
  condition(ext, 'Progressing')?.reason === 'Succeeded';

describe.skipIf(missing !== undefined)('a ClusterExtension', () => {
  it('installs the bundle v1 resolves, stays on a pinned version when a newer one is published, upgrades along the edges once widened, and is uninstalled with the extension', async () => {
    const first = await publish((b) => b === 'bosun-sample.v0.1.0' || b === 'bosun-sample.v0.1.1');
    const ns = await extensionNamespace('ce');
    const name = `sample-${randomBytes(3).toString('hex')}`;
    await create(CE, '', extension(name, ns, '0.1.0'));

    const installed = await extensionWhen(
      name,
      installedAt('0.1.0'),
      'the extension to be Installed at 0.1.0',
    );
    expect(installed.status?.install).toEqual({ bundle: { name: 'bosun-sample.v0.1.0', version: '0.1.0' } });
    expect(condition(installed, 'Installed')).toMatchObject({
      reason: 'Succeeded',
      message: `Installed bundle ${bundleImages.get('bosun-sample.v0.1.0')} successfully`,
    });
    expect(condition(installed, 'Progressing')).toMatchObject({
      status: 'True',
      message: 'desired state reached',
    });
    for (const type of ['Deprecated', 'PackageDeprecated', 'ChannelDeprecated', 'BundleDeprecated'])
      expect(condition(installed, type)).toMatchObject({
        status: 'False',
        reason: 'Deprecated',
        message: '',
      });
    // Installed by the engine: the CSV has succeeded, owned by the extension, and so has its Deployment.
    const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, 'bosun-sample.v0.1.0');
    expect(csv?.status?.phase).toBe('Succeeded');
    expect(csv?.metadata.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: 'ClusterExtension', name, uid: installed.metadata.uid }),
    );
    // The group the extension made: every namespace, installed as the extension's ServiceAccount.
    const groups = await list<OperatorGroup>(Resources.OperatorGroup, ns);
    expect(groups.map((g) => g.spec)).toEqual([
      { serviceAccountName: 'installer', upgradeStrategy: 'Default' },
    ]);
    const plan = (await list<InstallPlan>(Resources.InstallPlan, ns))[0];
    expect(plan?.status?.attenuatedServiceAccountRef).toMatchObject({ name: 'installer', namespace: ns });

    // A Subscription to the package the extension manages is refused, naming both.
    const subNs = await freshNamespace('ce-sub');
    await create(
      Resources.Subscription,
      subNs,
      subscription(subNs, 'sample', { name: 'bosun-sample', source: 'none', channel: 'stable' }),
    );
    const refusedSub = await eventually('the Subscription to be refused', async () => {
      const sub = await get<Subscription>(Resources.Subscription, subNs, 'sample');
      return condition(sub, 'ResolutionFailed')?.status === 'True' ? sub : undefined;
    });
    expect(condition(refusedSub, 'ResolutionFailed')).toMatchObject({
      reason: 'ConstraintsNotSatisfiable',
      message: `package "bosun-sample" is managed by ClusterExtension ${name}; Subscription ${subNs}/sample cannot install it too (an operator is owned by one front end: delete one of them)`,
    });
    expect(await list(Resources.InstallPlan, subNs)).toHaveLength(0);
    await remove(Resources.Subscription, subNs, 'sample');

    // A newer version published (in a catalog of higher priority: both offer 0.1.x, and v1
    // refuses a tie): the pinned extension stays, and plans nothing.
    const second = await publish(() => true, 1);
    await new Promise((r) => setTimeout(r, 3_000));
    const pinned = await get<ClusterExtension>(CE, '', name);
    expect(pinned?.status?.install?.bundle.version).toBe('0.1.0');
    expect(await list<InstallPlan>(Resources.InstallPlan, ns)).toHaveLength(1);

    // The operator says it is not upgradeable (its OperatorCondition): widened, the extension
    // plans the upgrade, which waits, 0.1.0 staying installed, until the operator clears it.
    const gate = (status: 'True' | 'False') => ({
      spec: {
        conditions: [
          {
            type: 'Upgradeable',
            status,
            reason: status === 'False' ? 'Migrating' : 'Ready',
            message: status === 'False' ? 'a migration is running' : 'done',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      },
    });
    await eventually('the OperatorCondition of 0.1.0', () =>
      get(Resources.OperatorCondition, ns, 'bosun-sample.v0.1.0'),
    );
    await mergePatch(Resources.OperatorCondition, ns, 'bosun-sample.v0.1.0', gate('False'));
    // Widened: 0.1.0's successor is 0.1.1 (replaces), whose highest successor is 0.2.1 (it
    // replaces 0.1.1 and skips 0.2.0): two upgrades, each its own InstallPlan.
    await mergePatch(CE, '', name, { spec: { source: { catalog: { version: '>=0.1.0' } } } });
    const held = await extensionWhen(
      name,
      (ext) =>
        (condition(ext, 'Progressing')?.message ?? '').includes('not upgradeable: a migration is running'),
      'the upgrade to be held by the operator',
    );
    expect(condition(held, 'Progressing')).toMatchObject({ status: 'True', reason: 'Retrying' });
    expect(held.status?.install?.bundle.version).toBe('0.1.0');
    expect(condition(held, 'Installed')).toMatchObject({ status: 'True' });
    await mergePatch(Resources.OperatorCondition, ns, 'bosun-sample.v0.1.0', gate('True'));
    const upgraded = await extensionWhen(
      name,
      installedAt('0.2.1'),
      'the extension to upgrade to 0.2.1',
      120_000,
    );
    expect(upgraded.status?.install?.bundle.name).toBe('bosun-sample.v0.2.1');
    const csvs = await eventually('the older CSVs to be retired', async () => {
      const all = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
      return all.length === 1 ? all : undefined;
    });
    expect(csvs.map((c) => [c.metadata.name, c.status?.phase])).toEqual([
      ['bosun-sample.v0.2.1', 'Succeeded'],
    ]);
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.map((p) => p.spec.clusterServiceVersionNames[0]).sort()).toEqual([
      'bosun-sample.v0.1.0',
      'bosun-sample.v0.1.1',
      'bosun-sample.v0.2.1',
    ]);

    // SelfCertified allows a downgrade, which v1 would make; 0.1.0's CRD drops 0.2's field
    // `color`, so the CRD safety check (Strict by default) refuses it, and the extension retries.
    await mergePatch(CE, '', name, {
      spec: { source: { catalog: { version: '0.1.0', upgradeConstraintPolicy: 'SelfCertified' } } },
    });
    const unsafe = await extensionWhen(
      name,
      (ext) => (condition(ext, 'Progressing')?.message ?? '').includes('would not be safe'),
      'the downgrade to be refused as unsafe',
    );
    expect(condition(unsafe, 'Progressing')).toMatchObject({ status: 'True', reason: 'Retrying' });
    expect(condition(unsafe, 'Progressing')?.message).toContain(
      'for resolved bundle "bosun-sample.v0.1.0" with version "0.1.0"',
    );
    expect(unsafe.status?.install?.bundle.version).toBe('0.2.1');
    // With enforcement None, the retry made on the spec's change goes through.
    await mergePatch(CE, '', name, {
      spec: { install: { preflight: { crdUpgradeSafety: { enforcement: 'None' } } } },
    });
    await extensionWhen(name, installedAt('0.1.0'), 'the downgrade to go through without the check');

    // Deleted: the garbage collector takes the plans, the group and the CSV (and with it the operator).
    await remove(CE, '', name);
    await eventually('the extension’s CSV, plans and OperatorGroup to be collected', async () => {
      const left = [
        ...(await list(Resources.ClusterServiceVersion, ns)),
        ...(await list(Resources.InstallPlan, ns)),
        ...(await list(Resources.OperatorGroup, ns)),
      ];
      return left.length === 0 ? true : undefined;
    });
    await remove(CC, '', first);
    await remove(CC, '', second);
  });

  it('installs the operators its bundle needs first, each as a ClusterExtension generated for it', async () => {
    const catalog = await publish(() => true);
    const ns = await extensionNamespace('ce');
    const name = `dashboard-${randomBytes(3).toString('hex')}`;
    await create(CE, '', {
      ...extension(name, ns),
      spec: {
        ...extension(name, ns).spec!,
        source: {
          sourceType: 'Catalog',
          catalog: { packageName: 'bosun-sample-dashboard', selector: { matchLabels: catalogLabel } },
        },
      },
    });
    // 0.2.0 requires package bosun-sample >=0.2.0 <1.0.0 (and the Widget API, which that provides).
    const dashboard = await extensionWhen(
      name,
      installedAt('0.2.0'),
      'the dashboard to be Installed',
      120_000,
    );
    expect(dashboard.status?.install?.bundle.name).toBe('bosun-sample-dashboard.v0.2.0');
    const generated = (await list<ClusterExtension>(CE, '')).filter(
      (e) => e.metadata.annotations?.['olm.operatorframework.io/generated-by'] === name,
    );
    expect(
      generated.map((e) => [
        e.spec?.namespace,
        e.spec?.source.catalog?.packageName,
        e.spec?.source.catalog?.version,
      ]),
    ).toEqual([[ns, 'bosun-sample', '>=0.2.0 <1.0.0']]);
    expect(generated[0]?.status?.install?.bundle).toEqual({ name: 'bosun-sample.v0.2.1', version: '0.2.1' });
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    expect(csvs.map((c) => [c.metadata.name, c.status?.phase]).sort()).toEqual([
      ['bosun-sample-dashboard.v0.2.0', 'Succeeded'],
      ['bosun-sample.v0.2.1', 'Succeeded'],
    ]);
    await remove(CE, '', name);
    await remove(CE, '', generated[0]!.metadata.name!);
    await eventually('both operators to be uninstalled', async () =>
      (await list(Resources.ClusterServiceVersion, ns)).length === 0 ? true : undefined,
    );
    await remove(CC, '', catalog);
  });

  it('installs nothing its ServiceAccount may not install, and says what the account lacks; a namespace’s own OperatorGroup scopes it', async () => {
    // 0.2.1: the test before left the CRD at 0.2's schema, which 0.1's would drop a field of.
    const catalog = await publish((b) => b === 'bosun-sample.v0.2.1');
    // An account bound to nothing: the install is checked against it before anything is applied.
    const bare = await freshNamespace('ce-bare');
    await create(Builtin.ServiceAccount, bare, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'installer', namespace: bare },
    });
    const refusedName = `bare-${randomBytes(3).toString('hex')}`;
    await create(CE, '', extension(refusedName, bare));
    const refused = await extensionWhen(
      refusedName,
      (ext) => (condition(ext, 'Progressing')?.message ?? '').includes('lacks'),
      'the install to be refused for the account',
    );
    expect(condition(refused, 'Progressing')?.message).toContain(
      `installs in this namespace are scoped to ServiceAccount ${bare}/installer (OperatorGroup ${refusedName}), which lacks`,
    );
    expect(condition(refused, 'Installed')).toMatchObject({
      status: 'False',
      message: 'No bundle installed',
    });
    expect(await list(Resources.ClusterServiceVersion, bare)).toHaveLength(0);
    await remove(CE, '', refusedName);

    // A namespace with an OperatorGroup of its own (OwnNamespace): the extension installs into it.
    const own = await freshNamespace('ce-own');
    await create(Resources.OperatorGroup, own, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'own', namespace: own },
      spec: { targetNamespaces: [own] },
    });
    const ownName = `own-${randomBytes(3).toString('hex')}`;
    await create(CE, '', extension(ownName, own));
    await extensionWhen(ownName, installedAt('0.2.1'), 'the extension to be Installed in its own namespace');
    const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, own, 'bosun-sample.v0.2.1');
    expect(csv?.metadata.annotations?.['olm.targetNamespaces']).toBe(own);
    expect((await list<OperatorGroup>(Resources.OperatorGroup, own)).map((g) => g.metadata.name)).toEqual([
      'own',
    ]);
    await remove(CE, '', ownName);
    await eventually('the operator to be uninstalled', async () =>
      (await list(Resources.ClusterServiceVersion, own)).length === 0 ? true : undefined,
    );
    await remove(CC, '', catalog);
  });

  it('is refused, naming both owners, for a package a Subscription manages', async () => {
    const catalog = await publish((b) => b === 'bosun-sample.v0.1.0');
    const subNs = await freshNamespace('ce-sub');
    await create(
      Resources.Subscription,
      subNs,
      subscription(subNs, 'sample', {
        name: 'bosun-sample',
        source: 'none',
        sourceNamespace: subNs,
        channel: 'stable',
      }),
    );
    const ns = await freshNamespace('ce');
    const name = `sample-${randomBytes(3).toString('hex')}`;
    await create(CE, '', extension(name, ns));
    const refused = await extensionWhen(
      name,
      (ext) => condition(ext, 'Progressing')?.reason === 'Blocked',
      'the extension to be Blocked',
    );
    expect(condition(refused, 'Progressing')).toMatchObject({ status: 'False' });
    expect(condition(refused, 'Progressing')?.message).toContain(`Subscription ${subNs}/sample`);
    expect(condition(refused, 'Progressing')?.message).toContain(`ClusterExtension ${name}`);
    expect(condition(refused, 'Installed')).toMatchObject({
      status: 'False',
      message: 'No bundle installed',
    });
    expect(await list(Resources.InstallPlan, ns)).toHaveLength(0);
    await remove(CE, '', name);
    await remove(Resources.Subscription, subNs, 'sample');
    await remove(CC, '', catalog);
  });
});
