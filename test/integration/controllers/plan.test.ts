/**
 * `bosun plan` against the local control plane: a Manual upgrade's plan, shown before approval,
 * with the path through the channel, a dry-run diff of each changed object, the CRD safety
 * verdict, the RBAC added and removed, and nothing changed; and the InstallPlan's own summary.
 * (The Deployments are the new CSV's to roll out once it is created; the plan shows the CSV.)
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { InstallPlan, Subscription } from '../../../src/apis/operators.js';
import { Resources } from '../../../src/apis/operators.js';
import { collectionPath, objectPath } from '../../../src/kube/client.js';
import type { Deployment } from '../../../src/controllers/context.js';
import { runBosun } from '../../unit/cli/run-bosun.js';
import { eventually, freshNamespace } from '../support.js';
import {
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  deploymentPath,
  get,
  type Harness,
  installOperatorCrds,
  ipPath,
  startInstallControllers,
  testBundle,
  testCatalog,
  testCatalogSnapshot,
  testCSV,
  TestOperator,
} from './install-harness.js';

let h: Harness;

/**
 * A catalog whose 0.2.0 asks for other RBAC than 0.1.0: Secrets to read in its namespace, and
 * Nodes to watch as well as get and list.
 */
const planCatalog = { namespace: testCatalog.namespace, name: 'plancat' };
function planCatalogSnapshot() {
  const v2 = testCSV('0.2.0');
  const strategy = v2.spec.install.spec;
  strategy.permissions[0]!.rules.push({ apiGroups: [''], resources: ['secrets'], verbs: ['get'] });
  strategy.clusterPermissions[0]!.rules = [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
  ];
  return testCatalogSnapshot([testBundle('0.1.0'), testBundle('0.2.0', v2)], planCatalog);
}

beforeAll(async () => {
  await installOperatorCrds();
  h = await startInstallControllers();
});

afterAll(async () => {
  await h?.stop();
});

describe('bosun plan', () => {
  it('shows a Manual upgrade before approval: versions, CRD safety, a diff per changed object', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('plan');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns, { name: 'install-v1' });
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    h.catalogs.set(planCatalogSnapshot());
    await createInstallPlan(client, ns, {
      name: 'install-v2',
      csv: TestOperator.v2,
      approval: 'Manual',
      source: planCatalog.name,
    });
    const waiting = await eventually('the plan waits for approval', async () => {
      const ip = await get<InstallPlan>(client, ipPath(ns, 'install-v2'));
      return ip?.status?.phase === 'RequiresApproval' ? ip : undefined;
    });
    // The Subscription as its controller would have written it (that controller is not running here).
    await client.request({
      method: 'POST',
      path: collectionPath(Resources.Subscription, ns),
      body: {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'testop', namespace: ns },
        spec: {
          name: TestOperator.package,
          source: testCatalog.name,
          sourceNamespace: testCatalog.namespace,
        },
      },
    });
    await client.request<Subscription>({
      method: 'PATCH',
      path: `${objectPath(Resources.Subscription, 'testop', ns)}/status`,
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          lastUpdated: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          installedCSV: TestOperator.v1,
          installPlanRef: { name: 'install-v2', namespace: ns },
        },
      },
    });
    // The plan's status says in short what approving it would do, for `kubectl get ip -o yaml`.
    const steps = waiting.status?.plan ?? [];
    expect(waiting.status?.summary).toEqual({
      from: TestOperator.v1,
      to: [TestOperator.v2],
      channel: 'stable',
      path: [{ from: TestOperator.v1, to: TestOperator.v2, via: 'replaces' }],
      objects: {
        // New: the CSV and the RBAC objects named after it; there already: the CRD, the
        // ServiceAccount, the ConfigMap and the Service.
        create: steps.length - 4,
        present: 4,
        delete: 1,
      },
      rbac: { added: 2, removed: 1 },
      crdSafety: { safe: true, findings: [] },
    });
    const before = await get<Deployment>(client, deploymentPath(ns, TestOperator.deployment));

    const env = { ...process.env, KUBECONFIG: inject('kubeconfig') };
    const text = await runBosun(['plan', '-n', ns, 'testop'], { env });
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Subscription ${ns}/testop: ${TestOperator.v1} -> ${TestOperator.v2}`);
    expect(text.stdout).toContain('approval Manual, not approved yet');
    expect(text.stdout).toContain('CRD safety: safe');
    expect(text.stdout).toContain(
      `Path through channel stable:\n  ${TestOperator.v1} -> ${TestOperator.v2} (replaces)\n`,
    );
    expect(text.stdout).toContain(`+ ${TestOperator.serviceAccount} (namespaced): get secrets\n`);
    expect(text.stdout).toContain(`+ ${TestOperator.serviceAccount} (cluster-wide): get,list,watch nodes\n`);
    expect(text.stdout).toContain(`- ${TestOperator.serviceAccount} (cluster-wide): get,list nodes\n`);
    // The ServiceAccount moves to the new CSV: a change, with its diff.
    expect(text.stdout).toMatch(new RegExp(`change +ServiceAccount ${ns}/${TestOperator.serviceAccount}`));
    expect(text.stdout).toContain(`-    olm.owner: ${TestOperator.v1}`);
    expect(text.stdout).toContain(`+    olm.owner: ${TestOperator.v2}`);
    expect(text.stdout).toMatch(/create +ClusterRole testop\.v0\.2\.0-/);
    expect(text.stdout).toMatch(new RegExp(`create +ClusterServiceVersion ${ns}/${TestOperator.v2}`));
    expect(text.stdout).toMatch(new RegExp(`delete +ClusterServiceVersion ${ns}/${TestOperator.v1}`));
    expect(text.stdout).toMatch(/unchanged +CustomResourceDefinition widgets.testop.bosun.dev/);

    const json = await runBosun(['plan', '-n', ns, 'testop', '-o', 'json'], { env });
    const report = JSON.parse(json.stdout) as {
      to: string[];
      path: unknown;
      rbac: { added: unknown[]; removed: unknown[] };
      objects: { action: string; kind: string }[];
    };
    expect(report.to).toEqual([TestOperator.v2]);
    expect(report.path).toEqual({
      channel: 'stable',
      hops: [{ from: TestOperator.v1, to: TestOperator.v2, via: 'replaces' }],
    });
    expect(report.rbac.added).toContainEqual({
      scope: 'namespace',
      serviceAccount: TestOperator.serviceAccount,
      verbs: ['get'],
      apiGroups: [''],
      resources: ['secrets'],
    });
    expect(report.rbac.removed).toEqual([
      {
        scope: 'cluster',
        serviceAccount: TestOperator.serviceAccount,
        verbs: ['get', 'list'],
        apiGroups: [''],
        resources: ['nodes'],
      },
    ]);
    expect(report.objects.find((o) => o.kind === 'ClusterServiceVersion')?.action).toBe('create');
    expect(report.objects.find((o) => o.kind === 'ServiceAccount')?.action).toBe('change');

    // Nothing was changed by looking.
    const after = await get<Deployment>(client, deploymentPath(ns, TestOperator.deployment));
    expect(after?.metadata?.resourceVersion).toBe(before?.metadata?.resourceVersion);
    expect(
      await get(client, objectPath(Resources.ClusterServiceVersion, TestOperator.v2, ns)),
    ).toBeUndefined();
  });

  it('names a Subscription that does not exist', async () => {
    const env = { ...process.env, KUBECONFIG: inject('kubeconfig') };
    const r = await runBosun(['plan', '-n', 'default', 'nothing-here'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Subscription default/nothing-here does not exist');
  });
});
