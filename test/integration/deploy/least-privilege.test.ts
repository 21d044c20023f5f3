/**
 * The manager needs no more than deploy/ grants it, and says so when it has less. On a control
 * plane of its own, deploy/'s CRDs, namespaces, ServiceAccount and roles are applied as deploy/
 * has them; a token the TokenRequest API issues for the ServiceAccount is the only credential of
 * the kubeconfig the manager runs with (leader election on, PackageManifest API served, as the
 * Deployment runs it).
 *
 * - With exactly that identity: an operator with a dependency, a Role and a ClusterRole, a webhook
 *   and CRDs (the samples, the dashboard given a validating webhook) installs, upgrades, rolls
 *   back (`bosun rollback`) and uninstalls, and `kubectl get packagemanifests` answers through the
 *   aggregated API.
 * - Each rule of the ClusterRole taken away alone (the ClusterRole bosun-manager replaced, for that
 *   case, by a copy without the rule; the cases run one after another, since each manager
 *   reconciles the whole cluster): the failure that follows is reported where the table says (a
 *   Forbidden Event, the InstallPlan's condition, the manager's log), naming a verb, resource and
 *   group of that rule as refused by the API server, never a silent hang.
 *
 * A control plane of its own: deploy/ writes cluster-scoped objects with fixed names (the
 * ClusterRole bosun-manager and its bindings, the CRDs under another field manager, the `olm`
 * namespace enforcing the restricted Pod Security level), and each case below runs a manager
 * reconciling the whole cluster, which would act on what other test files leave behind.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { KubeObject, ResourceType } from '../../../src/apis/meta.js';
import { type ClusterServiceVersion, type InstallPlan, Resources } from '../../../src/apis/operators.js';
import { main } from '../../../src/cli/main.js';
import { down, up } from '../../../src/cluster/controlplane.js';
import { collectionPath, KubeClient, objectPath } from '../../../src/kube/client.js';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { Builtin } from '../../../src/kube/resources.js';
import { defaultPackageApiAddress } from '../../../src/server/packageserver/listen.js';
import { spawnBosun } from '../../support/bosun-process.js';
import { kubectlMissing } from '../../support/deploy-render.js';
import { tokenKubeconfig } from '../../support/users.js';
import { sampleCatalogJson, uniqueGroup } from '../controllers/operator-support.js';
import { eventually } from '../support.js';

const execFileP = promisify(execFile);
const missing = await kubectlMissing();
const skip =
  missing ??
  (inject('clusterName') === ''
    ? 'the run uses an existing cluster; least privilege is tested on a local control plane'
    : undefined);
if (skip) console.warn(`least-privilege test skipped: ${skip}`);

const deployDir = join(import.meta.dirname, '../../../deploy');
const clusterName = `least-privilege-${process.pid}`;
const Global = 'olm';
const Dashboard = 'bosun-sample-dashboard';
const dashboardCatalog = join(
  import.meta.dirname,
  '../../../catalogs/bosun-samples/bosun-sample-dashboard/catalog.yaml',
);

let kubeconfig = '';
let work = '';
let admin: KubeClient;

async function kubectl(args: string[], kc = kubeconfig): Promise<string> {
  try {
    return (await execFileP('kubectl', ['--kubeconfig', kc, ...args], { maxBuffer: 64 * 1024 * 1024 }))
      .stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr || e.stdout || e.message}`, { cause: err });
  }
}

const R = {
  ConfigMap: Builtin.ConfigMap,
  Namespace: Builtin.Namespace,
  Deployment: Builtin.Deployment,
  Role: Builtin.Role,
  ClusterRole: Builtin.ClusterRole,
  ClusterRoleBinding: Builtin.ClusterRoleBinding,
  Event: { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true } as ResourceType,
  Validating: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
  } as ResourceType,
};

async function create<T extends KubeObject>(resource: ResourceType, namespace: string, body: T): Promise<T> {
  return admin.request<T>({ method: 'POST', path: collectionPath(resource, namespace), body });
}
async function get<T extends KubeObject>(resource: ResourceType, namespace: string, name: string) {
  try {
    return await admin.request<T>({ path: objectPath(resource, name, namespace) });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
async function list<T extends KubeObject>(resource: ResourceType, namespace = '', query = {}) {
  return (await admin.request<{ items: T[] }>({ path: collectionPath(resource, namespace), query })).items;
}
async function remove(resource: ResourceType, namespace: string, name: string): Promise<void> {
  await admin.request({ method: 'DELETE', path: objectPath(resource, name, namespace) }).catch((err) => {
    if (!isNotFound(err)) throw err;
  });
}

/** A token of `namespace/name` from the TokenRequest API, in a kubeconfig holding nothing else. */
async function tokenOf(namespace: string, name: string): Promise<string> {
  const issued = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return tokenKubeconfig(kubeconfig, issued.status.token);
}

