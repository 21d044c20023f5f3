/**
 * What an install may grant, on a real API server with RBAC, through a running manager
 * (Subscription → InstallPlan → CSV):
 * - an OperatorGroup naming a ServiceAccount (`spec.serviceAccountName`) installs as it: a
 *   ServiceAccount holding exactly what the test operator needs installs it; one lacking
 *   permissions refuses the plan, listing every one, with nothing created; one that could not
 *   grant what the CSV asks is refused by the pre-check, and the API server's own escalation check
 *   refuses the same write made directly as that ServiceAccount; a bundle asking for `*` on `*` is
 *   refused up front, however much the ServiceAccount may do; a ServiceAccount that does not exist
 *   holds the plan back until it does;
 * - bundle RBAC binding roles to everyone, or cluster-admin to others, is left out and reported;
 *   the OperatorGroup's bosun.dev/allow-broad-rbac lets it through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type {
  ClusterServiceVersion,
  InstallPlan,
  OperatorGroup,
  Subscription,
} from '../../../src/apis/operators.js';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { Deployment } from '../../../src/controllers/context.js';
import { Applier } from '../../../src/kube/apply.js';
import { ApiError } from '../../../src/kube/client.js';
import { Builtin } from '../../../src/kube/resources.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { eventually, freshNamespace } from '../support.js';
import { canI, inline, TestOperator, testBundle, testCSV } from './install-harness.js';
import {
  catalogSource,
  client,
  ConfigMapResource,
  create,
  eventsFor,
  get,
  list,
  mergePatch,
  remove,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

let manager: RunningManager;
beforeAll(async () => {
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
});

const rbacV1 = 'rbac.authorization.k8s.io/v1';
const Installer = 'installer';

// ---- the catalog: one version of the test operator, with extra manifests ----

function catalogOf(bundle: BundleDoc): string {
  return [
    { schema: 'olm.package', name: TestOperator.package, defaultChannel: 'stable' },
    {
      schema: 'olm.channel',
      package: TestOperator.package,
      name: 'stable',
      entries: [{ name: bundle.name }],
    },
    bundle,
  ]
    .map((d) => JSON.stringify(d))
    .join('\n');
}

/** testop v0.1.0, with `extra` manifests and optionally another CSV. */
function bundle(extra: object[] = [], csv: object = testCSV('0.1.0')): BundleDoc {
  const b = testBundle('0.1.0', csv);
  return { ...b, properties: [...b.properties, ...extra.map(inline)] };
}

/**
 * A fresh namespace serving `catalog` as CatalogSource `testop`, with an OperatorGroup `og`
 * targeting it (naming `serviceAccountName` when given, annotated with `annotations`).
 */
async function namespaceServing(
  prefix: string,
  make: (ns: string) => BundleDoc,
  og: { serviceAccountName?: string; annotations?: Record<string, string> } = {},
): Promise<string> {
  const ns = await freshNamespace(prefix);
  await create(ConfigMapResource, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'testop-catalog' },
    data: { 'catalog.json': catalogOf(make(ns)) },
  } as never);
  await create(
    Resources.CatalogSource,
    ns,
    catalogSource(ns, 'testop', { sourceType: 'configmap', configMap: 'testop-catalog' }),
  );
  await create<OperatorGroup>(Resources.OperatorGroup, ns, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: ns, ...(og.annotations ? { annotations: og.annotations } : {}) },
    spec: {
      targetNamespaces: [ns],
      ...(og.serviceAccountName ? { serviceAccountName: og.serviceAccountName } : {}),
    },
  });
  return ns;
}

const subscribe = (ns: string) =>
  create(
    Resources.Subscription,
    ns,
    subscription(ns, 'testop', { name: TestOperator.package, source: 'testop' }),
  );

async function planOf(ns: string, phase: string): Promise<InstallPlan> {
  return eventually(
    `an InstallPlan in ${ns} in phase ${phase}`,
    async () => {
      const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
      return plans.find((p) => p.status?.phase === phase);
    },
    90_000,
  );
}

// ---- the ServiceAccount installs run as, and its rights ----

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };
const cp = ['create', 'patch'];

