/**
 * `bosun start` (the README's first command, `npm start`): a working Bosun in one step. It brings
 * up the local control plane (or uses the cluster of --kubeconfig / KUBECONFIG), runs the manager
 * with the CRDs installed, publishes the repository's catalogs/ as the global CatalogSource
 * `olm/bosun-catalog`, creates the `operators` namespace with the global OperatorGroup
 * `global-operators` (as upstream OLM does), and prints the three commands to try it.
 *
 * The catalog is served as a `configmap` source: the content then lives in the cluster (visible
 * with kubectl, unaffected by manager restarts, no port to expose), and each `bosun start`
 * refreshes it from catalogs/. A ConfigMap holds at most 1 MiB; a larger catalog is refused with
 * a pointer to the `http` source.
 */
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../apis/meta.js';
import { Resources } from '../../apis/operators.js';
import { listCatalogFiles, loadCatalog } from '../../catalog/load.js';
import { validateCatalog } from '../../catalog/validate.js';
import { defaultClusterName } from '../../cluster/paths.js';
import type { Applier } from '../../kube/apply.js';
import { UserError } from '../../util/errors.js';
import { formatProblem, type Problem } from '../../util/result.js';
import { type Command, str } from '../command.js';
import { progressReporter } from '../progress.js';
import { managerLogger, managerOptions, untilSignal } from './operator.js';

export const GlobalNamespace = 'olm';
export const OperatorsNamespace = 'operators';
export const DefaultCatalogName = 'bosun-catalog';
export const GlobalOperatorGroup = 'global-operators';
export const ExampleSubscription = 'deploy/examples/subscription-bosun-sample.yaml';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** What a ConfigMap may hold (the API server's limit is 1 MiB including metadata). */
const maxConfigMapBytes = 1_000_000;

/** catalogs/ as ConfigMap data: one key per file, its path with `/` spelled `_` (keys allow no `/`). */
export async function catalogConfigMapData(dir: string): Promise<Record<string, string>> {
  const loaded = await loadCatalog(dir);
  const problems: Problem[] = loaded.ok ? validateCatalog(loaded.value).errors : loaded.errors;
  if (problems.length > 0) {
    throw new UserError(
      `the catalog in ${dir} is not valid: ${problems.slice(0, 5).map(formatProblem).join('; ')}`,
    );
  }
  const listed: Problem[] = [];
  const files = await listCatalogFiles(dir, listed);
  const data: Record<string, string> = {};
  let bytes = 0;
  for (const rel of files) {
    const text = await readFile(join(dir, rel), 'utf8');
    bytes += Buffer.byteLength(text);
    data[rel.replace(/[^-._a-zA-Z0-9]/g, '_')] = text;
  }
  if (bytes > maxConfigMapBytes) {
    throw new UserError(
      `the catalog in ${dir} is ${bytes} bytes, more than a ConfigMap holds: render it to one file (\`bosun catalog render ${dir} -o json\`), serve that file over HTTP, and point a CatalogSource of sourceType http at it`,
    );
  }
  return data;
}

/** The namespaces, catalog and OperatorGroup `bosun start` sets up, applied (so re-running is harmless). */
export async function applyDefaults(applier: Applier, catalogDir: string): Promise<void> {
  const data = await catalogConfigMapData(catalogDir);
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GlobalNamespace } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OperatorsNamespace } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: DefaultCatalogName, namespace: GlobalNamespace },
      data,
    } as KubeObject,
    {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: Resources.CatalogSource.kind,
      metadata: { name: DefaultCatalogName, namespace: GlobalNamespace },
      spec: {
        sourceType: 'configmap',
        configMap: DefaultCatalogName,
        displayName: 'Bosun sample operators',
        publisher: 'Bosun',
        updateStrategy: { registryPoll: { interval: '1m' } },
      },
    } as KubeObject,
    {
      apiVersion: 'operators.coreos.com/v1',
      kind: Resources.OperatorGroup.kind,
      metadata: { name: GlobalOperatorGroup, namespace: OperatorsNamespace },
      spec: {},
    } as KubeObject,
  ];
  for (const o of objects) await applier.apply(o);
}

/**
 * A viewer for the local control plane's web catalog. The manager shows cluster state (installs,
 * namespaces, OperatorGroups) only to a viewer who signs in with a token of a user allowed to list
 * it; on the local control plane `bosun start` makes that user, so the page can show installs.
 * Not made on a cluster of --kubeconfig: who may read what there is its admins' choice.
 */
export const WebViewer = { namespace: GlobalNamespace, name: 'bosun-web-viewer' } as const;

export async function applyWebViewer(applier: Applier): Promise<void> {
  const read = ['get', 'list', 'watch'];
  const objects: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: WebViewer.name, namespace: WebViewer.namespace },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: WebViewer.name },
      rules: [
        { apiGroups: [''], resources: ['namespaces'], verbs: read },
        {
          apiGroups: ['operators.coreos.com'],
          resources: [
            'catalogsources',
            'clusterserviceversions',
            'installplans',
            'operatorgroups',
            'subscriptions',
          ],
          verbs: read,
        },
        { apiGroups: ['packages.operators.coreos.com'], resources: ['packagemanifests'], verbs: read },
      ],
    } as KubeObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: WebViewer.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: WebViewer.name },
      subjects: [{ kind: 'ServiceAccount', name: WebViewer.name, namespace: WebViewer.namespace }],
    } as KubeObject,
  ];
  for (const o of objects) await applier.apply(o);
}

