/**
 * A ClusterExtension's automatic rollback on a real operator of the OperatorHub corpus
 * (BOSUN_CORPUS_DIR): akka-cluster-operator, imported from its package-manifest folder as Bosun
 * imports it (manifests inline), pushed as a ClusterCatalog image to a real registry, installed
 * at 0.2.3 (AllNamespaces, as v1 installs) and widened to its successor 1.0.0 with an upgrade
 * deadline of 1ms (the annotation: the CRD's minimum is 10 minutes), so that the upgrade counts as
 * failed before it can succeed, as test/integration/controllers/corpus-rollback.test.ts does for
 * Subscriptions. Bosun must go back to 0.2.3 with the CRD (same uid) and a custom resource made
 * from the operator's own alm-examples untouched, leave 0.2.3 alone Succeeded, and not try 1.0.0
 * again. The package's two versions ship the same CRD, so whatever another test left of it does
 * not change what this one checks. It prints how long the rollback took, from the upgrade asked
 * for.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterCatalog, ClusterExtension } from '../../../src/apis/olmv1.js';
import { V1Resources } from '../../../src/apis/olmv1.js';
import { type ClusterServiceVersion, type InstallPlan, Resources } from '../../../src/apis/operators.js';
import { importOperatorsDir } from '../../../src/catalog/import.js';
import { RollbackAnnotations } from '../../../src/install/rollback.js';
import { collectionPath } from '../../../src/kube/client.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { eventually, freshNamespace } from '../support.js';
import { pushCatalog } from '../controllers/image-catalogs.js';
import {
  client,
  clusterAdminServiceAccount,
  create,
  get,
  list,
  mergePatch,
  remove,
  startTestManager,
} from '../controllers/support.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
const noRegistry = await registryAvailable();
const skip = !corpus ? 'set BOSUN_CORPUS_DIR to the OperatorHub corpus to run it' : noRegistry;
if (skip) console.warn(`the ClusterExtension corpus rollback test is skipped: ${skip}`);

const CC = V1Resources.ClusterCatalog;
const CE = V1Resources.ClusterExtension;
const pkg = 'akka-cluster-operator';
const Older = 'akka-cluster-operator.v0.2.3';
const Newer = 'akka-cluster-operator.v1.0.0';
const Crd = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

let manager: RunningManager;
let registry: TestRegistry;
let push: RegistryClient;

beforeAll(async () => {
  if (skip) return;
  registry = await startRegistry({ kind: 'plain' });
  push = new RegistryClient();
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
  await push?.close();
});

type WithRollback = ClusterExtension & {
  status?: { rollback?: Record<string, unknown>; heldBack?: { csv: string }[] };
};

describe.skipIf(skip !== undefined)('a ClusterExtension of a real operator', () => {
  it('rolls back an upgrade that missed its deadline to the version it replaced, keeping the CRD and a custom resource', async () => {
    // The package alone, imported as `bosun catalog import` imports the corpus.
    const dir = await mkdtemp(join(tmpdir(), 'ce-corpus-'));
    await cp(join(corpus!, pkg), join(dir, pkg), { recursive: true });
    const imported = await importOperatorsDir(dir);
    await rm(dir, { recursive: true, force: true });
    expect(imported.errors).toEqual([]);
    const { config } = imported;
    const text = [...config.packages, ...config.channels, ...config.bundles, ...config.deprecations]
      .map((d) => JSON.stringify(d))
      .join('\n');
    const name = `ce-corpus-${randomBytes(3).toString('hex')}`;
    const label = { 'bosun.dev/test': name };
    const ref = `${registry.host}/catalogs/${name}:latest`;
    await pushCatalog(push, ref, new Map([['catalog.json', Buffer.from(text)]]));
    await create<ClusterCatalog>(CC, '', {
      apiVersion: 'olm.operatorframework.io/v1',
      kind: 'ClusterCatalog',
      metadata: { name, labels: label },
      spec: { source: { type: 'Image', image: { ref } } },
    });
    await eventually(`ClusterCatalog ${name} to be Serving`, async () => {
      const cc = await get<ClusterCatalog>(CC, '', name);
      return cc?.status?.conditions?.some((c) => c.type === 'Serving' && c.status === 'True')
        ? cc
        : undefined;
    });

    const ns = await freshNamespace('ce-corpus');
    await clusterAdminServiceAccount(ns, 'installer');
    await create<ClusterExtension>(CE, '', {
      apiVersion: 'olm.operatorframework.io/v1',
      kind: 'ClusterExtension',
      metadata: { name, annotations: { [RollbackAnnotations.deadline]: '1ms' } },
      spec: {
        namespace: ns,
        serviceAccount: { name: 'installer' },
        source: {
          sourceType: 'Catalog',
          catalog: { packageName: pkg, version: '0.2.3', selector: { matchLabels: label } },
        },
      },
    });
    await eventually(
      `${Older} to be installed`,
      async () => {
        const e = await get<WithRollback>(CE, '', name);
        const progressing = e?.status?.conditions?.find((c) => c.type === 'Progressing');
        return e?.status?.install?.bundle.name === Older && progressing?.reason === 'Succeeded'
          ? e
          : undefined;
      },
      120_000,
    );

    // A custom resource from the operator's own examples, and the CRD it lives in.
    const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, Older);
    const example = (
      JSON.parse(csv?.metadata.annotations?.['alm-examples'] ?? '[]') as {
        apiVersion: string;
        kind: string;
        metadata: { name: string };
      }[]
    )[0]!;
    const owned = csv!.spec.customresourcedefinitions!.owned!.find((o) => o.kind === example.kind)!;
    const [plural, ...groupParts] = owned.name.split('.');
    const resource = {
      group: groupParts.join('.'),
      version: example.apiVersion.split('/')[1]!,
      kind: example.kind,
      plural: plural!,
      namespaced: true,
    };
    await client().request({
      method: 'POST',
      path: collectionPath(resource, ns),
      body: { ...example, metadata: { ...example.metadata, namespace: ns } },
    });
    const crdBefore = await get(Crd, '', owned.name);
    expect(crdBefore?.metadata?.uid).toBeDefined();

    const asked = Date.now();
    await mergePatch(CE, '', name, { spec: { source: { catalog: { version: '>=0.2.3' } } } });
    const done = await eventually(
      'the upgrade to 1.0.0 to be rolled back',
      async () => {
        const e = await get<WithRollback>(CE, '', name);
        return e?.status?.rollback?.phase === 'RolledBack' ? e : undefined;
      },
      120_000,
    );
    console.log(
      `${pkg}: ${Newer} rolled back to ${Older} ${Date.now() - asked} ms after the upgrade was asked for`,
    );
    expect(done.status?.rollback).toMatchObject({
      from: Newer,
      to: Older,
      reason: 'ProgressDeadlineExceeded',
    });
    expect(done.status?.heldBack?.map((h) => h.csv)).toEqual([Newer]);
    expect(done.status?.install?.bundle.name).toBe(Older);
    expect(done.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    expect(csvs.map((c) => [c.metadata.name, c.status?.phase])).toEqual([[Older, 'Succeeded']]);
    expect((await get(Crd, '', owned.name))?.metadata?.uid).toBe(crdBefore?.metadata?.uid);
    expect(await get(resource, ns, example.metadata.name)).toBeDefined();

    // Held back: 1.0.0 is not planned again while the spec and the catalog are unchanged.
    await new Promise((r) => setTimeout(r, 2_000));
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.some((p) => p.spec.clusterServiceVersionNames.includes(Newer))).toBe(false);

    await remove(CE, '', name);
    await remove(CC, '', name);
  });
});