/** In the install namespace: writing each namespaced object of the test operator, and what its Roles grant. */
const namespaceWrites: Rule[] = [
  { apiGroups: [''], resources: ['serviceaccounts', 'services', 'configmaps'], verbs: cp },
  { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: cp },
  {
    apiGroups: ['operators.coreos.com'],
    resources: ['clusterserviceversions', 'operatorconditions'],
    verbs: cp,
  },
  // What the CSV's permissions and the OperatorCondition's Role grant, held so it may be granted.
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['testop.bosun.dev'], resources: ['widgets'], verbs: ['*'] },
  {
    apiGroups: ['operators.coreos.com'],
    resources: ['operatorconditions', 'operatorconditions/status'],
    verbs: ['get', 'update', 'patch'],
  },
];
const deploymentWrites: Rule[] = [{ apiGroups: ['apps'], resources: ['deployments'], verbs: cp }];
/** Cluster-wide: the CRD, the ClusterRole and binding of the CSV's clusterPermissions. */
const clusterWrites: Rule[] = [
  {
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions'],
    verbs: cp,
    resourceNames: [TestOperator.crd],
  },
  { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles', 'clusterrolebindings'], verbs: cp },
];
/** What the CSV's clusterPermissions grant. */
const nodesRead: Rule[] = [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }];

/** Cluster-scoped objects a test made, removed when the file is done. */
const clusterObjects: { kind: 'ClusterRole' | 'ClusterRoleBinding'; name: string }[] = [];
afterAll(async () => {
  for (const o of clusterObjects) await remove(Builtin[o.kind], '', o.name);
});

/** The ServiceAccount `installer` in `ns`, granted `namespaced` rules there and `cluster` rules cluster-wide. */
async function installer(
  ns: string,
  grants: { namespaced?: Record<string, Rule[]>; cluster?: Rule[]; clusterRole?: string } = {},
) {
  await create(Builtin.ServiceAccount, ns, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: Installer },
  });
  const subjects = [{ kind: 'ServiceAccount', name: Installer, namespace: ns }];
  for (const [name, rules] of Object.entries(grants.namespaced ?? {})) {
    await create(Builtin.Role, ns, {
      apiVersion: rbacV1,
      kind: 'Role',
      metadata: { name },
      rules,
    } as KubeObject);
    await create(Builtin.RoleBinding, ns, {
      apiVersion: rbacV1,
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    } as KubeObject);
  }
  const clusterRole = grants.clusterRole ?? (grants.cluster ? `${ns}-installer` : undefined);
  if (grants.cluster) {
    await create(Builtin.ClusterRole, '', {
      apiVersion: rbacV1,
      kind: 'ClusterRole',
      metadata: { name: `${ns}-installer` },
      rules: grants.cluster,
    } as KubeObject);
    clusterObjects.push({ kind: 'ClusterRole', name: `${ns}-installer` });
  }
  if (clusterRole) {
    await create(Builtin.ClusterRoleBinding, '', {
      apiVersion: rbacV1,
      kind: 'ClusterRoleBinding',
      metadata: { name: `${ns}-installer` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects,
    } as KubeObject);
    clusterObjects.push({ kind: 'ClusterRoleBinding', name: `${ns}-installer` });
  }
}

/** What the install would have created in `ns` and cluster-wide for it: nothing, when refused. */
async function installedObjects(ns: string): Promise<string[]> {
  const found: string[] = [];
  const c = client();
  const csvs = await c.request<{ items: KubeObject[] }>({
    path: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions`,
  });
  found.push(...csvs.items.map((o) => `ClusterServiceVersion/${o.metadata?.name}`));
  for (const [kind, path] of [
    ['ServiceAccount', `/api/v1/namespaces/${ns}/serviceaccounts`],
    ['ConfigMap', `/api/v1/namespaces/${ns}/configmaps`],
    ['Service', `/api/v1/namespaces/${ns}/services`],
    ['Role', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`],
    ['RoleBinding', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`],
    ['Deployment', `/apis/apps/v1/namespaces/${ns}/deployments`],
    ['ClusterRole', `/apis/rbac.authorization.k8s.io/v1/clusterroles`],
    ['ClusterRoleBinding', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`],
  ] as const) {
    const items = (
      await c.request<{ items: KubeObject[] }>({
        path,
        query: { labelSelector: `olm.owner.namespace=${ns}` },
      })
    ).items;
    // The OperatorGroup's own aggregating roles (olm.og.<group>.*) are the group's, made for any group.
    found.push(
      ...items
        .filter((o) => !o.metadata?.name?.startsWith('olm.og.'))
        .map((o) => `${kind}/${o.metadata?.name}`),
    );
  }
  return found;
}