interface ManagerProcess {
  /** Its log, one JSON record a line. */
  log: string[];
  /** How it ended, once it has. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * `bosun operator run` as deploy/'s Deployment runs it (leader election, the
 * PackageManifest API served), with only the credentials of `userKubeconfig`. A process, because a
 * manager that cannot list what it watches never finishes starting, and only a process can then be
 * stopped.
 */
function managerAs(userKubeconfig: string): ManagerProcess {
  const args = [
    'operator',
    'run',
    '--kubeconfig',
    userKubeconfig,
    '--global-namespace',
    Global,
    '--leader-elect',
    '--package-api-addr',
    defaultPackageApiAddress(),
    '--metrics-addr',
    '127.0.0.1:0',
    '--log-format',
    'json',
  ];
  const child = spawnBosun(args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      log.push(line);
      if (process.env.BOSUN_TEST_LOG) process.stderr.write(`${line}\n`);
    });
  }
  return {
    log,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const ended = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
      if (!ended) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * The dashboard's CSVs given a validating webhook on their own API (failurePolicy Ignore: nothing
 * serves it on the simulated node), so an install writes a webhook configuration, its serving
 * certificate Secret and Service.
 */
function withWebhook(line: string): string {
  const doc = JSON.parse(line) as {
    schema?: string;
    properties?: { type: string; value: { data: string } }[];
  };
  if (doc.schema !== 'olm.bundle') return line;
  for (const p of doc.properties ?? []) {
    if (p.type !== 'olm.bundle.object') continue;
    const obj = JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8')) as ClusterServiceVersion;
    if (obj.kind !== 'ClusterServiceVersion') continue;
    (obj.spec as unknown as Record<string, unknown>).webhookdefinitions = [
      {
        type: 'ValidatingAdmissionWebhook',
        generateName: 'vdashboard.dashboard.bosun.dev',
        deploymentName: Dashboard,
        containerPort: 443,
        targetPort: 9443,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Ignore',
        webhookPath: '/validate-dashboard',
        rules: [
          {
            apiGroups: ['dashboard.bosun.dev'],
            apiVersions: ['v1alpha1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['dashboards'],
          },
        ],
      },
    ];
    p.value = { data: Buffer.from(JSON.stringify(obj)).toString('base64') };
  }
  const encoded = (o: object) => ({ data: Buffer.from(JSON.stringify(o)).toString('base64') });
  doc.properties = [
    ...(doc.properties ?? []),
    ...extraObjects.map((o) => ({ type: 'olm.bundle.object', value: encoded(o) })),
  ];
  return JSON.stringify(doc);
}

/**
 * The optional kinds a bundle may hold, each of which one rule of the ClusterRole is for: the
 * dashboard's bundles carry one of each, so an install needs every such rule.
 */
const extraObjects = [
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'bosun-lp-dashboard' },
    value: 1000,
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'bosun-lp-dashboard' },
    spec: { podSelector: { matchLabels: { 'app.kubernetes.io/name': Dashboard } }, policyTypes: ['Ingress'] },
  },
  {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'bosun-lp-dashboard' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': Dashboard } } },
  },
  {
    apiVersion: 'autoscaling.k8s.io/v1',
    kind: 'VerticalPodAutoscaler',
    metadata: { name: 'bosun-lp-dashboard' },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: Dashboard } },
  },
  {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'bosun-lp-dashboard' },
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': Dashboard } },
      endpoints: [{ port: 'metrics' }],
    },
  },
];

/** The CRDs of the VerticalPodAutoscaler and ServiceMonitor kinds, as a cluster with them has them. */
const thirdPartyCrds = [
  ['autoscaling.k8s.io', 'VerticalPodAutoscaler', 'verticalpodautoscalers', 'v1'],
  ['monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors', 'v1'],
].map(([group, kind, plural, version]) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: `${plural}.${group}`,
    // The API server requires this of groups under k8s.io (the VPA's CRD has it so).
    ...(group!.endsWith('.k8s.io')
      ? {
          annotations: {
            'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/63797',
          },
        }
      : {}),
  },
  spec: {
    group,
    scope: 'Namespaced',
    names: { kind, plural, singular: kind!.toLowerCase(), listKind: `${kind}List` },
    versions: [
      {
        name: version,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
}));

