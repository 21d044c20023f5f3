/**
 * Runs the install-side controllers (InstallPlan, CSV, OperatorGroup, OperatorCondition) against
 * the run's control plane in Bosun's own manager, with a test catalog put straight into its
 * in-memory catalog store.
 * Also builds that catalog: a small operator (a CRD, RBAC, a ConfigMap, a Service and one
 * Deployment) in two versions, the second replacing the first, encoded as FBC bundles with
 * their manifests inline (`olm.bundle.object`), as a published catalog carries them.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import { inject } from 'vitest';
import { parse } from 'yaml';
import type { BundleDoc, DeclarativeConfig } from '../../../src/apis/fbc.js';
import type { KubeObject } from '../../../src/apis/meta.js';
import type {
  ClusterServiceVersion,
  InstallMode,
  InstallPlan,
  OperatorGroup,
} from '../../../src/apis/operators.js';
import { Resources } from '../../../src/apis/operators.js';
import type { CatalogRef, CatalogSnapshot, CatalogStore } from '../../../src/catalog/content/store.js';
import type { Controller, ControllerContext } from '../../../src/controllers/context.js';
import { csvController } from '../../../src/controllers/csv.js';
import { installPlanController } from '../../../src/controllers/installplan.js';
import { operatorConditionController } from '../../../src/controllers/operatorcondition.js';
import { operatorGroupController } from '../../../src/controllers/operatorgroup.js';
import { startManager } from '../../../src/manager/manager.js';
import { Applier } from '../../../src/kube/apply.js';
import { collectionPath, KubeClient, objectPath } from '../../../src/kube/client.js';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { installCrds } from '../../../src/kube/crds.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { eventually } from '../support.js';
import { inline } from '../../support/operator-objects.js';

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
  const { access } = loadKubeConfig({ path: inject('kubeconfig') });
  const client = new KubeClient(access);
  return { client, applier: new Applier(client) };
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

export interface Harness {
  ctx: ControllerContext;
  catalogs: CatalogStore;
  /** Reconcile failures the manager reported (retried ones included), for test diagnostics. */
  errors: { controller: string; key: string; err: unknown }[];
  stop(): Promise<void>;
}

/** A reconcile that failed, as the manager logs it. */
export interface FailedReconcile {
  outcome: 'retry';
  controller: string;
  key: string;
  err: unknown;
}

/**
 * A logger for a manager under test. The manager logs every failed reconcile at info; each is
 * passed to `onFailure`, and lines are printed only when BOSUN_TEST_LOG asks for them.
 */
export function failedReconcileLogger(onFailure: (f: FailedReconcile) => void): Logger {
  return pino(
    { level: process.env.BOSUN_TEST_LOG ?? 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as {
          outcome?: string;
          controller?: string;
          key?: string;
          err?: unknown;
        };
        if (entry.outcome === 'retry') {
          onFailure({
            outcome: entry.outcome,
            controller: entry.controller ?? '',
            key: entry.key ?? '',
            err: entry.err,
          });
        }
        if (process.env.BOSUN_TEST_LOG) process.stderr.write(line);
      },
    },
  );
}

/**
 * Starts Bosun's manager with the given controllers (the install side by default) and the test
 * catalog in its catalog store; resolves once every cache is filled. The CatalogSource
 * controller is not among them, so catalogs put in the store stay there.
 */
export async function startInstallControllers(
  controllers: readonly Controller[] = installControllers,
): Promise<Harness> {
  const errors: Harness['errors'] = [];
  const logger = failedReconcileLogger(({ controller, key, err }) => errors.push({ controller, key, err }));
  const running = await startManager({
    kubeconfig: inject('kubeconfig'),
    installCrds: true,
    metricsAddr: null,
    logger,
    controllers,
    globalNamespace: testCatalog.namespace,
  });
  running.ctx.catalogs.set(testCatalogSnapshot());
  return { ctx: running.ctx, catalogs: running.ctx.catalogs, errors, stop: () => running.stop() };
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

/** The test operator's CRD. */
export const testCrd = {
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

export { inline };

export function testBundle(version: '0.1.0' | '0.2.0', csv: object = testCSV(version)): BundleDoc {
  return {
    schema: 'olm.bundle',
    package: TestOperator.package,
    name: `testop.v${version}`,
    image: '',
    properties: [
      { type: 'olm.package', value: { packageName: TestOperator.package, version } },
      inline(testCrd),
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