export const startCommand: Command = {
  name: 'start',
  summary: 'Start Bosun: a local control plane (or KUBECONFIG), the CRDs, the sample catalog and the manager',
  description:
    'Brings up the local control plane unless --kubeconfig or KUBECONFIG names a cluster, installs the\n' +
    `CRDs, publishes catalogs/ as CatalogSource ${GlobalNamespace}/${DefaultCatalogName}, creates the ${OperatorsNamespace} namespace with\n` +
    `OperatorGroup ${GlobalOperatorGroup}, and runs the manager in the foreground until Ctrl-C.`,
  options: {
    kubeconfig: {
      type: 'string',
      valueName: 'FILE',
      description: 'Use this existing cluster instead of a local one',
    },
    name: {
      type: 'string',
      short: 'n',
      valueName: 'NAME',
      default: defaultClusterName,
      description: 'Which local control plane (several may run at once)',
    },
    catalog: {
      type: 'string',
      valueName: 'DIR',
      description: 'The FBC catalog to publish (default: the repository catalogs/)',
    },
    'metrics-addr': managerOptions['metrics-addr'],
    'package-api-addr': {
      ...managerOptions['package-api-addr'],
      description: `${managerOptions['package-api-addr'].description} (default with the local control plane: this host's first non-loopback IPv4 address, any port; with --kubeconfig: not served unless given; "off": not served)`,
    },
    'log-level': managerOptions['log-level'],
    'log-format': managerOptions['log-format'],
  },
  run: async ({ values, ctx }) => {
    const logger = managerLogger(values, ctx);
    let kubeconfig = str(values, 'kubeconfig') ?? (ctx.env.KUBECONFIG || undefined);
    // The API server must be able to dial the manager: sure beside the local control plane only.
    const packageApi =
      str(values, 'package-api-addr') ??
      (kubeconfig
        ? 'off'
        : (await import('../../server/packageserver/listen.js')).defaultPackageApiAddress());
    const name = str(values, 'name') ?? defaultClusterName;
    if (kubeconfig) {
      ctx.stderr.write(`• using the cluster of ${kubeconfig}; no local control plane started\n`);
    } else {
      const { up } = await import('../../cluster/controlplane.js');
      const progress = progressReporter(ctx);
      const state = await up({
        name,
        env: ctx.env,
        onProgress: progress.line,
        onBuildStatus: progress.build,
      });
      ctx.stderr.write(
        `• control plane "${state.name}" (Kubernetes ${state.kubernetesVersion}) is ready at ${state.server}\n`,
      );
      kubeconfig = state.kubeconfig;
    }
    const catalogDir = str(values, 'catalog') ?? join(repoRoot, 'catalogs');
    // Check the catalog before anything starts, so a broken one is the first thing said.
    await catalogConfigMapData(catalogDir);
    const { startManager } = await import('../../manager/manager.js');
    const manager = await startManager({
      kubeconfig,
      env: ctx.env,
      installCrds: true,
      globalNamespace: GlobalNamespace,
      metricsAddr: str(values, 'metrics-addr'),
      ...(packageApi === 'off' ? {} : { packageApiAddr: packageApi }),
      logger,
    });
    const local = !str(values, 'kubeconfig') && !ctx.env.KUBECONFIG;
    try {
      await applyDefaults(manager.ctx.applier, catalogDir);
      if (local) await applyWebViewer(manager.ctx.applier);
    } catch (err) {
      await manager.stop();
      throw err;
    }
    const example = relative(ctx.cwd, join(repoRoot, ExampleSubscription)) || ExampleSubscription;
    ctx.stdout.write(
      (manager.url
        ? `\nBosun is running. Browse the catalog at ${manager.url}/ (metrics at ${manager.url}/metrics).\n` +
          (local
            ? `To see there what is installed, sign in with the token of: kubectl create token ${WebViewer.name} -n ${WebViewer.namespace}\n`
            : '')
        : `\nBosun is running (no HTTP server: no web catalog, no metrics).\n`) +
        `In another terminal:\n\n` +
        `  export KUBECONFIG=${kubeconfig}\n` +
        (manager.packageApi ? `  kubectl get packagemanifests -n ${OperatorsNamespace}\n` : '') +
        `  kubectl apply -f ${example}\n` +
        `  kubectl get csv -n ${OperatorsNamespace} -w\n\n`,
    );
    await untilSignal();
    await manager.stop();
    ctx.stderr.write(
      `• manager stopped; the cluster keeps running${kubeconfig.includes(name) ? ` (stop it with: bosun cluster down${name === defaultClusterName ? '' : ` --name ${name}`})` : ''}\n`,
    );
    return 0;
  },
};
