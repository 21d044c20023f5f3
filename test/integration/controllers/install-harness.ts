/**
 * Runs the install-side controllers (InstallPlan, CSV, OperatorGroup, OperatorCondition) against
 * the run's control plane, the way the manager will: one ControllerContext with real informers,
 * one work queue per controller, and an in-memory catalog store filled with a test catalog.
 * Also builds that catalog: a small operator (a CRD, RBAC, a ConfigMap, a Service and one
 * Deployment) in two versions, the second replacing the first, encoded as FBC bundles with
 * their manifests inline (`olm.bundle.object`), as a published catalog carries them.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { inject } from 'vitest';
import { parse } from 'yaml';
import type { BundleDoc, DeclarativeConfig } from '../../../src/apis/fbc.js';
import type { KubeObject, ResourceType } from '../../../src/apis/meta.js';
import type {
  ClusterServiceVersion,
  InstallMode,
  InstallPlan,
  OperatorGroup,
} from '../../../src/apis/operators.js';
import { Resources } from '../../../src/apis/operators.js';
import type {
  CatalogHealth,
  CatalogRef,
  CatalogSnapshot,
  CatalogStore,
  Controller,
  ControllerContext,
  Informers,
} from '../../../src/controllers/context.js';
import { csvController } from '../../../src/controllers/csv.js';
import { installPlanController } from '../../../src/controllers/installplan.js';
import { operatorConditionController } from '../../../src/controllers/operatorcondition.js';
import { operatorGroupController } from '../../../src/controllers/operatorgroup.js';
import { Applier } from '../../../src/kube/apply.js';
import { collectionPath, KubeClient, objectPath } from '../../../src/kube/client.js';
import { systemClock } from '../../../src/kube/clock.js';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { installCrds } from '../../../src/kube/crds.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { EventRecorder } from '../../../src/kube/events.js';
import { createInformer, type Informer } from '../../../src/kube/informer.js';
import { WorkQueue } from '../../../src/kube/workqueue.js';
import { eventually } from '../support.js';

export const installControllers: Controller[] = [
  installPlanController,
  csvController,
  operatorGroupController,
  operatorConditionController,
];

/** Where the test catalog is "served" from. */
export const testCatalog: CatalogRef = { namespace: 'olm-test', name: 'testcat' };

const crdDir = join(import.meta.dirname, '../../../deploy/crds');

export function connect() {
  const { kubeConfig } = loadKubeConfig({ path: inject('kubeconfig') });
  const client = new KubeClient(kubeConfig);
  return { kubeConfig, client, applier: new Applier(kubeConfig, client) };
}

/** deploy/crds, as a user would apply them (idempotent). */
export async function installOperatorCrds(): Promise<void> {
  const { client, applier } = connect();
  try {
    const files = (await readdir(crdDir)).filter((f) => f.endsWith('.yaml')).sort();
    const crds = await Promise.all(
      files.map(async (f) => parse(await readFile(join(crdDir, f), 'utf8')) as KubeObject),
    );
    await installCrds(applier, client, crds, { timeoutMs: 120_000 });
  } finally {
    client.close();
  }
}

/** A catalog store holding snapshots in a map (the manager's own store is the real one). */
export class TestCatalogStore implements CatalogStore {
  private readonly snapshots = new Map<string, CatalogSnapshot>();
  private readonly listeners = new Set<(ref: CatalogRef) => void>();
  private key = (ref: CatalogRef) => `${ref.namespace}/${ref.name}`;

  get(ref: CatalogRef) {
    return this.snapshots.get(this.key(ref));
  }
  health(): CatalogHealth | undefined {
    return undefined;
  }
  visibleFrom(namespace: string) {
    return [...this.snapshots.values()].filter(
      (s) => s.ref.namespace === namespace || s.ref.namespace === testCatalog.namespace,
    );
  }
  findBundle(ref: CatalogRef, bundleName: string) {
    return this.get(ref)?.config.bundles.find((b) => b.name === bundleName);
  }
  set(snapshot: CatalogSnapshot) {
    this.snapshots.set(this.key(snapshot.ref), snapshot);
    for (const l of this.listeners) l(snapshot.ref);
  }
  setHealth() {}
  delete(ref: CatalogRef) {
    this.snapshots.delete(this.key(ref));
    for (const l of this.listeners) l(ref);
  }
  onChange(listener: (ref: CatalogRef) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

const deploymentResource: ResourceType = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
};
const crdResource: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};
const namespaceResource: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
};

export interface Harness {
  ctx: ControllerContext;
  catalogs: TestCatalogStore;
  /** Reconcile failures seen (retried ones included), for test diagnostics. */
  errors: unknown[];
  stop(): Promise<void>;
}

