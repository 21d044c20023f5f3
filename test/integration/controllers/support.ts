/**
 * Helpers for the controller tests: a manager started in-process against the run's control
 * plane, and plain-JSON access to the objects the tests create and inspect.
 */
import { pino } from 'pino';
import { inject } from 'vitest';
import type { Condition, KubeObject, ResourceType } from '../../../src/apis/meta.js';
import { type CatalogSource, Resources, type Subscription } from '../../../src/apis/operators.js';
import { KubeClient, collectionPath, objectPath } from '../../../src/kube/client.js';
import type { Controller } from '../../../src/controllers/context.js';
import { type RunningManager, startManager } from '../../../src/manager/manager.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { eventually, freshNamespace } from '../support.js';
import { importOperatorsDir } from '../../../src/catalog/import.js';
import { main } from '../../../src/cli/main.js';
import { Builtin } from '../../../src/kube/resources.js';
import { catalogReady } from '../../support/corpus-install.js';
import { serveText } from '../../support/serve.js';

export function client(): KubeClient {
  return new KubeClient(loadKubeConfig({ path: inject('kubeconfig') }).access);
}

/** A manager for this test file: CRDs installed, HTTP on a free port, logs only when BOSUN_TEST_LOG is set. */
export function startTestManager(controllers?: readonly Controller[]): Promise<RunningManager> {
  return startManager({
    kubeconfig: inject('kubeconfig'),
    installCrds: true,
    metricsAddr: '127.0.0.1:0',
    logger: pino({ level: process.env.BOSUN_TEST_LOG ?? 'silent' }),
    ...(controllers ? { controllers } : {}),
  });
}

export const ConfigMapResource: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};

export const EventResource: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
};

export async function create<T extends KubeObject>(
  resource: ResourceType,
  namespace: string,
  body: T,
): Promise<T> {
  return client().request<T>({ method: 'POST', path: collectionPath(resource, namespace), body });
}

export async function get<T extends KubeObject>(
  resource: ResourceType,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  try {
    return await client().request<T>({ path: objectPath(resource, name, namespace) });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function list<T extends KubeObject>(resource: ResourceType, namespace: string): Promise<T[]> {
  const res = await client().request<{ items: T[] }>({ path: collectionPath(resource, namespace) });
  return res.items;
}

export async function mergePatch<T extends KubeObject>(
  resource: ResourceType,
  namespace: string,
  name: string,
  patch: unknown,
): Promise<T> {
  return client().request<T>({
    method: 'PATCH',
    path: objectPath(resource, name, namespace),
    body: patch,
    contentType: 'application/merge-patch+json',
  });
}

export async function remove(resource: ResourceType, namespace: string, name: string): Promise<void> {
  try {
    await client().request({ method: 'DELETE', path: objectPath(resource, name, namespace) });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Events about one object, as `kubectl describe` lists them. */
export async function eventsFor(
  namespace: string,
  name: string,
): Promise<{ reason: string; message: string; type: string }[]> {
  const res = await client().request<{ items: { reason: string; message: string; type: string }[] }>({
    path: collectionPath(EventResource, namespace),
    query: { fieldSelector: `involvedObject.name=${name}` },
  });
  return res.items;
}

export function catalogSource(namespace: string, name: string, spec: CatalogSource['spec']): CatalogSource {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name, namespace },
    spec,
  };
}

export function subscription(
  namespace: string,
  name: string,
  spec: Partial<Subscription['spec']> & Pick<Subscription['spec'], 'name' | 'source'>,
): Subscription {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name, namespace },
    spec: { sourceNamespace: namespace, ...spec },
  };
}

export { Resources };

/** A CatalogSource's Ready condition. */
export const readyCondition = (cs: CatalogSource | undefined): Condition | undefined =>
  cs?.status?.conditions?.find((c: Condition) => c.type === 'Ready');

/** The CatalogSource once its Ready condition is as `want` says. */
export function catalogSourceWhen(
  ns: string,
  name: string,
  want: (c: Condition | undefined) => boolean,
  what: string,
): Promise<CatalogSource> {
  return eventually(what, async () => {
    const cs = await get<CatalogSource>(Resources.CatalogSource, ns, name);
    return want(readyCondition(cs)) ? cs : undefined;
  });
}

/** A fresh namespace with an OperatorGroup `og` targeting the namespace itself. */
export async function namespaceWithOperatorGroup(prefix: string): Promise<string> {
  const ns = await freshNamespace(prefix);
  await create(Resources.OperatorGroup, ns, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: ns },
    spec: { targetNamespaces: [ns] },
  });
  return ns;
}

/**
 * A fresh namespace holding `catalogJson` in ConfigMap `<source>-catalog`, served as CatalogSource
 * `source`, and an OperatorGroup `og` targeting the namespace itself.
 */
export async function namespaceWithCatalog(prefix: string, catalogJson: string, source = 'testop') {
  const ns = await namespaceWithOperatorGroup(prefix);
  await create(ConfigMapResource, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${source}-catalog` },
    data: { 'catalog.json': catalogJson },
  } as never);
  await create(
    Resources.CatalogSource,
    ns,
    catalogSource(ns, source, { sourceType: 'configmap', configMap: `${source}-catalog` }),
  );
  return ns;
}

/**
 * The corpus at `dir` imported, served over http as CatalogSource `name` in `namespace` (made if
 * missing); resolves with the imported catalog once the CatalogSource is READY.
 */
export async function serveCorpusCatalog(dir: string, namespace: string, name: string) {
  const { config } = await importOperatorsDir(dir);
  const text = [...config.packages, ...config.channels, ...config.bundles, ...config.deprecations]
    .map((d) => JSON.stringify(d))
    .join('\n');
  const served = await serveText(text);
  await create(Builtin.Namespace, '', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  }).catch(() => undefined);
  await create(
    Resources.CatalogSource,
    namespace,
    catalogSource(namespace, name, { sourceType: 'http', address: served.url }),
  );
  await eventually(
    'the corpus catalog to be READY',
    async () => {
      const cs = await get<CatalogSource>(Resources.CatalogSource, namespace, name);
      return cs && catalogReady(cs) ? cs : undefined;
    },
    300_000,
  );
  return { config, served };
}

/** The bosun CLI, run in-process against the test control plane. */
export async function bosunCli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main([...args, '--kubeconfig', inject('kubeconfig')], {
    stdout: { write: (s: string) => ((out += s), true) } as never,
    stderr: { write: (s: string) => ((err += s), true) } as never,
    cwd: process.cwd(),
    env: {},
  });
  return { code, out, err };
}

/**
 * ServiceAccount `name` in `namespace`, bound to cluster-admin, as OLM v1's tutorials make the
 * account a ClusterExtension installs as.
 */
export async function clusterAdminServiceAccount(namespace: string, name: string): Promise<void> {
  await create(Builtin.ServiceAccount, namespace, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace },
  });
  await create(Builtin.ClusterRoleBinding, '', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${namespace}-${name}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
}
