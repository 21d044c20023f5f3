/**
 * The RBAC OLM users get for the APIs an operator provides, proven with real users (impersonated
 * through kubectl --as) against the real API server: a user bound to the built-in `edit` role
 * in a namespace creates the operator's custom resources, a `view` user reads them and may not
 * create any, a user with no binding may do neither; the OperatorGroup's own `olm.og.*` roles
 * aggregate exactly its operators' APIs (the API server's aggregation controller fills them), for
 * an AllNamespaces and an OwnNamespace install; and what an uninstall leaves, as OLM leaves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { operatorGroupRoleName } from '../../../src/install/operatorgroup-roles.js';
import {
  apiAggregationLabel,
  type ClusterRole,
  RoleSuffix,
} from '../../../src/install/provided-api-roles.js';
import { Builtin } from '../../../src/kube/resources.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { eventually, freshNamespace } from '../support.js';
import {
  crdName,
  csvSucceeded,
  kubectl,
  type Run,
  sampleCatalogJson,
  subscribeSample,
  uniqueGroup,
} from './operator-support.js';
import {
  create,
  get,
  mergePatch,
  namespaceWithCatalog,
  remove,
  Resources,
  startTestManager,
} from './support.js';

let manager: RunningManager;
beforeAll(async () => {
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
});

const clusterRole = (name: string) => get<ClusterRole>(Builtin.ClusterRole, '', name);

/** The sample operator installed from a namespace of its own, its API in a group of the test's own. */
async function install(prefix: string, mode: 'AllNamespaces' | 'OwnNamespace') {
  const group = uniqueGroup();
  const ns = await namespaceWithCatalog(prefix, await sampleCatalogJson(group));
  if (mode === 'AllNamespaces') {
    await mergePatch(Resources.OperatorGroup, ns, 'og', { spec: { targetNamespaces: null } });
  }
  await subscribeSample(ns);
  const csv = await csvSucceeded(ns);
  const api = { group, version: 'v1alpha1', kind: 'Widget' };
  return { ns, group, csv, api, crd: crdName(group) };
}

