import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1PolicyRule } from '@kubernetes/client-node';
import type { OperatorGroup } from '../../../src/apis/operators.js';
import type { Deployment } from '../../../src/controllers/context.js';
import { mergePatch } from '../../../src/controllers/objects.js';
import { objectPath } from '../../../src/kube/client.js';
import { Resources } from '../../../src/apis/operators.js';
import { eventually, freshNamespace } from '../support.js';
import {
  canI,
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  deploymentPath,
  get,
  type Harness,
  installOperatorCrds,
  startInstallControllers,
  TestOperator,
} from './install-harness.js';

let h: Harness;

beforeAll(async () => {
  await installOperatorCrds();
  h = await startInstallControllers();
});

afterAll(async () => {
  await h?.stop();
});

interface Rbac {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  rules?: V1PolicyRule[];
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** RBAC objects the test operator's CSV in `ns` owns, by its owner labels (all namespaces). */
async function ownedRbac(plural: string, ns: string): Promise<Rbac[]> {
  const list = await h.ctx.client.request<{ items: Rbac[] }>({
    path: `/apis/rbac.authorization.k8s.io/v1/${plural}`,
    query: { labelSelector: `olm.owner=${TestOperator.v1},olm.owner.namespace=${ns}` },
  });
  return list.items;
}

const grantsConfigMaps = (r: Rbac) => (r.rules ?? []).some((rule) => rule.resources?.includes('configmaps'));

const ogPath = (ns: string, name: string) => objectPath(Resources.OperatorGroup, name, ns);

describe('OperatorGroup scoping', () => {
  it('a SingleNamespace group gets Roles in the operator and target namespaces, and no lifted ClusterRole', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('single');
    const target = await freshNamespace('target');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [target] });
    await createInstallPlan(client, ns);
    const csv = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    expect(csv.metadata.annotations).toMatchObject({
      'olm.operatorGroup': 'og',
      'olm.operatorNamespace': ns,
      'olm.targetNamespaces': target,
    });

    const og = await eventually('og status', async () => {
      const o = await get<OperatorGroup>(client, ogPath(ns, 'og'));
      return o?.status?.namespaces ? o : undefined;
    });
    expect(og.status?.namespaces).toEqual([target]);

    const roles = (await ownedRbac('roles', ns)).filter(grantsConfigMaps);
    expect(roles.map((r) => r.metadata.namespace).sort()).toEqual([ns, target].sort());
    const bindings = (await ownedRbac('rolebindings', ns)).filter((b) => b.metadata.namespace === target);
    expect(bindings[0]?.subjects).toEqual([
      { kind: 'ServiceAccount', name: TestOperator.serviceAccount, namespace: ns },
    ]);
    expect(bindings[0]?.metadata.labels?.['olm.copiedFrom']).toBe(ns);
    // Only clusterPermissions become a ClusterRole.
    const clusterRoles = await ownedRbac('clusterroles', ns);
    expect(clusterRoles.length).toBe(1);
    expect(clusterRoles.some(grantsConfigMaps)).toBe(false);

    const dep = await get<
      Deployment & { spec: { template: { metadata: { annotations: Record<string, string> } } } }
    >(client, deploymentPath(ns, TestOperator.deployment));
    expect(dep?.spec.template.metadata.annotations['olm.targetNamespaces']).toBe(target);
  });

  it('an AllNamespaces group lifts permissions to a ClusterRole with namespace read access, next to the plan’s Role', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('all');
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns);
    const csv = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    expect(csv.metadata.annotations?.['olm.targetNamespaces']).toBe('');
    const og = await eventually('og status', async () => {
      const o = await get<OperatorGroup>(client, ogPath(ns, 'og'));
      return o?.status?.namespaces ? o : undefined;
    });
    expect(og.status?.namespaces).toEqual(['']);

    const lifted = (await ownedRbac('clusterroles', ns)).filter(grantsConfigMaps);
    expect(lifted.length).toBe(1);
    expect(lifted[0]?.rules).toEqual(
      expect.arrayContaining([
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      ]),
    );
    const liftedBinding = (await ownedRbac('clusterrolebindings', ns)).find(
      (b) => b.metadata.name === lifted[0]?.metadata.name,
    );
    expect(liftedBinding?.subjects).toEqual([
      { kind: 'ServiceAccount', name: TestOperator.serviceAccount, namespace: ns },
    ]);
    // The InstallPlan's Role in the operator namespace stays, as in OLM.
    expect((await ownedRbac('roles', ns)).filter(grantsConfigMaps).map((r) => r.metadata.namespace)).toEqual([
      ns,
    ]);
    const sa = { namespace: ns, name: TestOperator.serviceAccount };
    expect(await canI(client, sa, { verb: 'list', resource: 'configmaps', namespace: 'default' })).toBe(true);
    expect(await canI(client, sa, { verb: 'watch', resource: 'namespaces' })).toBe(true);
  });

  it('status.namespaces follows a label selector as namespaces are labelled', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('sel');
    const a = await freshNamespace('sela');
    const b = await freshNamespace('selb');
    const label = `bosun-test-${ns}`;
    await mergePatch(client, `/api/v1/namespaces/${a}`, { metadata: { labels: { [label]: 'yes' } } });
    await createOperatorGroup(client, ns, 'og', { selector: { matchLabels: { [label]: 'yes' } } });
    await eventually('og targets a', async () => {
      const o = await get<OperatorGroup>(client, ogPath(ns, 'og'));
      return o?.status?.namespaces?.join() === a ? o : undefined;
    });

    await mergePatch(client, `/api/v1/namespaces/${b}`, { metadata: { labels: { [label]: 'yes' } } });
    const second = await eventually('og targets a and b', async () => {
      const o = await get<OperatorGroup>(client, ogPath(ns, 'og'));
      return o?.status?.namespaces?.join() === [a, b].sort().join() ? o : undefined;
    });
    expect(second.status?.namespaces).toEqual([a, b].sort());
  });

  it('changing the target namespaces re-annotates the operator and moves its RBAC to the new targets', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('move');
    const from = await freshNamespace('from');
    const to = await freshNamespace('to');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [from] });
    await createInstallPlan(client, ns);
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');

    await mergePatch(client, ogPath(ns, 'og'), { spec: { targetNamespaces: [to] } });
    await eventually('deployment annotated with the new target', async () => {
      const d = await get<{ spec: { template: { metadata: { annotations?: Record<string, string> } } } }>(
        client,
        deploymentPath(ns, TestOperator.deployment),
      );
      return d?.spec.template.metadata.annotations?.['olm.targetNamespaces'] === to ? d : undefined;
    });
    const csv = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    expect(csv.metadata.annotations?.['olm.targetNamespaces']).toBe(to);
    expect(csv.status?.conditions?.some((c) => c.reason === 'NeedsReinstall')).toBe(true);
    const roles = (await ownedRbac('roles', ns)).filter(grantsConfigMaps);
    expect(roles.map((r) => r.metadata.namespace).sort()).toEqual([ns, to].sort());

    // Widening to all namespaces lifts the grant to a ClusterRole and drops the copies (the
    // InstallPlan's Role in the operator namespace stays); narrowing again drops the ClusterRole.
    await mergePatch(client, ogPath(ns, 'og'), { spec: { targetNamespaces: null } });
    await eventually('permissions lifted', async () => {
      const lifted = (await ownedRbac('clusterroles', ns)).filter(grantsConfigMaps);
      const left = (await ownedRbac('roles', ns)).filter(grantsConfigMaps).map((r) => r.metadata.namespace);
      return lifted.length === 1 && left.join() === ns ? true : undefined;
    });
    await mergePatch(client, ogPath(ns, 'og'), { spec: { targetNamespaces: [to] } });
    await eventually('permissions scoped again', async () => {
      const lifted = (await ownedRbac('clusterroles', ns)).filter(grantsConfigMaps);
      const back = (await ownedRbac('roles', ns)).filter(grantsConfigMaps).map((r) => r.metadata.namespace);
      return lifted.length === 0 && back.sort().join() === [ns, to].sort().join() ? true : undefined;
    });
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    const sa = { namespace: ns, name: TestOperator.serviceAccount };
    expect(await canI(client, sa, { verb: 'list', resource: 'configmaps', namespace: from })).toBe(false);
    expect(await canI(client, sa, { verb: 'list', resource: 'configmaps', namespace: to })).toBe(true);
  });
});
