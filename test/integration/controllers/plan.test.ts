/**
 * `bosun plan` against the local control plane: a Manual upgrade's plan, shown before approval,
 * with a dry-run diff of each changed object, the CRD safety verdict, and nothing changed. (The
 * Deployments are the new CSV's to roll out once it is created; the plan shows the CSV.)
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
  testCatalog,
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

describe('bosun plan', () => {
  it('shows a Manual upgrade before approval: versions, CRD safety, a diff per changed object', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('plan');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns, { name: 'install-v1' });
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    await createInstallPlan(client, ns, { name: 'install-v2', csv: TestOperator.v2, approval: 'Manual' });
    await eventually('the plan waits for approval', async () => {
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
    const before = await get<Deployment>(client, deploymentPath(ns, TestOperator.deployment));

    const env = { ...process.env, KUBECONFIG: inject('kubeconfig') };
    const text = await runBosun(['plan', '-n', ns, 'testop'], { env });
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Subscription ${ns}/testop: ${TestOperator.v1} -> ${TestOperator.v2}`);
    expect(text.stdout).toContain('approval Manual, not approved yet');
    expect(text.stdout).toContain('CRD safety: safe');
    // The ServiceAccount moves to the new CSV: a change, with its diff.
    expect(text.stdout).toMatch(new RegExp(`change +ServiceAccount ${ns}/${TestOperator.serviceAccount}`));
    expect(text.stdout).toContain(`-    olm.owner: ${TestOperator.v1}`);
    expect(text.stdout).toContain(`+    olm.owner: ${TestOperator.v2}`);
    expect(text.stdout).toMatch(/create +ClusterRole testop\.v0\.2\.0-/);
    expect(text.stdout).toMatch(new RegExp(`create +ClusterServiceVersion ${ns}/${TestOperator.v2}`));
    expect(text.stdout).toMatch(new RegExp(`delete +ClusterServiceVersion ${ns}/${TestOperator.v1}`));
    expect(text.stdout).toMatch(/unchanged +CustomResourceDefinition widgets.testop.bosun.dev/);

    const json = await runBosun(['plan', '-n', ns, 'testop', '-o', 'json'], { env });
    const report = JSON.parse(json.stdout) as { to: string[]; objects: { action: string; kind: string }[] };
    expect(report.to).toEqual([TestOperator.v2]);
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
