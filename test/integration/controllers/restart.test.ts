/**
 * Restarting the manager at any point of an install converges to the end state of an
 * uninterrupted install, with no duplicate InstallPlans, RBAC or anything else.
 *
 * The operator installed here has a CRD, RBAC (permissions and clusterPermissions), a Deployment
 * and a dependency on a second package, which gets a generated Subscription. Each case watches
 * the API, stops the running manager the moment the install reaches its point (as a killed
 * process stops: see `crash`), checks that the install really was left there, starts a new
 * manager and compares what it converges to with one expected end state; the first row, never
 * interrupted, shows that this is what an uninterrupted install gives.
 *
 * Each case has its own namespace and its own CRD (the group is named after the namespace), so
 * every install starts from nothing: a CRD left Established by an earlier case would let the
 * InstallPlan apply all its steps in one go, and there would be no "some steps Created" to stop at.
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { KubeObject, ResourceType } from '../../../src/apis/meta.js';
import { Builtin } from '../../../src/kube/resources.js';
import { operatorGroupRoleName } from '../../../src/install/operatorgroup-roles.js';
import { RoleSuffix } from '../../../src/install/provided-api-roles.js';
import {
  type CatalogSource,
  type ClusterServiceVersion,
  ConnectionState,
  CSVPhase,
  type InstallPlan,
  InstallPlanPhase,
  Label,
  type OperatorCondition,
  StepStatus,
  type Subscription,
  SubscriptionState,
} from '../../../src/apis/operators.js';
import { type Deployment, InstallPlanSubscriptionLabel } from '../../../src/controllers/context.js';
import { type RunningManager, startManager } from '../../../src/manager/manager.js';
import { generatedSubscriptionName } from '../../../src/controllers/subscription-plan.js';
import { kubeConfig, openWatch } from '../client-node.js';
import { eventually, freshNamespace } from '../support.js';
import { failedReconcileLogger, inline } from './install-harness.js';
import { gadgetCrd, operatorCsv, operatorDeployment } from '../../support/operator-objects.js';
import {
  ConfigMapResource,
  catalogSource,
  client,
  create,
  get,
  list,
  Resources,
  subscription,
} from './support.js';

// ---- the operator and its dependency, as a file-based catalog with inline manifests ----

const Op = {
  package: 'restartop',
  csv: 'restartop.v1.0.0',
  deployment: 'restartop-controller',
  serviceAccount: 'restartop',
} as const;
const Dep = {
  package: 'restartdep',
  csv: 'restartdep.v1.0.0',
  deployment: 'restartdep-controller',
  serviceAccount: 'restartdep',
} as const;
const catalogName = 'restart';

/** The operator's own API group: one per namespace, so each case installs a CRD that is new. */
const groupFor = (ns: string) => `${ns}.restart.bosun.dev`;
const crdNameFor = (ns: string) => `gadgets.${groupFor(ns)}`;

/** The catalog for namespace `ns`: `restartop` (CRD, RBAC, Deployment) requires `restartdep`. */
function catalogJson(ns: string): string {
  const group = groupFor(ns);
  const op = operatorCsv(Op.csv, {
    owned: [{ name: crdNameFor(ns), version: 'v1', kind: 'Gadget' }],
    permissions: [
      {
        serviceAccountName: Op.serviceAccount,
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: [group], resources: ['gadgets', 'gadgets/status'], verbs: ['*'] },
        ],
      },
    ],
    clusterPermissions: [
      {
        serviceAccountName: Op.serviceAccount,
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }],
      },
    ],
    deployments: [
      operatorDeployment(Op.deployment, Op.serviceAccount, 'restartop', 'registry.example/restartop:v1.0.0'),
    ],
  });
  const dep = operatorCsv(Dep.csv, {
    permissions: [
      {
        serviceAccountName: Dep.serviceAccount,
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
      },
    ],
    deployments: [
      operatorDeployment(
        Dep.deployment,
        Dep.serviceAccount,
        'restartdep',
        'registry.example/restartdep:v1.0.0',
      ),
    ],
  });
  const pkg = (name: string) => ({ schema: 'olm.package', name, defaultChannel: 'stable' });
  const channel = (pkgName: string, entry: string) => ({
    schema: 'olm.channel',
    package: pkgName,
    name: 'stable',
    entries: [{ name: entry }],
  });
  const docs = [
    pkg(Op.package),
    channel(Op.package, Op.csv),
    {
      schema: 'olm.bundle',
      package: Op.package,
      name: Op.csv,
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: Op.package, version: '1.0.0' } },
        { type: 'olm.package.required', value: { packageName: Dep.package, versionRange: '>=1.0.0' } },
        inline(gadgetCrd(groupFor(ns))),
        inline(op),
      ],
    },
    pkg(Dep.package),
    channel(Dep.package, Dep.csv),
    {
      schema: 'olm.bundle',
      package: Dep.package,
      name: Dep.csv,
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: Dep.package, version: '1.0.0' } },
        inline(dep),
      ],
    },
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n');
}

