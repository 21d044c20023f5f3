/**
 * A ClusterExtension's progress deadline and automatic rollback on a running manager, from a
 * ClusterCatalog image pushed to a real registry: an upgrade whose Deployment never becomes
 * available (its pods ask for a node that does not exist) is reported as v1 reports a missed
 * deadline (`Progressing` False, `ProgressDeadlineExceeded`), rolled back to the version it
 * replaced with every custom resource kept, and held back from resolution until the extension's
 * spec changes, a rollback written into its status by someone else that names another
 * operator's CSV is refused; a manager stopped in the middle of the rollback takes it up when it
 * starts again, and a catalog that changes the failed version's bundle lets it be installed.
 * A first install that misses its deadline is reported the same way, with nothing
 * to roll back to.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { Condition } from '../../../src/apis/meta.js';
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../../../src/apis/olmv1.js';
import { type ClusterServiceVersion, type InstallPlan, Resources } from '../../../src/apis/operators.js';
import { RollbackAnnotations } from '../../../src/install/rollback.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { inline } from '../../support/operator-objects.js';
import { eventually } from '../support.js';
import { pushCatalog, SampleGroup } from '../controllers/image-catalogs.js';
import { uniqueGroup } from '../controllers/operator-support.js';
import {
  client,
  create,
  eventsFor,
  get,
  list,
  mergePatch,
  remove,
  startTestManager,
} from '../controllers/support.js';
import { extensionNamespace, extensionWhen } from './support.js';
import { collectionPath, objectPath } from '../../../src/kube/client.js';
import { testCSV } from '../controllers/install-harness.js';

const missing = await registryAvailable();
if (missing) console.warn(`the ClusterExtension rollback tests are skipped: ${missing}`);

const CC = V1Resources.ClusterCatalog;
const CE = V1Resources.ClusterExtension;

let manager: RunningManager;
let registry: TestRegistry;
let push: RegistryClient;
/** This file's own API group and package: no other test's CRD, Subscription or extension meets them. */
const group = uniqueGroup();
const pkg = `rb-sample-${randomBytes(3).toString('hex')}`;
const V1 = 'bosun-sample.v0.1.0';
const V2 = 'bosun-sample.v0.1.1';
const bundlesDir = join(import.meta.dirname, '../../../bundles/bosun-sample');

beforeAll(async () => {
  if (missing) return;
  registry = await startRegistry({ kind: 'plain' });
  push = new RegistryClient();
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
  await push?.close();
});

/**
 * The sample operator's 0.1.0 and 0.1.1 (bundles/bosun-sample; 0.1.1 replaces 0.1.0) as this
 * file's package, moved to its API group, their manifests inline; 0.1.1's (unless `fixed`, and with
 * `brokenFirst` 0.1.0's too) Deployment asks for a node that does not exist, so it never becomes
 * available.
 */
async function catalogFiles(brokenFirst = false, fixed = false): Promise<Map<string, Buffer>> {
  const bundle = async (version: string, broken: boolean): Promise<BundleDoc> => {
    const dir = join(bundlesDir, version, 'manifests');
    const objects: { kind?: string; spec?: CSVSpec }[] = [];
    for (const file of (await readdir(dir)).sort()) {
      const text = (await readFile(join(dir, file), 'utf8')).replaceAll(SampleGroup, group);
      objects.push(...parseAllDocuments(text).map((d) => d.toJS() as { kind?: string; spec?: CSVSpec }));
    }
    for (const obj of objects)
      if (broken && obj.kind === 'ClusterServiceVersion')
        for (const d of obj.spec!.install.spec.deployments)
          d.spec.template.spec.nodeSelector = { 'bosun.dev/no-such-node': 'true' };
    return {
      schema: 'olm.bundle',
      package: pkg,
      name: `bosun-sample.v${version}`,
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: pkg, version } },
        { type: 'olm.gvk', value: { group, kind: 'Widget', version: 'v1alpha1' } },
        ...objects.map(inline),
      ],
    };
  };
  const docs = [
    { schema: 'olm.package', name: pkg, defaultChannel: 'stable' },
    {
      schema: 'olm.channel',
      package: pkg,
      name: 'stable',
      entries: [{ name: V1 }, { name: V2, replaces: V1 }],
    },
    await bundle('0.1.0', brokenFirst),
    await bundle('0.1.1', !fixed),
  ];
  return new Map([['catalog.json', Buffer.from(docs.map((d) => JSON.stringify(d)).join('\n'))]]);
}