async function catalogData(group: string): Promise<Record<string, string>> {
  const dashboard = (await sampleCatalogJson(group, dashboardCatalog))
    .split('\n')
    .map(withWebhook)
    .join('\n');
  return { 'bosun-sample.json': await sampleCatalogJson(group), 'bosun-sample-dashboard.json': dashboard };
}

/** A namespace with an OperatorGroup for itself and the samples' catalog `testop`. */
async function namespaceWithSamples(name: string, serviceAccountName?: string): Promise<string> {
  await create(R.Namespace, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  if (serviceAccountName) {
    // A ServiceAccount that may do all the install needs, so only the manager's refusal is seen.
    await create(Builtin.ServiceAccount, name, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: serviceAccountName },
    });
    await create(R.ClusterRoleBinding, '', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${name}-${serviceAccountName}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccountName, namespace: name }],
    } as KubeObject);
  }
  await create(Resources.OperatorGroup, name, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og' },
    spec: { targetNamespaces: [name], ...(serviceAccountName ? { serviceAccountName } : {}) },
  } as KubeObject);
  await create(R.ConfigMap, name, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'testop' },
    data: await catalogData(uniqueGroup()),
  } as KubeObject);
  await create(Resources.CatalogSource, name, {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'testop' },
    spec: { sourceType: 'configmap', configMap: 'testop' },
  } as KubeObject);
  return name;
}

/**
 * Creates the dashboard's CRD as its 0.1.0 bundle holds it, as an admin would by hand, and a
 * Dashboard in `ns`; returns where the Dashboard is served and its uid.
 */
async function dashboardCrdByHand(ns: string): Promise<{ resource: ResourceType; uid: string }> {
  const bundle = (yaml.loadAll(await readFile(dashboardCatalog, 'utf8')) as BundleDoc[]).find(
    (d) => d?.schema === 'olm.bundle' && d.name === `${Dashboard}.v0.1.0`,
  );
  const crd = (bundle?.properties ?? [])
    .filter((p) => p.type === 'olm.bundle.object')
    .map((p) => JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8')) as KubeObject)
    .find((o) => o.kind === 'CustomResourceDefinition') as
    | (KubeObject & {
        spec: { group: string; names: { kind: string; plural: string }; versions: { name: string }[] };
      })
    | undefined;
  if (!crd) throw new Error(`${dashboardCatalog}: no CRD in ${Dashboard}.v0.1.0`);
  const file = join(work, 'dashboard-crd.yaml');
  await writeFile(file, yaml.dump(crd));
  await kubectl(['apply', '--server-side', '-f', file]);
  await kubectl(['wait', '--for', 'condition=Established', '--timeout', '60s', '-f', file]);
  const resource: ResourceType = {
    group: crd.spec.group,
    version: crd.spec.versions[0]!.name,
    kind: crd.spec.names.kind,
    plural: crd.spec.names.plural,
    namespaced: true,
  };
  const made = await eventually('a Dashboard to be created', () =>
    create(resource, ns, {
      apiVersion: `${resource.group}/${resource.version}`,
      kind: resource.kind,
      metadata: { name: 'by-hand' },
      spec: { title: 'made before Bosun' },
    } as KubeObject),
  );
  return { resource, uid: made.metadata!.uid! };
}

interface BundleDoc {
  schema?: string;
  name?: string;
  properties?: { type: string; value: { data: string } }[];
}

async function subscribeDashboard(ns: string): Promise<void> {
  await create(Resources.Subscription, ns, {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: Dashboard },
    spec: {
      name: Dashboard,
      source: 'testop',
      sourceNamespace: ns,
      channel: 'stable',
      startingCSV: `${Dashboard}.v0.1.0`,
      installPlanApproval: 'Manual',
    },
  } as KubeObject);
}