// ---- kinds listed for the end state ----

const RoleResource = Builtin.Role;
const RoleBindingResource = Builtin.RoleBinding;
const ClusterRoleResource = Builtin.ClusterRole;
const ClusterRoleBindingResource = Builtin.ClusterRoleBinding;
const ServiceAccountResource = Builtin.ServiceAccount;
const DeploymentResource = Builtin.Deployment;
const CrdResource = Builtin.CustomResourceDefinition;

async function listCluster<T extends KubeObject>(
  resource: ResourceType,
  labelSelector: string,
): Promise<T[]> {
  const path = `/apis/${resource.group}/${resource.version}/${resource.plural}`;
  const c = client();
  try {
    return (await c.request<{ items: T[] }>({ path, query: { labelSelector } })).items;
  } finally {
    c.close();
  }
}

// ---- the manager ----

let manager: RunningManager | undefined;

/** The whole manager, every controller, as `bosun operator run` runs it (without the HTTP server). */
function startRestartableManager(): Promise<RunningManager> {
  // Failed reconciles are retried, which is normal here: the manager stops mid-install.
  const logger = failedReconcileLogger(() => undefined);
  return startManager({ kubeconfig: inject('kubeconfig'), installCrds: true, metricsAddr: null, logger });
}

beforeAll(async () => {
  manager = await startRestartableManager();
});
afterAll(async () => {
  await manager?.stop();
});