/** Binds `user` to ClusterRole `role` in `ns` (a RoleBinding), as an admin would. */
async function bind(ns: string, user: string, role: string) {
  await create(Builtin.RoleBinding, ns, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${user}-${role}`.slice(0, 63).replace(/[^a-z0-9-]/g, '-') },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  } as KubeObject);
}

const widget = (group: string, name: string) =>
  JSON.stringify({ apiVersion: `${group}/v1alpha1`, kind: 'Widget', metadata: { name }, spec: { size: 1 } });

const createWidget = (user: string, ns: string, group: string, name: string) =>
  kubectl(['-n', ns, 'create', '-f', '-', '-o', 'name'], { as: user, input: widget(group, name) });
const getWidget = (user: string, ns: string, group: string, name: string) =>
  kubectl(['-n', ns, 'get', `widgets.${group}`, name, '-o', 'name'], { as: user });

/** Retries while RBAC aggregation catches up: the first answer that is not Forbidden, or the last. */
function allowedEventually(what: string, attempt: () => Promise<Run>): Promise<Run> {
  return eventually(what, async () => {
    const r = await attempt();
    if (r.code === 0) return r;
    if (/forbidden/i.test(r.stderr)) return undefined;
    throw new Error(`${what}: ${r.stderr}`);
  });
}

function expectForbidden(r: Run) {
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/forbidden/i);
}

/** The provided-API roles of the Widget API, as OLM names them. */
const apiRoleNames = (crd: string) => [
  `${crd}-v1alpha1-admin`,
  `${crd}-v1alpha1-edit`,
  `${crd}-v1alpha1-view`,
  `${crd}-v1alpha1-crdview`,
];

async function expectApiRoles(
  crd: string,
  group: string,
  api: { group: string; version: string; kind: string },
) {
  const crdUid = (await get<KubeObject>(Builtin.CustomResourceDefinition, '', crd))?.metadata?.uid;
  const roles = await eventually('the provided-API roles', async () => {
    const found = await Promise.all(apiRoleNames(crd).map(clusterRole));
    return found.every((r) => r !== undefined) ? (found as ClusterRole[]) : undefined;
  });
  const [admin, edit, view, crdview] = roles;
  expect(edit?.rules).toEqual([
    { apiGroups: [group], resources: ['widgets'], verbs: ['create', 'update', 'patch', 'delete'] },
  ]);
  expect(admin?.rules).toEqual([{ apiGroups: [group], resources: ['widgets'], verbs: ['*'] }]);
  expect(view?.rules).toEqual([
    { apiGroups: [group], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
  ]);
  expect(crdview?.rules).toEqual([
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      resourceNames: [crd],
      verbs: ['get'],
    },
  ]);
  expect(edit?.metadata?.labels).toMatchObject({
    'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
    [apiAggregationLabel(api, 'edit')]: 'true',
    'olm.managed': 'true',
  });
  expect(crdview?.metadata?.labels).toMatchObject({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
  for (const r of roles) {
    expect(r.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'CustomResourceDefinition',
        name: crd,
        uid: crdUid,
        blockOwnerDeletion: false,
      }),
    ]);
  }
}

/** The OperatorGroup's three roles aggregate the API, and the API server filled them with its rules. */
async function expectGroupRoles(
  ns: string,
  group: string,
  api: { group: string; version: string; kind: string },
) {
  for (const suffix of Object.values(RoleSuffix)) {
    const name = operatorGroupRoleName({ namespace: ns, name: 'og' }, suffix);
    const role = await eventually(`ClusterRole ${name} aggregating the Widget API`, async () => {
      const r = await clusterRole(name);
      return r?.rules?.some((rule) => rule.apiGroups?.includes(group)) ? r : undefined;
    });
    expect(role.metadata?.labels).toMatchObject({
      'olm.owner': 'og',
      'olm.owner.kind': 'OperatorGroup',
      'olm.owner.namespace': ns,
      'olm.managed': 'true',
    });
    expect(role.aggregationRule?.clusterRoleSelectors).toEqual([
      { matchLabels: { [apiAggregationLabel(api, suffix)]: 'true' } },
    ]);
  }
}

let userCount = 0;
const user = (who: string) => `${who}-${process.pid}-${++userCount}`;

describe('provided-API roles', () => {
  it('AllNamespaces: edit creates custom resources in any namespace it is bound in, view reads them, no binding gets nothing', async () => {
    const { ns, group, api, crd } = await install('rolesall', 'AllNamespaces');
    await expectApiRoles(crd, group, api);
    await expectGroupRoles(ns, group, api);

    const target = await freshNamespace('rolest');
    const [alice, bob, carol, dave] = [user('alice'), user('bob'), user('carol'), user('dave')];
    await bind(target, alice, 'edit');
    await bind(target, bob, 'view');
    await bind(target, dave, operatorGroupRoleName({ namespace: ns, name: 'og' }, 'edit'));

    const made = await allowedEventually('alice (edit) creates a Widget', () =>
      createWidget(alice, target, group, 'w-alice'),
    );
    expect(made.stdout.trim()).toBe(`widget.${group}/w-alice`);
    const read = await allowedEventually('bob (view) reads it', () =>
      getWidget(bob, target, group, 'w-alice'),
    );
    expect(read.stdout.trim()).toBe(`widget.${group}/w-alice`);
    expectForbidden(await createWidget(bob, target, group, 'w-bob'));
    expectForbidden(await getWidget(carol, target, group, 'w-alice'));
    expectForbidden(await createWidget(carol, target, group, 'w-carol'));
    // Bound in the target namespace only: nothing in the operator's own.
    expectForbidden(await createWidget(alice, ns, group, 'w-elsewhere'));
    // The group's own edit role grants the same on its operators' APIs.
    await allowedEventually('dave (the group’s edit role) creates a Widget', () =>
      createWidget(dave, target, group, 'w-dave'),
    );

    // crdview is aggregated into view: a cluster-wide viewer reads the CRD.
    const erin = user('erin');
    const binding = `${erin}-view`;
    await create(Builtin.ClusterRoleBinding, '', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: binding },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: erin }],
    } as KubeObject);
    try {
      await allowedEventually('erin (view, cluster-wide) reads the CRD', () =>
        kubectl(['get', 'customresourcedefinition', crd, '-o', 'name'], { as: erin }),
      );
      expectForbidden(
        await kubectl(['get', 'customresourcedefinition', 'operators.operators.coreos.com'], { as: erin }),
      );
    } finally {
      await remove(Builtin.ClusterRoleBinding, '', binding);
    }
  });

  it('OwnNamespace: the same in the operator’s namespace, through the built-in roles and the group’s own', async () => {
    const { ns, group, api, crd } = await install('rolesown', 'OwnNamespace');
    await expectApiRoles(crd, group, api);
    await expectGroupRoles(ns, group, api);
    const [alice, bob, carol, dave] = [user('alice'), user('bob'), user('carol'), user('dave')];
    await bind(ns, alice, 'edit');
    await bind(ns, bob, 'view');
    await bind(ns, dave, operatorGroupRoleName({ namespace: ns, name: 'og' }, 'edit'));
    await allowedEventually('alice (edit) creates a Widget', () => createWidget(alice, ns, group, 'w-alice'));
    await allowedEventually('bob (view) reads it', () => getWidget(bob, ns, group, 'w-alice'));
    expectForbidden(await createWidget(bob, ns, group, 'w-bob'));
    expectForbidden(await getWidget(carol, ns, group, 'w-alice'));
    await allowedEventually('dave (the group’s edit role) creates a Widget', () =>
      createWidget(dave, ns, group, 'w-dave'),
    );
    // The group's view role does not grant create (its aggregated rules are view's only).
    const viewer = user('frank');
    await bind(ns, viewer, operatorGroupRoleName({ namespace: ns, name: 'og' }, 'view'));
    await allowedEventually('frank (the group’s view role) reads a Widget', () =>
      getWidget(viewer, ns, group, 'w-alice'),
    );
    expectForbidden(await createWidget(viewer, ns, group, 'w-frank'));
  });

  it('an uninstall takes the API out of the group’s roles; its own roles stay with the CRD, and go with it; the group’s go with the group', async () => {
    const { ns, group, csv, api, crd } = await install('rolesun', 'OwnNamespace');
    await expectApiRoles(crd, group, api);
    await expectGroupRoles(ns, group, api);
    const alice = user('alice');
    await bind(ns, alice, 'edit');
    await allowedEventually('alice (edit) creates a Widget', () => createWidget(alice, ns, group, 'w1'));

    await remove(Resources.Subscription, ns, 'bosun-sample');
    await remove(Resources.ClusterServiceVersion, ns, csv.metadata.name!);
    await eventually('the CSV gone', async () =>
      (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv.metadata.name!))
        ? undefined
        : true,
    );
    const groupRoles = Object.values(RoleSuffix).map((s) =>
      operatorGroupRoleName({ namespace: ns, name: 'og' }, s),
    );
    await eventually('the group’s roles aggregating nothing, granting nothing', async () => {
      const roles = await Promise.all(groupRoles.map(clusterRole));
      return roles.every(
        (r) => r !== undefined && r.aggregationRule === undefined && (r.rules ?? []).length === 0,
      )
        ? true
        : undefined;
    });
    // As in OLM, the API's own roles follow the CRD, which outlives the CSV with its custom resources:
    // an editor can still clean up.
    await manager.idle();
    for (const name of apiRoleNames(crd)) expect(await clusterRole(name), name).toBeDefined();
    const gone = await kubectl(['-n', ns, 'delete', `widgets.${group}`, 'w1'], { as: alice });
    expect(gone.code, gone.stderr).toBe(0);

    await remove(Builtin.CustomResourceDefinition, '', crd);
    await eventually('the API’s roles garbage collected with the CRD', async () => {
      const roles = await Promise.all(apiRoleNames(crd).map(clusterRole));
      return roles.every((r) => r === undefined) ? true : undefined;
    });
    await remove(Resources.OperatorGroup, ns, 'og');
    await eventually('the group’s roles deleted with the group', async () => {
      const roles = await Promise.all(groupRoles.map(clusterRole));
      return roles.every((r) => r === undefined) ? true : undefined;
    });
  });
});