async function csvIn(ns: string, name: string, phase: string, timeoutMs = 120_000) {
  try {
    return await eventually(
      `CSV ${name} ${phase} in ${ns}`,
      async () => {
        const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, name);
        return csv?.status?.phase === phase ? csv : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; ${await stateOf(ns)}`, { cause: err });
  }
}

/** What a failed wait saw: the namespace's CSVs and InstallPlans, and its Warning Events. */
async function stateOf(ns: string): Promise<string> {
  const csvs = (await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns)).map(
    (c) => `CSV ${c.metadata.name} ${c.status?.phase}: ${c.status?.reason} ${c.status?.message}`,
  );
  const plans = (await list<InstallPlan>(Resources.InstallPlan, ns)).map(
    (p) => `InstallPlan ${p.metadata.name} ${p.status?.phase}: ${JSON.stringify(p.status?.conditions)}`,
  );
  const events = (await warnings(ns)).map((w) => `Event ${w.name} ${w.reason}: ${w.message}`);
  return [...csvs, ...plans, ...events].join('\n');
}

/** Approves the plan waiting for approval that names `csv`, or a CSV starting with it. */
async function approve(ns: string, csv: string): Promise<void> {
  const plan = await eventually(
    `an InstallPlan for ${csv} waiting for approval in ${ns}`,
    async () =>
      (await list<InstallPlan>(Resources.InstallPlan, ns)).find(
        (p) =>
          p.status?.phase === 'RequiresApproval' &&
          p.spec.clusterServiceVersionNames.some((c) => c.startsWith(csv)),
      ),
    120_000,
  );
  await admin.request({
    method: 'PATCH',
    path: objectPath(Resources.InstallPlan, plan.metadata.name!, ns),
    body: { spec: { approved: true } },
    contentType: 'application/merge-patch+json',
  });
}

/** The Events of the objects of `namespace` (and of cluster-scoped ones, which go to `default`). */
async function warnings(namespace: string): Promise<{ reason: string; message: string; name: string }[]> {
  const events = await list<
    KubeObject & { reason: string; message: string; type: string; involvedObject: { name: string } }
  >(R.Event, namespace);
  return events
    .filter((e) => e.type === 'Warning')
    .map((e) => ({ reason: e.reason, message: e.message, name: e.involvedObject.name }));
}

// One control plane for the file, set up as deploy/ has it (see the top of the file).
beforeAll(async () => {
  if (skip) return;
  work = await mkdtemp(join(tmpdir(), 'bosun-least-privilege-'));
  const state = await up({ name: clusterName });
  kubeconfig = state.kubeconfig;
  admin = new KubeClient(loadKubeConfig({ path: kubeconfig }).access);
  // As deploy/README.md says: the CRDs first, until Established; then the namespaces, the
  // ServiceAccount and its roles, each file as deploy/ has it.
  await kubectl(['apply', '--server-side', '-f', join(deployDir, 'crds')]);
  await kubectl([
    'wait',
    '--for',
    'condition=Established',
    '--timeout',
    '60s',
    '-f',
    join(deployDir, 'crds'),
  ]);
  for (const file of ['namespaces.yaml', 'serviceaccount.yaml', 'clusterrole.yaml']) {
    await kubectl(['apply', '--server-side', '-f', join(deployDir, 'manager', file)]);
  }
  // Kinds of other projects a bundle may hold, served here as in a cluster running them.
  const crdFile = join(work, 'third-party-crds.yaml');
  await writeFile(crdFile, thirdPartyCrds.map((c) => yaml.dump(c)).join('---\n'));
  await kubectl(['apply', '--server-side', '-f', crdFile]);
  await kubectl(['wait', '--for', 'condition=Established', '--timeout', '60s', '-f', crdFile]);
});

afterAll(async () => {
  if (kubeconfig) await down({ name: clusterName });
  if (work) await rm(work, { recursive: true, force: true });
});

describe.skipIf(skip)('the manager with exactly the identity deploy/ gives it', () => {
  it('installs, upgrades, rolls back and uninstalls an operator with a dependency, RBAC, a webhook and CRDs, and serves PackageManifests', async () => {
    const manager = managerAs(await tokenOf(Global, 'bosun-manager'));
    try {
      const ns = await namespaceWithSamples(`lp-${process.pid}`);
      // The dashboard's CRD installed by hand before Bosun, and a custom resource of it in use:
      // the manager has no view role for it, and the install's CRD safety check must still read
      // that custom resource (the manager grants itself the view role the CSV's install writes).
      const byHand = await dashboardCrdByHand(ns);
      await subscribeDashboard(ns);

      // Install: the dashboard 0.1.0 and, as its dependency, bosun-sample (a Subscription and a
      // plan of its own, Manual as the dashboard's).
      await approve(ns, `${Dashboard}.v0.1.0`);
      await approve(ns, 'bosun-sample.v');
      const v1 = await csvIn(ns, `${Dashboard}.v0.1.0`, 'Succeeded');
      // The dependency's CSV goes its own way: the dashboard's can be Succeeded first.
      const sampleName = await eventually('the dependency bosun-sample to have a CSV', async () =>
        (await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns))
          .map((c) => c.metadata.name)
          .find((n) => n?.startsWith('bosun-sample.')),
      );
      const sample = await csvIn(ns, sampleName, 'Succeeded');
      expect(sample.status?.phase).toBe('Succeeded');
      expect(v1.status?.phase).toBe('Succeeded');
      const kept = await get(byHand.resource, ns, 'by-hand');
      expect(kept?.metadata?.uid).toBe(byHand.uid);
      const roles = await list<KubeObject>(R.Role, ns);
      expect(roles.some((r) => r.metadata?.name?.startsWith(`${Dashboard}.v0.1.0`))).toBe(true);
      const clusterRoles = await list<KubeObject>(R.ClusterRole, '', {
        labelSelector: `olm.owner=${Dashboard}.v0.1.0`,
      });
      expect(clusterRoles.length).toBeGreaterThan(0);
      const hooks = await list<KubeObject>(R.Validating, '', {
        labelSelector: `olm.owner=${Dashboard}.v0.1.0`,
      });
      expect(hooks.length).toBe(1);
      for (const o of extraObjects) {
        const kind = `${o.kind.toLowerCase()}.${o.apiVersion.split('/')[0]}`;
        expect(await kubectl(['get', '-n', ns, '-o', 'name', `${kind}/${o.metadata.name}`])).toContain(
          o.metadata.name,
        );
      }

      // Upgrade to 0.2.0, then roll back to 0.1.0 as an admin asks with `bosun rollback`.
      await approve(ns, `${Dashboard}.v0.2.0`);
      await csvIn(ns, `${Dashboard}.v0.2.0`, 'Succeeded');
      let out = '';
      let err = '';
      const code = await main(['rollback', '-n', ns, Dashboard, '--kubeconfig', kubeconfig], {
        stdout: { write: (s: string) => ((out += s), true) } as never,
        stderr: { write: (s: string) => ((err += s), true) } as never,
        cwd: process.cwd(),
        env: {},
      });
      expect({ code, err }).toEqual({ code: 0, err: '' });
      expect(out).toContain(`to ${Dashboard}.v0.1.0`);
      await csvIn(ns, `${Dashboard}.v0.1.0`, 'Succeeded');
      await eventually('0.2.0 to be gone after the rollback', async () =>
        (await get(Resources.ClusterServiceVersion, ns, `${Dashboard}.v0.2.0`)) ? undefined : true,
      );

      // The PackageManifest API, through the aggregator, as kubectl asks it.
      const pm = await eventually(
        'kubectl get packagemanifests to list the samples',
        async () => {
          const text = await kubectl(['get', 'packagemanifests', '-n', ns, '-o', 'name']).catch(() => '');
          return text.includes(Dashboard) ? text : undefined;
        },
        60_000,
      );
      expect(pm).toContain('bosun-sample');

      // Uninstall: the Subscriptions and CSVs deleted, what the install created goes with them.
      for (const s of await list<KubeObject>(Resources.Subscription, ns)) {
        await remove(Resources.Subscription, ns, s.metadata!.name!);
      }
      for (const c of await list<KubeObject>(Resources.ClusterServiceVersion, ns)) {
        await remove(Resources.ClusterServiceVersion, ns, c.metadata!.name!);
      }
      // The OperatorGroup's own roles (olm.og.*) stay with it; those of the CSVs go.
      const ownedInNs = `olm.owner.kind=ClusterServiceVersion,olm.owner.namespace=${ns}`;
      let left: string[] = [];
      await eventually('the operators Deployments, cluster RBAC and webhooks to be gone', async () => {
        left = [
          ...(await list<KubeObject>(R.Deployment, ns)),
          ...(await list<KubeObject>(R.ClusterRole, '', { labelSelector: ownedInNs })),
          ...(await list<KubeObject>(R.Validating, '', { labelSelector: ownedInNs })),
        ].map((o) => `${o.kind ?? ''}/${o.metadata?.name ?? ''}`);
        return left.length === 0 ? true : undefined;
      }).catch((err: Error) => {
        throw new Error(`${err.message}: ${left.join(', ')}`, { cause: err });
      });

      // Nothing the manager did was refused, not even for a moment: the CRD safety check lists
      // custom resources through view roles that kube-controller-manager aggregates into the
      // manager's role only a moment after they are written, and it waits for that.
      const refused = [
        ...(await warnings(ns)).filter((w) => w.reason === 'Forbidden').map((w) => w.message),
        ...manager.log.map(logMessage).filter((m) => /forbidden/i.test(m)),
      ];
      expect(refused).toEqual([]);
    } finally {
      await manager.stop();
    }
  });
});

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const managerRole = (
  yaml.loadAll(await readFile(join(deployDir, 'manager', 'clusterrole.yaml'), 'utf8')) as (KubeObject & {
    rules?: Rule[];
  })[]
).find((o) => o?.kind === 'ClusterRole' && o.metadata?.name === 'bosun-manager')!;
const ruleName = (r: Rule) =>
  `${r.apiGroups.join(',') || 'core'}: ${r.resources.join(',')} [${r.verbs.join(',')}]`;

/** Where a missing permission is reported. */
type Channel = 'Event' | 'InstallPlan' | 'CSV' | 'CatalogSource' | 'log' | 'HTTP';

interface Refusal {
  channel: Channel;
  where: string;
  message: string;
}

/** One refusal the API server gave: `cannot <verb> resource "<resource>" in API group "<group>"`. */
const refusalPattern = /cannot (\S+) resource "([^"]+)" in API group "([^"]*)"/;
/** The refusal of a role granting more than its writer holds, which `escalate` lifts. */
const escalationPattern = /is attempting to grant RBAC permissions not currently held/;

/** Whether `message` names a permission of `rule` as refused. */
function namesRule(message: string, rule: Rule): boolean {
  if (rule.verbs.includes('escalate') && escalationPattern.test(message)) return true;
  const m = refusalPattern.exec(message);
  if (!m) return false;
  const [, verb, resource, group] = m;
  return rule.verbs.includes(verb!) && rule.resources.includes(resource!) && rule.apiGroups.includes(group!);
}

/**
 * A log record's message with the API server's own words: an error's body is a Status in JSON,
 * written into the record as a string.
 */
function logMessage(line: string): string {
  try {
    const rec = JSON.parse(line) as { msg?: string; err?: { message?: string; body?: string } };
    let said = rec.err?.message ?? '';
    try {
      said = (JSON.parse(rec.err?.body ?? '') as { message?: string }).message ?? said;
    } catch {
      // not a Status
    }
    return `${rec.msg ?? ''}: ${said}`;
  } catch {
    return line;
  }
}

/** Every report of a refused request in `ns` and the manager's log. */
async function refusals(ns: string, log: readonly string[]): Promise<Refusal[]> {
  const found: Refusal[] = [];
  const add = (channel: Channel, where: string, message: string | undefined) => {
    if (message && /forbidden|cannot|attempting to grant/i.test(message))
      found.push({ channel, where, message });
  };
  for (const events of [ns, Global, 'default']) {
    for (const e of await list<
      KubeObject & {
        type: string;
        reason: string;
        message: string;
        involvedObject: { kind: string; name: string };
      }
    >(R.Event, events)) {
      if (e.type === 'Warning')
        add('Event', `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason}`, e.message);
    }
  }
  for (const p of await list<InstallPlan>(Resources.InstallPlan, ns)) {
    add('InstallPlan', `${p.metadata.name} ${p.status?.phase}`, p.status?.message);
    for (const c of p.status?.conditions ?? [])
      add('InstallPlan', `${p.metadata.name} ${c.type}=${c.status} ${c.reason}`, c.message);
  }
  for (const c of await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns)) {
    add('CSV', `${c.metadata.name} ${c.status?.phase} ${c.status?.reason}`, c.status?.message);
  }
  for (const cs of await list<KubeObject & { status?: { message?: string; reason?: string } }>(
    Resources.CatalogSource,
    ns,
  )) {
    add('CatalogSource', `${cs.metadata?.name} ${cs.status?.reason}`, cs.status?.message);
  }
  for (const line of log) add('log', 'manager log', logMessage(line));
  return found;
}

/** Deletes the samples' CRDs (every copy of the widgets' group) and waits until they are gone. */
async function removeSampleCrds(): Promise<void> {
  const isSample = (name: string) =>
    name === 'dashboards.dashboard.bosun.dev' || name.endsWith('.sample.bosun.dev');
  type Crd = KubeObject & { status?: { conditions?: { type: string; reason?: string; message?: string }[] } };
  const crds = () =>
    list<Crd>(Builtin.CustomResourceDefinition).then((l) => l.filter((c) => isSample(c.metadata!.name!)));
  // A CRD goes once the API server has deleted its custom resources: on a loaded machine that
  // took longer than a minute. One still there is named with what its Terminating condition says.
  // One found without a deletion under way is deleted (again): a plan of the case before, still
  // retrying in the API server's view of it, or a delete the API server dropped while it
  // re-initialised the CRD's storage, leaves a CRD that no one deletes otherwise.
  await eventually(
    'the samples CRDs to be gone',
    async () => {
      const left = await crds();
      if (left.length === 0) return true;
      for (const crd of left)
        if (!crd.metadata!.deletionTimestamp)
          await remove(Builtin.CustomResourceDefinition, '', crd.metadata!.name!);
      throw new Error(
        left
          .map((c) => {
            const t = c.status?.conditions?.find((x) => x.type === 'Terminating');
            return `${c.metadata!.name!} (${t ? `${t.reason ?? ''}: ${t.message ?? ''}` : 'no Terminating condition'})`;
          })
          .join('; '),
      );
    },
    150_000,
  );
}

/**
 * A viewer of the web catalog with a token of its own (the manager reviews the token and asks
 * what the viewer may see): each answer that is not 200, with its body, goes to `answers`.
 */
async function askAsViewer(manager: ManagerProcess, answers: string[]): Promise<void> {
  const token = (
    await admin.request<{ status: { token: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/default/serviceaccounts/default/token`,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    })
  ).status.token;
  const url = await eventually('the manager to serve HTTP', async () => {
    for (const line of manager.log) {
      const u = (JSON.parse(line.startsWith('{') ? line : '{}') as { url?: string }).url;
      if (u) return u;
    }
    return undefined;
  });
  for (let i = 0; i < 60; i++) {
    const res = await fetch(`${url}/api/index`, { headers: { Authorization: `Bearer ${token}` } }).catch(
      () => undefined,
    );
    if (res && res.status !== 200) answers.push(`HTTP ${res.status}: ${await res.text()}`);
    await sleep(1_000);
  }
}