/** Starts informers and the given controllers; resolves once every cache is filled. */
export async function startInstallControllers(
  controllers: Controller[] = installControllers,
): Promise<Harness> {
  const { client, applier } = connect();
  const log = pino({ level: process.env.BOSUN_TEST_LOG ?? 'silent' });
  const informers: Informers = {
    catalogSources: createInformer(client, Resources.CatalogSource),
    subscriptions: createInformer(client, Resources.Subscription),
    installPlans: createInformer(client, Resources.InstallPlan),
    csvs: createInformer(client, Resources.ClusterServiceVersion),
    operatorGroups: createInformer(client, Resources.OperatorGroup),
    operatorConditions: createInformer(client, Resources.OperatorCondition),
    deployments: createInformer(client, deploymentResource, { labelSelector: 'olm.managed=true' }),
    crds: createInformer(client, crdResource),
    namespaces: createInformer(client, namespaceResource),
  };
  const catalogs = new TestCatalogStore();
  catalogs.set(testCatalogSnapshot());
  const ctx: ControllerContext = {
    client,
    applier,
    events: new EventRecorder({ client, component: 'bosun' }),
    log,
    clock: systemClock,
    informers,
    catalogs,
    globalNamespace: testCatalog.namespace,
    metrics: { reconciled() {}, resolution() {} },
  };
  const errors: unknown[] = [];
  const queues = controllers.map((c) => {
    const queue = new WorkQueue({
      reconcile: c.reconcile(ctx),
      concurrency: 2,
      onOutcome: (o) => {
        if (o.kind === 'retry' || o.kind === 'terminal') {
          errors.push(o.error);
          log.warn({ controller: c.name, key: o.key, err: o.error }, 'reconcile failed');
        }
      },
    });
    c.watch(ctx, (key) => queue.add(key));
    return queue;
  });
  const all = Object.values(informers) as Informer<KubeObject>[];
  for (const i of all) i.start();
  await Promise.all(all.map((i) => i.synced()));
  for (const q of queues) q.start();
  return {
    ctx,
    catalogs,
    errors,
    async stop() {
      await Promise.all(queues.map((q) => q.shutdown()));
      await Promise.all(all.map((i) => i.stop()));
      client.close();
    },
  };
}

// ---- the test operator ----

export const TestOperator = {
  package: 'bosun-testop',
  crd: 'widgets.testop.bosun.dev',
  deployment: 'testop-controller',
  serviceAccount: 'testop',
  v1: 'testop.v0.1.0',
  v2: 'testop.v0.2.0',
} as const;

export const defaultInstallModes: InstallMode[] = [
  { type: 'OwnNamespace', supported: true },
  { type: 'SingleNamespace', supported: true },
  { type: 'MultiNamespace', supported: false },
  { type: 'AllNamespaces', supported: true },
];

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: TestOperator.crd },
  spec: {
    group: 'testop.bosun.dev',
    names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

export function testCSV(version: '0.1.0' | '0.2.0', installModes = defaultInstallModes) {
  const name = `testop.v${version}`;
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name, annotations: { 'alm-examples': '[]' } },
    spec: {
      displayName: 'Bosun test operator',
      version,
      ...(version === '0.2.0' ? { replaces: TestOperator.v1 } : {}),
      installModes,
      customresourcedefinitions: {
        owned: [{ name: TestOperator.crd, version: 'v1alpha1', kind: 'Widget' }],
      },
      install: {
        strategy: 'deployment',
        spec: {
          permissions: [
            {
              serviceAccountName: TestOperator.serviceAccount,
              rules: [
                { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
                { apiGroups: ['testop.bosun.dev'], resources: ['widgets'], verbs: ['*'] },
              ],
            },
          ],
          clusterPermissions: [
            {
              serviceAccountName: TestOperator.serviceAccount,
              rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }],
            },
          ],
          deployments: [
            {
              name: TestOperator.deployment,
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: 'testop' } },
                template: {
                  metadata: { labels: { app: 'testop' } },
                  spec: {
                    serviceAccountName: TestOperator.serviceAccount,
                    containers: [{ name: 'manager', image: `registry.example/testop:${version}` }],
                  },
                },
              },
            },
          ],
        },
      },
    },
  };
}

const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'testop-config' },
  data: { level: 'info' },
};
const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'testop-metrics' },
  spec: { selector: { app: 'testop' }, ports: [{ name: 'metrics', port: 8080 }] },
};

/** An object as an `olm.bundle.object` property (base64 of its JSON). */
export const inline = (o: unknown) => ({
  type: 'olm.bundle.object',
  value: { data: Buffer.from(JSON.stringify(o)).toString('base64') },
});