interface CSVSpec {
  install: { spec: { deployments: { spec: { template: { spec: Record<string, unknown> } } }[] } };
}

/**
 * A Serving ClusterCatalog of the catalog files; returns its name and the label that selects it
 * alone (this file's catalogs all offer the package, and v1 refuses a tie between catalogs).
 */
async function publish(brokenFirst = false): Promise<{ name: string; label: Record<string, string> }> {
  const name = `ce-rb-${randomBytes(3).toString('hex')}`;
  const catalogLabel = { 'bosun.dev/test': name };
  const ref = `${registry.host}/catalogs/${name}:latest`;
  await pushCatalog(push, ref, await catalogFiles(brokenFirst));
  await create<ClusterCatalog>(CC, '', {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name, labels: catalogLabel },
    spec: { source: { type: 'Image', image: { ref } } },
  });
  await eventually(`ClusterCatalog ${name} to be Serving`, async () => {
    const cc = await get<ClusterCatalog>(CC, '', name);
    return condition(cc, 'Serving')?.status === 'True' ? cc : undefined;
  });
  return { name, label: catalogLabel };
}

/** The ClusterCatalog `name` pointed at a new image of `files`, served once its content is. */
async function republish(name: string, files: Map<string, Buffer>): Promise<void> {
  const ref = `${registry.host}/catalogs/${name}:v2`;
  const digest = await pushCatalog(push, ref, files);
  await mergePatch(CC, '', name, { spec: { source: { image: { ref } } } });
  await eventually(`ClusterCatalog ${name} to serve ${digest}`, async () => {
    const cc = await get<ClusterCatalog>(CC, '', name);
    return JSON.stringify(cc?.status ?? {}).includes(digest) ? cc : undefined;
  });
}

function extension(
  name: string,
  namespace: string,
  catalogLabel: Record<string, string>,
  version: string,
  deadline: string,
): ClusterExtension {
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterExtension',
    metadata: { name, annotations: { [RollbackAnnotations.deadline]: deadline } },
    spec: {
      namespace,
      serviceAccount: { name: 'installer' },
      source: {
        sourceType: 'Catalog',
        catalog: { packageName: pkg, version, selector: { matchLabels: catalogLabel } },
      },
    },
  };
}

const condition = <C extends Pick<Condition, 'type'>>(
  o: { status?: { conditions?: C[] } } | undefined,
  type: string,
): C | undefined => o?.status?.conditions?.find((c) => c.type === type);

type WithRollback = ClusterExtension & {
  status?: { rollback?: Record<string, unknown>; heldBack?: { csv: string; generation: number }[] };
};

/** The extension with its rollback once `test` holds (30 s at most). */
const rollbackWhen = (name: string, test: (ext: WithRollback) => boolean, what: string, timeoutMs = 30_000) =>
  extensionWhen<WithRollback>(name, test, what, timeoutMs);

/** The sample operator's custom resources, in this file's API group. */
const widgets = { group, version: 'v1alpha1', kind: 'Widget', plural: 'widgets', namespaced: true };