/**
 * Each rule of the ClusterRole, taken away alone, and where the failure that follows is reported.
 * Every case installs the same operator as above, in a namespace of its own, from a manager
 * with the ClusterRole less that rule; the report must name a verb, resource and group of the
 * rule as refused.
 */
interface RuleCase {
  /** Where the refusal is reported. */
  reportedIn: Channel;
  /** The install is scoped to an OperatorGroup's ServiceAccount (which the manager impersonates). */
  scoped?: boolean;
  /** A viewer asks the web catalog with a bearer token (reviewed and authorized by the manager). */
  webViewer?: boolean;
}
const ruleCases: Record<string, RuleCase> = {
  // Kinds the manager watches: it cannot list them, so its caches never fill and no reconcile
  // runs; the manager stays unready (/readyz) and its log names the refused list.
  'operators.coreos.com: catalogsources,subscriptions,installplans,clusterserviceversions,operatorgroups,operatorconditions,operators [get,list,watch,create,update,patch,delete]':
    { reportedIn: 'log' },
  // OLM v1's ClusterCatalogs and ClusterExtensions, watched the same way: a refused list leaves
  // the manager unready, logged.
  'olm.operatorframework.io: clustercatalogs,clustercatalogs/status,clusterextensions,clusterextensions/status [get,list,watch,patch]':
    {
      reportedIn: 'log',
    },
  // The manager's start-up check of its CRDs is refused: it exits 1 with the API server's words.
  'apiextensions.k8s.io: customresourcedefinitions [get,list,watch,create,update,patch,delete]': {
    reportedIn: 'log',
  },
  'core: serviceaccounts,services,configmaps,secrets [get,list,watch,create,update,patch,delete]': {
    reportedIn: 'log',
  },
  'apps: deployments [get,list,watch,create,update,patch,delete]': { reportedIn: 'log' },
  'rbac.authorization.k8s.io: roles,rolebindings,clusterroles,clusterrolebindings [get,list,watch,create,update,patch,delete]':
    { reportedIn: 'log' },
  'apiregistration.k8s.io: apiservices [get,list,watch,create,update,patch,delete]': { reportedIn: 'log' },
  'core: namespaces [get,list,watch,patch]': { reportedIn: 'log' },
  // Status writes: the reconcile fails, and a Forbidden Event on the object says why.
  'operators.coreos.com: catalogsources/status,subscriptions/status,installplans/status,clusterserviceversions/status,operatorgroups/status,operatorconditions/status,operators/status [get,update,patch]':
    { reportedIn: 'Event' },
  // A bundle's kinds: the InstallPlan fails (InstallComponentFailed) naming the step and the refusal.
  'scheduling.k8s.io: priorityclasses [get,list,watch,create,update,patch,delete]': {
    reportedIn: 'InstallPlan',
  },
  'networking.k8s.io: networkpolicies [get,list,watch,create,update,patch,delete]': {
    reportedIn: 'InstallPlan',
  },
  'policy: poddisruptionbudgets [get,list,watch,create,update,patch,delete]': { reportedIn: 'InstallPlan' },
  'autoscaling.k8s.io: verticalpodautoscalers [get,list,watch,create,update,patch,delete]': {
    reportedIn: 'InstallPlan',
  },
  'monitoring.coreos.com: prometheusrules,servicemonitors,podmonitors [get,list,watch,create,update,patch,delete]':
    { reportedIn: 'InstallPlan' },
  'rbac.authorization.k8s.io: roles,clusterroles [escalate,bind]': { reportedIn: 'InstallPlan' },
  'core: serviceaccounts [impersonate]': { reportedIn: 'InstallPlan', scoped: true },
  // A CSV's webhooks.
  'admissionregistration.k8s.io: validatingwebhookconfigurations,mutatingwebhookconfigurations [get,list,watch,create,update,patch,delete]':
    { reportedIn: 'Event' },
  // The PackageManifest API's registration, when the manager starts.
  // (refused, the manager exits 1 with the API server's words)
  'discovery.k8s.io: endpointslices [get,create,update,patch,delete]': { reportedIn: 'log' },
  // Reviews of the web catalog's viewers.
  'authentication.k8s.io: tokenreviews [create]': { reportedIn: 'log', webViewer: true },
  'authorization.k8s.io: subjectaccessreviews [create]': { reportedIn: 'log', webViewer: true },
  // Events are best effort: the install goes on, and the manager warns once per refusal.
  'core: events [create,patch]': { reportedIn: 'log' },
};