describe('installs scoped to an OperatorGroup ServiceAccount', () => {
  it('installs as the ServiceAccount when it holds exactly what the operator needs, and the CSV writes as it too', async () => {
    const ns = await namespaceServing('scoped-ok', () => bundle(), { serviceAccountName: Installer });
    await installer(ns, {
      namespaced: { installer: namespaceWrites, 'installer-deployments': deploymentWrites },
      cluster: [...clusterWrites, ...nodesRead],
    });
    await subscribe(ns);
    const csv = await eventually(
      'the CSV to be Succeeded',
      async () => {
        const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, TestOperator.v1);
        return c?.status?.phase === 'Succeeded' ? c : undefined;
      },
      120_000,
    );
    expect(csv.status?.reason).toBe('InstallSucceeded');
    expect((await planOf(ns, 'Complete')).status?.attenuatedServiceAccountRef).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      namespace: ns,
      name: Installer,
    });
    expect(
      (await planOf(ns, 'Complete')).status?.conditions?.find((c) => c.type === 'Installed')?.status,
    ).toBe('True');
    const og = await get<OperatorGroup>(Resources.OperatorGroup, ns, 'og');
    expect(og?.status?.serviceAccountRef).toMatchObject({
      kind: 'ServiceAccount',
      namespace: ns,
      name: Installer,
    });
    expect(og?.status?.conditions ?? []).toEqual([]);
    // The operator got what its CSV asks: the install granted it as the ServiceAccount could.
    expect(
      await canI(
        client(),
        { namespace: ns, name: TestOperator.serviceAccount },
        { verb: 'list', resource: 'nodes' },
      ),
    ).toBe(true);

    // The CSV controller writes as the ServiceAccount too: without the right to write
    // Deployments, the one deleted is not put back, and the CSV says who was refused.
    await remove(Builtin.RoleBinding, ns, 'installer-deployments');
    await remove(Builtin.Deployment, ns, TestOperator.deployment);
    const failed = await eventually(
      'the CSV to fail, refused',
      async () => {
        const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, TestOperator.v1);
        return c?.status?.phase === 'Failed' && c.status.reason === 'InstallComponentFailed' ? c : undefined;
      },
      120_000,
    );
    expect(failed.status?.message).toContain(`system:serviceaccount:${ns}:${Installer}`);
    expect(failed.status?.message).toContain('deployments');
    expect(await get<Deployment>(Builtin.Deployment, ns, TestOperator.deployment)).toBeUndefined();
  });

  it('refuses the plan when the ServiceAccount lacks permissions, listing every one, and creates nothing', async () => {
    const ns = await namespaceServing('scoped-no', () => bundle(), { serviceAccountName: Installer });
    // Only the namespace's writes: nothing cluster-wide, no Deployments.
    await installer(ns, { namespaced: { installer: namespaceWrites } });
    await subscribe(ns);
    const ip = await planOf(ns, 'Failed');
    const installed = ip.status?.conditions?.find((c) => c.type === 'Installed');
    expect(installed).toMatchObject({ status: 'False', reason: 'ServiceAccountLacksPermissions' });
    const message = ip.status?.message ?? '';
    expect(message).toContain(`scoped to ServiceAccount ${ns}/${Installer} (OperatorGroup og)`);
    const crd = `CustomResourceDefinition ${TestOperator.crd}: may not create customresourcedefinitions.apiextensions.k8s.io ${TestOperator.crd} cluster-wide, patch customresourcedefinitions.apiextensions.k8s.io ${TestOperator.crd} cluster-wide`;
    expect(message).toContain(crd);
    expect(message).toMatch(
      /ClusterRole testop\.v0\.1\.0-\w+: may not create clusterroles\.rbac\.authorization\.k8s\.io/,
    );
    expect(message).toMatch(
      /ClusterRole testop\.v0\.1\.0-\w+: grants what the ServiceAccount does not hold \(get nodes cluster-wide, list nodes cluster-wide\), and it may not escalate/,
    );
    expect(message).toMatch(/ClusterRoleBinding testop\.v0\.1\.0-\w+: may not create clusterrolebindings/);
    expect(message).toMatch(
      /ClusterRoleBinding testop\.v0\.1\.0-\w+: grants what the ServiceAccount does not hold \(get nodes cluster-wide, list nodes cluster-wide\), and it may not bind/,
    );
    // What the CSV controller would write after the plan is checked too.
    expect(message).toContain(
      `Deployment ${ns}/${TestOperator.deployment}: may not create deployments.apps ${TestOperator.deployment} in namespace ${ns}`,
    );
    expect(message).toMatch(/lacks 12 permissions/);
    // Nothing was created, not even what the ServiceAccount could have written.
    expect(await installedObjects(ns)).toEqual([]);
    expect(await get(Builtin.ServiceAccount, ns, TestOperator.serviceAccount)).toBeUndefined();
    // The Subscription and an Event say so.
    const sub = await eventually('the Subscription to report the failed plan', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'testop');
      const c = s?.status?.conditions?.find((x) => x.type === 'InstallPlanFailed');
      return c?.status === 'True' ? c : undefined;
    });
    expect(sub).toMatchObject({ reason: 'ServiceAccountLacksPermissions' });
    expect(sub.message).toContain(crd);
    const events = await eventsFor(ns, ip.metadata.name!);
    expect(events.find((e) => e.reason === 'ServiceAccountLacksPermissions')?.message).toContain(crd);
  });

  it('refuses a CSV granting what the ServiceAccount does not hold; written directly as it, the API server refuses it too', async () => {
    const ns = await namespaceServing('scoped-esc', () => bundle(), { serviceAccountName: Installer });
    // It may write every object, ClusterRoles included, but does not hold what the CSV grants
    // cluster-wide (nodes get, list), and may neither escalate nor bind.
    await installer(ns, {
      namespaced: { installer: namespaceWrites, 'installer-deployments': deploymentWrites },
      cluster: clusterWrites,
    });
    await subscribe(ns);
    const ip = await planOf(ns, 'Failed');
    expect(ip.status?.conditions?.find((c) => c.type === 'Installed')?.reason).toBe(
      'ServiceAccountLacksPermissions',
    );
    expect(ip.status?.message).toMatch(/lacks 4 permissions/);
    expect(ip.status?.message).toMatch(
      /ClusterRole testop\.v0\.1\.0-\w+: grants what the ServiceAccount does not hold \(get nodes cluster-wide, list nodes cluster-wide\), and it may not escalate clusterroles/,
    );
    expect(await installedObjects(ns)).toEqual([]);

    // Had the pre-check been bypassed: the same ClusterRole, applied as the ServiceAccount.
    const step = ip.status?.plan?.find((s) => s.resource.kind === 'ClusterRole');
    const role = JSON.parse(step?.resource.manifest ?? '{}') as KubeObject;
    const as = new Applier(client()).impersonating({ user: `system:serviceaccount:${ns}:${Installer}` });
    const refused = await as.apply(role).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe(403);
    expect((refused as ApiError).body).toContain('attempting to grant RBAC permissions not currently held');
    expect(await get(Builtin.ClusterRole, '', role.metadata!.name!)).toBeUndefined();
    // The same ServiceAccount may write a ClusterRole granting only what it holds: the refusal
    // above is the escalation check, not a missing right to write ClusterRoles.
    const held = { ...role, metadata: { name: `${ns}-held` }, rules: [clusterWrites[1]] } as KubeObject;
    await as.apply(held);
    clusterObjects.push({ kind: 'ClusterRole', name: `${ns}-held` });
    expect(await get(Builtin.ClusterRole, '', `${ns}-held`)).toBeDefined();
  });

  it('refuses a bundle asking for * on *, however much the ServiceAccount may do', async () => {
    const csv = testCSV('0.1.0');
    csv.spec.install.spec.clusterPermissions = [
      {
        serviceAccountName: TestOperator.serviceAccount,
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      },
    ];
    const ns = await namespaceServing('scoped-all', () => bundle([], csv), { serviceAccountName: Installer });
    // The ServiceAccount is cluster-admin: the SubjectAccessReviews would all say yes.
    await installer(ns, { clusterRole: 'cluster-admin' });
    await subscribe(ns);
    const ip = await planOf(ns, 'Failed');
    expect(ip.status?.conditions?.find((c) => c.type === 'Installed')?.reason).toBe('ScopedInstallRefused');
    expect(ip.status?.message).toContain(
      'ClusterServiceVersion/testop.v0.1.0: spec.install.spec.clusterPermissions[0].rules[0] asks for verbs [*] on [*] in API groups [*] for ServiceAccount testop',
    );
    expect(await installedObjects(ns)).toEqual([]);
    const sub = await eventually('the Subscription to say why', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'testop');
      return s?.status?.conditions?.find((x) => x.type === 'InstallPlanFailed' && x.status === 'True');
    });
    expect(sub.reason).toBe('ScopedInstallRefused');
  });

  it('holds the plan back while the ServiceAccount does not exist, and installs once it does', async () => {
    const ns = await namespaceServing('scoped-sa', () => bundle(), { serviceAccountName: Installer });
    await subscribe(ns);
    const og = await eventually('the OperatorGroup to say the ServiceAccount is missing', async () => {
      const g = await get<OperatorGroup>(Resources.OperatorGroup, ns, 'og');
      return g?.status?.conditions?.find((c) => c.type === 'OperatorGroupServiceAccount');
    });
    expect(og).toMatchObject({ status: 'True', reason: 'ServiceAccountNotFound' });
    const waiting = await eventually('the plan to wait for the ServiceAccount', async () => {
      const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
      return plans.find((p) => p.status?.conditions?.some((c) => c.reason === 'InstallCheckFailed'));
    });
    expect(waiting.status?.message).toBe(
      `ServiceAccount ${ns}/${Installer}, which OperatorGroup og installs as, does not exist; nothing is installed until it does`,
    );
    expect(await installedObjects(ns)).toEqual([]);
    const sub = await get<Subscription>(Resources.Subscription, ns, 'testop');
    expect(sub?.status?.conditions?.find((c) => c.type === 'InstallPlanPending')?.message).toContain(
      'does not exist',
    );

    await installer(ns, {
      namespaced: { installer: namespaceWrites, 'installer-deployments': deploymentWrites },
      cluster: [...clusterWrites, ...nodesRead],
    });
    await eventually(
      'the CSV to be Succeeded',
      async () => {
        const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, TestOperator.v1);
        return c?.status?.phase === 'Succeeded' ? c : undefined;
      },
      120_000,
    );
    const done = await planOf(ns, 'Complete');
    expect(done.status?.message).toBeUndefined();
    expect(done.status?.conditions?.find((c) => c.type === 'Installed')?.status).toBe('True');
    const ready = await eventually('the OperatorGroup to refer to the ServiceAccount', async () => {
      const g = await get<OperatorGroup>(Resources.OperatorGroup, ns, 'og');
      return g?.status?.serviceAccountRef ? g : undefined;
    });
    expect(ready.status?.conditions?.find((c) => c.type === 'OperatorGroupServiceAccount')).toBeUndefined();
  });
});