describe.skipIf(missing !== undefined)('a ClusterExtension upgrade that misses its deadline', () => {
  it("is reported as v1 reports it, rolled back to the version it replaced keeping every custom resource, and not tried again until the spec changes; a rollback written into its status for another operator's CSV is refused", async () => {
    const { label } = await publish();
    const ns = await extensionNamespace('ce-rb');
    const name = `rb-${randomBytes(3).toString('hex')}`;
    await create(CE, '', extension(name, ns, label, '0.1.0', '6s'));
    await rollbackWhen(
      name,
      (e) => e.status?.install?.bundle.name === V1 && condition(e, 'Progressing')?.reason === 'Succeeded',
      'the extension to install 0.1.0',
    );
    // A custom resource of the operator's API, which the rollback must keep.
    await client().request({
      method: 'POST',
      path: collectionPath(widgets, ns),
      body: {
        apiVersion: `${group}/v1alpha1`,
        kind: 'Widget',
        metadata: { name: 'kept', namespace: ns },
        spec: { size: 2 },
      },
    });

    // Widened: 0.1.1 is resolved and installed, never becomes available, and is rolled back.
    await mergePatch(CE, '', name, { spec: { source: { catalog: { version: '>=0.1.0' } } } });
    const rolledBack = await rollbackWhen(
      name,
      (e) => e.status?.rollback?.phase === 'RolledBack',
      'the upgrade to 0.1.1 to be rolled back',
    );
    expect(rolledBack.status?.rollback).toMatchObject({
      from: V2,
      to: V1,
      reason: 'ProgressDeadlineExceeded',
      generation: rolledBack.metadata.generation,
    });
    expect(rolledBack.status?.rollback?.cause).toMatch(
      /^Revision has not rolled out for 6s\. Last status: ClusterServiceVersion bosun-sample\.v0\.1\.1 is /,
    );
    expect(rolledBack.status?.heldBack?.map((h) => [h.csv, h.generation])).toEqual([
      [V2, rolledBack.metadata.generation],
    ]);
    expect(rolledBack.status?.install?.bundle).toEqual({ name: V1, version: '0.1.0' });
    expect(condition(rolledBack, 'Installed')).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect(condition(rolledBack, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
    expect(condition(rolledBack, 'Progressing')?.message).toMatch(
      /^Revision has not rolled out for 6s\. Last status: .*; rolled back to bosun-sample\.v0\.1\.0, and bosun-sample\.v0\.1\.1 is held back until the extension's spec or the catalog's bundle of it changes$/,
    );
    // The previous CSV runs again, the failed one and its plan are gone, the custom resource stays.
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    expect(csvs.map((c) => [c.metadata.name, c.status?.phase])).toEqual([[V1, 'Succeeded']]);
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.some((p) => p.spec.clusterServiceVersionNames.includes(V2))).toBe(false);
    expect(await get(widgets, ns, 'kept')).toMatchObject({ spec: { size: 2 } });
    const reasons = (await eventsFor('default', name)).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['RollingBack', 'RolledBack']));

    // Held back: 0.1.1 is not resolved again while the spec and the catalog are unchanged.
    await new Promise((r) => setTimeout(r, 3_000));
    const plansLater = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plansLater.some((p) => p.spec.clusterServiceVersionNames.includes(V2))).toBe(false);
    expect((await get<WithRollback>(CE, '', name))?.status?.install?.bundle.name).toBe(V1);

    // A status written by someone else that names another operator's CSV as the one to remove
    // is refused, and that CSV stays (the status subresource is not the manager's alone).
    const victim = { ...testCSV('0.1.0'), metadata: { name: 'victim.v1', namespace: ns } };
    await create(Resources.ClusterServiceVersion, ns, victim);
    const crafted = { ...rolledBack.status?.rollback, phase: 'RollingBack', from: 'victim.v1', to: V1 };
    await client().request({
      method: 'PATCH',
      path: `${objectPath(CE, name)}/status`,
      contentType: 'application/merge-patch+json',
      body: { status: { rollback: crafted } },
    });

    // A new spec asks for it again: 0.1.1 gets a plan once more (and the crafted rollback is read).
    await mergePatch(CE, '', name, { spec: { source: { catalog: { version: '>=0.1.0 <1.0.0' } } } });
    await eventually('0.1.1 to be planned again after the spec changed', async () => {
      const again = await list<InstallPlan>(Resources.InstallPlan, ns);
      return again.some((p) => p.spec.clusterServiceVersionNames.includes(V2)) ? true : undefined;
    });
    const refused = await rollbackWhen(
      name,
      (e) => e.status?.rollback?.from === 'victim.v1' && e.status.rollback.phase === 'Refused',
      'the crafted rollback to be refused',
    );
    expect(refused.status?.rollback?.message).toBe(
      `status.rollback names ClusterServiceVersion ${ns}/victim.v1, which ClusterExtension ${name} does not own; nothing was changed`,
    );
    const kept = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, 'victim.v1');
    expect(kept?.metadata.deletionTimestamp).toBeUndefined();
    expect(kept?.metadata.uid).toBeDefined();
    await remove(CE, '', name);
  });

  it('a manager stopped in the middle of a rollback takes it up where it was when started again; the version is let go once the catalog changes its bundle', async () => {
    const catalog = await publish();
    const { label } = catalog;
    const ns = await extensionNamespace('ce-rb');
    const name = `rb-${randomBytes(3).toString('hex')}`;
    await create(CE, '', extension(name, ns, label, '0.1.0', '4s'));
    await rollbackWhen(
      name,
      (e) => e.status?.install?.bundle.name === V1 && condition(e, 'Progressing')?.reason === 'Succeeded',
      'the extension to install 0.1.0',
    );
    await mergePatch(CE, '', name, { spec: { source: { catalog: { version: '>=0.1.0' } } } });
    // Watched closely: a rollback takes a second or two here, and the manager stops inside it.
    let seen: WithRollback | undefined;
    const until = Date.now() + 30_000;
    while (!seen && Date.now() < until) {
      const e = await get<WithRollback>(CE, '', name);
      if (e?.status?.rollback?.phase === 'RollingBack') seen = e;
      else if (e?.status?.rollback)
        throw new Error(`the rollback was over before it was seen: ${JSON.stringify(e.status.rollback)}`);
      else await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen, 'the rollback to begin').toBeDefined();
    await manager.stop();
    manager = await startTestManager();
    const done = await rollbackWhen(
      name,
      (e) => e.status?.rollback?.phase === 'RolledBack',
      'the rollback to finish under the new manager',
    );
    // The same rollback, taken up: not one started anew.
    expect(done.status?.rollback?.startedAt).toBe(seen!.status?.rollback?.startedAt);
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    expect(csvs.map((c) => [c.metadata.name, c.status?.phase])).toEqual([[V1, 'Succeeded']]);
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.some((p) => p.spec.clusterServiceVersionNames.includes(V2))).toBe(false);
    expect(done.status?.install?.bundle.name).toBe(V1);

    // The catalog's bundle of 0.1.1 changes (fixed): the hold is lifted with the spec unchanged,
    // and the upgrade succeeds (a longer deadline now: the annotation leaves the generation alone).
    await mergePatch(CE, '', name, { metadata: { annotations: { [RollbackAnnotations.deadline]: '1m' } } });
    await republish(catalog.name, await catalogFiles(false, true));
    const upgraded = await rollbackWhen(
      name,
      (e) => e.status?.install?.bundle.name === V2 && condition(e, 'Progressing')?.reason === 'Succeeded',
      'the fixed 0.1.1 to be installed once the catalog changed it',
    );
    expect(upgraded.metadata.generation).toBe(done.metadata.generation);
    expect(upgraded.status?.heldBack).toBeUndefined();
    await remove(CE, '', name);
  });

  it('a first install past its deadline is reported ProgressDeadlineExceeded, with nothing rolled back', async () => {
    const { label } = await publish(true);
    const ns = await extensionNamespace('ce-rb');
    const name = `rb-${randomBytes(3).toString('hex')}`;
    await create(CE, '', extension(name, ns, label, '0.1.0', '4s'));
    const late = await rollbackWhen(
      name,
      (e) => condition(e, 'Progressing')?.reason === 'ProgressDeadlineExceeded',
      'the install to pass its deadline',
    );
    expect(condition(late, 'Progressing')).toMatchObject({ status: 'False' });
    expect(condition(late, 'Progressing')?.message).toMatch(
      /^Revision has not rolled out for 4s\. Last status: ClusterServiceVersion bosun-sample\.v0\.1\.0 is \w+/,
    );
    expect(condition(late, 'Installed')).toMatchObject({ status: 'False' });
    expect(late.status?.rollback).toBeUndefined();
    await remove(CE, '', name);
  });
});