describe.skipIf(skip)('each rule of the manager ClusterRole taken away alone', () => {
  it('every rule has a case', () => {
    expect(Object.keys(ruleCases).sort()).toEqual((managerRole.rules ?? []).map(ruleName).sort());
  });

  const all = (managerRole.rules ?? []).map((rule, i) => ({ rule, i, name: ruleName(rule) }));
  it.each(all)(
    'without $name: the refusal is reported',
    async ({ rule, i }) => {
      const without = { ...managerRole, rules: (managerRole.rules ?? []).filter((_, j) => j !== i) };
      await admin.request({
        method: 'PUT',
        path: objectPath(R.ClusterRole, 'bosun-manager'),
        body: without,
      });
      const manager = managerAs(await tokenOf(Global, 'bosun-manager'));
      const ns = `lp-${i}-${process.pid}`;
      const c = ruleCases[ruleName(rule)];
      const web: string[] = [];
      // Each case starts without the operators' CRDs: one left by an earlier case (an install
      // refused half way writes its CRDs but never the CSV whose view roles let the manager list
      // their custom resources) would refuse this case's CRD safety check instead.
      await removeSampleCrds();
      try {
        await namespaceWithSamples(ns, c?.scoped ? 'installer' : undefined);
        if (c?.webViewer) void askAsViewer(manager, web);
        await create(Resources.Subscription, ns, {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'Subscription',
          metadata: { name: Dashboard },
          spec: { name: Dashboard, source: 'testop', sourceNamespace: ns, channel: 'stable' },
        } as KubeObject);
        let seen: Refusal[] = [];
        await eventually(
          `a report naming a permission of ${ruleName(rule)} in the ${c?.reportedIn}`,
          async () => {
            seen = [
              ...(await refusals(ns, manager.log)),
              ...web.map((message) => ({ channel: 'HTTP' as const, where: 'web catalog', message })),
            ];
            return seen.some((r) => r.channel === c?.reportedIn && namesRule(r.message, rule))
              ? true
              : undefined;
          },
          90_000,
        ).catch((err: Error) => {
          throw new Error(`${err.message}; seen: ${JSON.stringify(seen, null, 1)}`, { cause: err });
        });
      } finally {
        await manager.stop();
        await remove(R.Namespace, '', ns);
        await admin.request({
          method: 'PUT',
          path: objectPath(R.ClusterRole, 'bosun-manager'),
          body: managerRole,
        });
      }
    },
    360_000,
  );
});