export function testBundle(version: '0.1.0' | '0.2.0', csv: object = testCSV(version)): BundleDoc {
  return {
    schema: 'olm.bundle',
    package: TestOperator.package,
    name: `testop.v${version}`,
    image: '',
    properties: [
      { type: 'olm.package', value: { packageName: TestOperator.package, version } },
      inline(crd),
      inline(csv),
      inline(configMap),
      inline(service),
    ],
  };
}

export function testCatalogSnapshot(
  bundles: BundleDoc[] = [testBundle('0.1.0'), testBundle('0.2.0')],
  ref: CatalogRef = testCatalog,
): CatalogSnapshot {
  const config: DeclarativeConfig = {
    packages: [{ schema: 'olm.package', name: TestOperator.package, defaultChannel: 'stable' }],
    channels: [
      {
        schema: 'olm.channel',
        package: TestOperator.package,
        name: 'stable',
        entries: [{ name: TestOperator.v1 }, { name: TestOperator.v2, replaces: TestOperator.v1 }],
      },
    ],
    bundles,
    deprecations: [],
    others: [],
  };
  return { ref, priority: 0, config, digest: `test-${bundles.length}`, fetchedAt: Date.now() };
}

// ---- API helpers for the tests ----

export async function createOperatorGroup(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: OperatorGroup['spec'] = {},
): Promise<OperatorGroup> {
  return client.request<OperatorGroup>({
    method: 'POST',
    path: collectionPath(Resources.OperatorGroup, namespace),
    body: {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name, namespace },
      spec,
    },
  });
}

/** An InstallPlan as the Subscription controller writes one. */
export async function createInstallPlan(
  client: KubeClient,
  namespace: string,
  opts: {
    name?: string;
    csv?: string;
    approval?: 'Automatic' | 'Manual';
    approved?: boolean;
    owner?: KubeObject;
    /** The CatalogSource's name (in the test catalog's namespace). */
    source?: string;
  } = {},
): Promise<InstallPlan> {
  const approval = opts.approval ?? 'Automatic';
  const owner = opts.owner?.metadata;
  return client.request<InstallPlan>({
    method: 'POST',
    path: collectionPath(Resources.InstallPlan, namespace),
    body: {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      metadata: {
        name: opts.name ?? 'install-testop',
        namespace,
        ...(owner
          ? {
              ownerReferences: [
                {
                  apiVersion: opts.owner?.apiVersion,
                  kind: opts.owner?.kind,
                  name: owner.name,
                  uid: owner.uid,
                },
              ],
            }
          : {}),
      },
      spec: {
        clusterServiceVersionNames: [opts.csv ?? TestOperator.v1],
        approval,
        approved: opts.approved ?? approval === 'Automatic',
        source: opts.source ?? testCatalog.name,
        sourceNamespace: testCatalog.namespace,
      },
    },
  });
}

export async function get<T>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>({ path });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export const csvPath = (ns: string, name: string) => objectPath(Resources.ClusterServiceVersion, name, ns);
export const ipPath = (ns: string, name: string) => objectPath(Resources.InstallPlan, name, ns);
export const deploymentPath = (ns: string, name: string) =>
  `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;

/** Waits for the CSV to be in `phase` (and `reason`, when given) and returns it. */
export function csvInPhase(
  client: KubeClient,
  ns: string,
  name: string,
  phase: string,
  reason?: string,
  timeoutMs?: number,
): Promise<ClusterServiceVersion> {
  return eventually(
    `csv ${ns}/${name} in phase ${phase}${reason ? ` (${reason})` : ''}`,
    async () => {
      const csv = await get<ClusterServiceVersion>(client, csvPath(ns, name));
      if (csv?.status?.phase !== phase) return undefined;
      if (reason !== undefined && csv.status.reason !== reason) return undefined;
      return csv;
    },
    timeoutMs,
  );
}

/** Events recorded about an object. */
export async function eventsFor(client: KubeClient, ns: string, name: string) {
  const list = await client.request<{ items: { reason: string; message: string; type: string }[] }>({
    path: `/api/v1/namespaces/${ns}/events`,
    query: { fieldSelector: `involvedObject.name=${name}` },
  });
  return list.items;
}

/** Whether the API server would allow `serviceAccount` in `saNamespace` to do `verb` (a SubjectAccessReview). */
export async function canI(
  client: KubeClient,
  sa: { namespace: string; name: string },
  attrs: {
    verb: string;
    group?: string;
    resource: string;
    namespace?: string;
    name?: string;
    subresource?: string;
  },
): Promise<boolean> {
  const review = await client.request<{ status?: { allowed?: boolean } }>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${sa.namespace}:${sa.name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`],
        resourceAttributes: { group: '', ...attrs },
      },
    },
  });
  return review.status?.allowed === true;
}