const namespaces: string[] = [];
afterEach(async () => {
  // The namespace goes with its own cleanup; the case's CRD and cluster RBAC do not.
  const c = client();
  for (const ns of namespaces.splice(0)) {
    for (const r of [ClusterRoleBindingResource, ClusterRoleResource]) {
      await c.request({
        method: 'DELETE',
        path: `/apis/${r.group}/${r.version}/${r.plural}`,
        query: { labelSelector: `${Label.OwnerNamespace}=${ns}` },
      });
    }
    await c
      .request({
        method: 'DELETE',
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdNameFor(ns)}`,
      })
      .catch(() => undefined);
  }
  c.close();
});

/**
 * Stops `m` as a killed process stops: from this moment on none of its requests reaches the API
 * server (those already sent still land, as they would), and its reconciles in flight end there.
 * A graceful `stop()` alone lets them run to the end, which moves the install on past the point
 * it was stopped at: stopped when the Subscription appears, it would still create the
 * InstallPlan; stopped when the InstallPlan appears, it would still apply the CRD.
 */
function crash(m: RunningManager): Promise<void> {
  const cutOff = () => Promise.reject(new Error('the manager was stopped'));
  Object.assign(m.ctx.client, { request: cutOff, stream: cutOff });
  return m.stop();
}

// ---- watching the install ----

type Watched = 'Subscription' | 'InstallPlan' | 'ClusterServiceVersion';
interface Seen {
  kind: Watched;
  type: string;
  obj: KubeObject;
}

/**
 * Opens watches on the namespace's Subscriptions, InstallPlans and CSVs; `onSeen` gets every event.
 * Returns a function that closes them.
 */
async function watchInstall(ns: string, onSeen: (s: Seen) => void): Promise<() => void> {
  const kc = kubeConfig();
  const watched: [Watched, ResourceType][] = [
    ['Subscription', Resources.Subscription],
    ['InstallPlan', Resources.InstallPlan],
    ['ClusterServiceVersion', Resources.ClusterServiceVersion],
  ];
  const watches = await Promise.all(
    watched.map(([kind, r]) =>
      openWatch(kc, `/apis/${r.group}/${r.version}/namespaces/${ns}/${r.plural}`, (type, obj) =>
        onSeen({ kind, type, obj: obj as KubeObject }),
      ),
    ),
  );
  return () => {
    for (const w of watches) w.abort();
  };
}

const isOpPlan = (s: Seen): s is Seen & { obj: InstallPlan } =>
  s.kind === 'InstallPlan' && s.obj.metadata?.labels?.[InstallPlanSubscriptionLabel] === Op.package;
const isOpCsv = (s: Seen): s is Seen & { obj: ClusterServiceVersion } =>
  s.kind === 'ClusterServiceVersion' && s.obj.metadata?.name === Op.csv;

/** Some of the plan's steps are Created and some are not. */
function partly(plan: InstallPlan | undefined): boolean {
  const statuses = (plan?.status?.plan ?? []).map((step) => step.status);
  return statuses.includes(StepStatus.Created) && statuses.some((st) => st !== StepStatus.Created);
}

async function opPlans(ns: string): Promise<InstallPlan[]> {
  const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
  return plans.filter((p) => p.metadata.labels?.[InstallPlanSubscriptionLabel] === Op.package);
}

// ---- the restart points ----

interface RestartPoint {
  name: string;
  /** The event at which the manager is stopped; none: the install runs uninterrupted. */
  at?: (s: Seen) => boolean;
  /** Checks, with the manager stopped, that the install was left at this point. */
  leftAt?: (ns: string) => Promise<void>;
}

const opCsv = (ns: string) => get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, Op.csv);

const points: RestartPoint[] = [
  { name: 'at no point' },
  {
    name: 'right after the Subscription exists',
    at: (s) => s.kind === 'Subscription' && s.type === 'ADDED' && s.obj.metadata?.name === Op.package,
    async leftAt(ns) {
      expect(await get(Resources.Subscription, ns, Op.package)).toBeDefined();
      expect(await opPlans(ns)).toEqual([]);
    },
  },
  {
    name: 'right after the InstallPlan is created',
    at: (s) => isOpPlan(s) && s.type === 'ADDED',
    async leftAt(ns) {
      const plans = await opPlans(ns);
      expect(plans).toHaveLength(1);
      expect(partly(plans[0])).toBe(false);
      expect(await get(CrdResource, '', crdNameFor(ns))).toBeUndefined();
    },
  },
  {
    name: 'while the InstallPlan is Installing (some steps Created, some not)',
    at: (s) => isOpPlan(s) && s.obj.status?.phase === InstallPlanPhase.Installing && partly(s.obj),
    async leftAt(ns) {
      const [plan] = await opPlans(ns);
      expect(plan?.status?.phase).toBe(InstallPlanPhase.Installing);
      expect(partly(plan)).toBe(true);
      expect(await get(CrdResource, '', crdNameFor(ns))).toBeDefined();
      expect(await opCsv(ns)).toBeUndefined();
    },
  },
  {
    name: 'right after the CSV is created',
    at: (s) => isOpCsv(s) && s.type === 'ADDED',
    async leftAt(ns) {
      const c = await opCsv(ns);
      expect(c).toBeDefined();
      expect([undefined, CSVPhase.Pending]).toContain(c?.status?.phase);
      expect(await get(DeploymentResource, ns, Op.deployment)).toBeUndefined();
    },
  },
  {
    name: 'when the CSV is InstallReady',
    at: (s) => isOpCsv(s) && s.obj.status?.phase === CSVPhase.InstallReady,
    async leftAt(ns) {
      expect((await opCsv(ns))?.status?.phase).toBe(CSVPhase.InstallReady);
      expect(await get(DeploymentResource, ns, Op.deployment)).toBeUndefined();
    },
  },
  {
    name: 'while the CSV is Installing (Deployment created, not yet Available)',
    at: (s) => isOpCsv(s) && s.obj.status?.phase === CSVPhase.Installing,
    async leftAt(ns) {
      expect((await opCsv(ns))?.status?.phase).toBe(CSVPhase.Installing);
      expect(await get(DeploymentResource, ns, Op.deployment)).toBeDefined();
    },
  },
];

// ---- the end state ----

const available = (d: Deployment) =>
  d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true;

/**
 * Everything the install made, as sorted lines with the namespace written `<ns>` and generated
 * hashes `<hash>`, so two installs in different namespaces compare equal, and a duplicate (the
 * same object again under another generated name) shows as a line too many. Objects in the
 * namespace name the CSV that owns them, and whether that is the live CSV.
 */
async function endState(ns: string): Promise<Record<string, string[]>> {
  const inNs = (s: string) => s.split(ns).join('<ns>');
  const norm = (name: string | undefined) => inNs(name ?? '').replace(/-[0-9a-f]{10}$/, '-<hash>');
  const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
  const uids = new Map(csvs.map((c) => [c.metadata.uid, c.metadata.name]));
  const owners = (o: KubeObject) =>
    (o.metadata?.ownerReferences ?? [])
      .map(
        (r) =>
          `${r.kind}/${r.name}${r.kind === 'ClusterServiceVersion' && uids.get(r.uid) !== r.name ? ' (stale uid)' : ''}`,
      )
      .sort()
      .join(',');
  const lines = <T extends KubeObject>(items: T[], line: (o: T) => string) =>
    items.map(line).map(inNs).sort();
  const named = (o: KubeObject) => `${norm(o.metadata?.name)}${owners(o) ? ` owned by ${owners(o)}` : ''}`;

  const subs = await list<Subscription>(Resources.Subscription, ns);
  const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
  const selector = `${Label.OwnerNamespace}=${ns}`;
  const accounts = (await list<KubeObject>(ServiceAccountResource, ns)).filter(
    (a) => a.metadata?.name !== 'default',
  );
  const crdObj = await get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
    CrdResource,
    '',
    crdNameFor(ns),
  );
  return {
    subscriptions: lines(subs, (s) => {
      const ref = s.status?.installPlanRef?.name;
      const plan = plans.find((p) => p.metadata.name === ref);
      const planOf = plan
        ? `plan for ${plan.metadata.labels?.[InstallPlanSubscriptionLabel]}`
        : `plan ${ref}`;
      return `${s.metadata.name} ${s.spec.name}: state=${s.status?.state} currentCSV=${s.status?.currentCSV} installedCSV=${s.status?.installedCSV} ${planOf}`;
    }),
    installPlans: lines(
      plans,
      (p) =>
        `${p.metadata.labels?.[InstallPlanSubscriptionLabel]}: ${p.spec.clusterServiceVersionNames.join(',')} ${p.status?.phase}`,
    ),
    csvs: lines(csvs, (c) => `${c.metadata.name} ${c.status?.phase}`),
    deployments: lines(
      await list<Deployment>(DeploymentResource, ns),
      (d) => `${named(d)}${available(d) ? ' Available' : ' not Available'}`,
    ),
    serviceAccounts: lines(accounts, named),
    roles: lines(await list(RoleResource, ns), named),
    roleBindings: lines(await list(RoleBindingResource, ns), named),
    clusterRoles: lines(await listCluster(ClusterRoleResource, selector), named),
    clusterRoleBindings: lines(await listCluster(ClusterRoleBindingResource, selector), named),
    operatorConditions: lines(await list<OperatorCondition>(Resources.OperatorCondition, ns), named),
    crd: crdObj
      ? [
          `${norm(crdObj.metadata?.name)} ${crdObj.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? 'Established' : 'not Established'}`,
        ]
      : [],
  };
}

const depSub = (ns: string) => generatedSubscriptionName(Dep.package, 'stable', catalogName, ns);

/** What an install of restartop (and restartdep) leaves, whether interrupted or not. */
function expectedEndState(ns: string): Record<string, string[]> {
  const dep = depSub(ns).split(ns).join('<ns>');
  const byOp = `owned by ClusterServiceVersion/${Op.csv}`;
  const byDep = `owned by ClusterServiceVersion/${Dep.csv}`;
  return {
    subscriptions: [
      `${dep} ${Dep.package}: state=AtLatestKnown currentCSV=${Dep.csv} installedCSV=${Dep.csv} plan for ${dep}`,
      `${Op.package} ${Op.package}: state=AtLatestKnown currentCSV=${Op.csv} installedCSV=${Op.csv} plan for ${Op.package}`,
    ].sort(),
    installPlans: [`${dep}: ${Dep.csv} Complete`, `${Op.package}: ${Op.csv} Complete`].sort(),
    csvs: [`${Dep.csv} Succeeded`, `${Op.csv} Succeeded`],
    deployments: [`${Dep.deployment} ${byDep} Available`, `${Op.deployment} ${byOp} Available`],
    serviceAccounts: [`${Dep.serviceAccount} ${byDep}`, `${Op.serviceAccount} ${byOp}`],
    // A Role and RoleBinding for the permissions, and one letting the operator write its OperatorCondition.
    roles: [
      `${Dep.csv} ${byDep}`,
      `${Dep.csv}-${Dep.serviceAccount}-<hash> ${byDep}`,
      `${Op.csv} ${byOp}`,
      `${Op.csv}-${Op.serviceAccount}-<hash> ${byOp}`,
    ],
    roleBindings: [
      `${Dep.csv} ${byDep}`,
      `${Dep.csv}-${Dep.serviceAccount}-<hash> ${byDep}`,
      `${Op.csv} ${byOp}`,
      `${Op.csv}-${Op.serviceAccount}-<hash> ${byOp}`,
    ],
    // The operator's cluster RBAC, and its OperatorGroup's own roles (src/install/operatorgroup-roles.ts).
    clusterRoles: [
      `${Op.csv}-<hash>`,
      ...Object.values(RoleSuffix).map((s) => operatorGroupRoleName({ namespace: ns, name: 'og' }, s)),
    ].sort(),
    clusterRoleBindings: [`${Op.csv}-<hash>`],
    operatorConditions: [`${Dep.csv} ${byDep}`, `${Op.csv} ${byOp}`],
    crd: [`gadgets.<ns>.restart.bosun.dev Established`],
  };
}

/** Both Subscriptions at their latest CSV, both CSVs Succeeded. */
async function installed(ns: string): Promise<void> {
  await eventually(
    'both operators installed',
    async () => {
      const subs = await list<Subscription>(Resources.Subscription, ns);
      const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
      const done =
        subs.length === 2 &&
        subs.every((s) => s.status?.state === SubscriptionState.AtLatestKnown && s.status.installedCSV) &&
        csvs.length === 2 &&
        csvs.every((c) => c.status?.phase === CSVPhase.Succeeded);
      return done ? true : undefined;
    },
    60_000,
  );
}

/** A namespace with the catalog as CatalogSource `restart`, read already, and an OperatorGroup. */
async function operatorNamespace(): Promise<string> {
  const ns = await freshNamespace('rs');
  namespaces.push(ns);
  await create(ConfigMapResource, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'restart-catalog' },
    data: { 'catalog.json': catalogJson(ns) },
  } as never);
  await create(
    Resources.CatalogSource,
    ns,
    catalogSource(ns, catalogName, { sourceType: 'configmap', configMap: 'restart-catalog' }),
  );
  await create(Resources.OperatorGroup, ns, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: ns },
    spec: { targetNamespaces: [ns] },
  });
  await eventually('the catalog to be read', async () => {
    const cs = await get<CatalogSource>(Resources.CatalogSource, ns, catalogName);
    return cs?.status?.connectionState?.lastObservedState === ConnectionState.Ready ? true : undefined;
  });
  return ns;
}

describe('restarting the manager during an install', () => {
  it.each(points.map((p) => [p.name, p] as const))(
    'manager stopped %s: the install converges to the uninterrupted end state',
    async (_name, point) => {
      const ns = await operatorNamespace();
      let stopped: Promise<void> | undefined;
      const close = await watchInstall(ns, (seen) => {
        if (stopped || !point.at?.(seen)) return;
        stopped = crash(manager!);
      });
      try {
        await create(
          Resources.Subscription,
          ns,
          subscription(ns, Op.package, { name: Op.package, source: catalogName, channel: 'stable' }),
        );
        if (point.at) {
          await eventually(`the install to reach "${point.name}"`, async () => (stopped ? true : undefined));
          await stopped;
          try {
            await point.leftAt?.(ns);
          } finally {
            manager = await startRestartableManager();
          }
        }
      } finally {
        close();
      }
      await installed(ns);
      await manager!.idle();
      expect(await endState(ns)).toEqual(expectedEndState(ns));
    },
  );
});