describe('bundle RBAC beyond the operator', () => {
  /** A ClusterRole granting nearly nothing: reading widgets named `none`. */
  const reader = (ns: string) => ({
    apiVersion: rbacV1,
    kind: 'ClusterRole',
    metadata: { name: `${ns}-reader` },
    rules: [
      { apiGroups: ['testop.bosun.dev'], resources: ['widgets'], resourceNames: ['none'], verbs: ['get'] },
    ],
  });
  const everyone = (ns: string, subjects: object[]) => ({
    apiVersion: rbacV1,
    kind: 'ClusterRoleBinding',
    metadata: { name: `${ns}-everyone` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-reader` },
    subjects,
  });
  const authenticated = {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'Group',
    name: 'system:authenticated',
  };
  /** Whether any authenticated user (one in no group but system:authenticated) may do what the reader role grants. */
  const anyoneMayRead = async () => {
    const review = await client().request<{ status?: { allowed?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: 'somebody',
          groups: ['system:authenticated'],
          resourceAttributes: {
            verb: 'get',
            group: 'testop.bosun.dev',
            resource: 'widgets',
            name: 'none',
            namespace: 'default',
          },
        },
      },
    });
    return review.status?.allowed === true;
  };

  it('leaves out bindings to everyone and cluster-admin to others, installs the rest, and says so', async () => {
    const ns = await namespaceServing('broad', (n) =>
      bundle([
        reader(n),
        everyone(n, [authenticated, { kind: 'ServiceAccount', name: TestOperator.serviceAccount }]),
        {
          apiVersion: rbacV1,
          kind: 'ClusterRoleBinding',
          metadata: { name: `${n}-default-admin` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [
            {
              apiGroup: 'rbac.authorization.k8s.io',
              kind: 'User',
              name: `system:serviceaccount:${n}:default`,
            },
          ],
        },
      ]),
    );
    clusterObjects.push(
      { kind: 'ClusterRole', name: `${ns}-reader` },
      { kind: 'ClusterRoleBinding', name: `${ns}-everyone` },
      { kind: 'ClusterRoleBinding', name: `${ns}-default-admin` },
    );
    await subscribe(ns);
    const ip = await planOf(ns, 'Complete');
    const condition = ip.status?.conditions?.find((c) => c.type === 'BroadRBAC');
    expect(condition).toMatchObject({ status: 'True', reason: 'BroadRBACRefused' });
    expect(condition?.message).toMatch(
      new RegExp(
        `bundle testop\\.v0\\.1\\.0, ClusterRoleBinding/${ns}-everyone \\(properties\\[\\d+\\]\\): binds ClusterRole/${ns}-reader to Group system:authenticated \\(every authenticated user\\); that subject is left out`,
      ),
    );
    expect(condition?.message).toMatch(
      new RegExp(
        `ClusterRoleBinding/${ns}-default-admin \\(properties\\[\\d+\\]\\): binds ClusterRole/cluster-admin, which is the cluster-admin role, to User system:serviceaccount:${ns}:default, not a ServiceAccount of this install in namespace ${ns}; that subject is left out`,
      ),
    );
    const events = await eventsFor(ns, ip.metadata.name!);
    expect(events.find((e) => e.reason === 'BroadRBACRefused')?.type).toBe('Warning');

    // The operator's own subject stays; everyone else is out; the cluster-admin binding is not there.
    const binding = await get<KubeObject & { subjects?: unknown[] }>(
      Builtin.ClusterRoleBinding,
      '',
      `${ns}-everyone`,
    );
    expect(binding?.subjects).toEqual([
      { kind: 'ServiceAccount', name: TestOperator.serviceAccount, namespace: ns },
    ]);
    expect(await get(Builtin.ClusterRoleBinding, '', `${ns}-default-admin`)).toBeUndefined();
    expect(await anyoneMayRead()).toBe(false);
    expect(
      await canI(
        client(),
        { namespace: ns, name: 'default' },
        { verb: 'delete', resource: 'namespaces', name: 'kube-system' },
      ),
    ).toBe(false);
    await eventually('the CSV to be Succeeded', async () => {
      const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, TestOperator.v1);
      return c?.status?.phase === 'Succeeded' ? c : undefined;
    });
  });

  it('applies it as shipped where the OperatorGroup allows the package, and says so', async () => {
    const ns = await namespaceServing('broad-ok', (n) => bundle([reader(n), everyone(n, [authenticated])]), {
      annotations: { 'bosun.dev/allow-broad-rbac': TestOperator.package },
    });
    clusterObjects.push(
      { kind: 'ClusterRole', name: `${ns}-reader` },
      { kind: 'ClusterRoleBinding', name: `${ns}-everyone` },
    );
    expect(await anyoneMayRead()).toBe(false);
    await subscribe(ns);
    const ip = await planOf(ns, 'Complete');
    const condition = ip.status?.conditions?.find((c) => c.type === 'BroadRBAC');
    expect(condition).toMatchObject({ status: 'True', reason: 'BroadRBACAllowed' });
    expect(condition?.message).toContain(`ClusterRoleBinding/${ns}-everyone`);
    expect(condition?.message).toContain("as the OperatorGroup's bosun.dev/allow-broad-rbac allows");
    const binding = await get<KubeObject & { subjects?: unknown[] }>(
      Builtin.ClusterRoleBinding,
      '',
      `${ns}-everyone`,
    );
    expect(binding?.subjects).toEqual([authenticated]);
    expect(await anyoneMayRead()).toBe(true);
    // Only for what it names: a group allowing another package leaves it out (the test above).
    await mergePatch(Resources.OperatorGroup, ns, 'og', {
      metadata: { annotations: { 'bosun.dev/allow-broad-rbac': null } },
    });
  });
});
