import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstallPlan } from '../../../src/apis/operators.js';
import type { CustomResourceDefinition, Deployment } from '../../../src/controllers/context.js';
import { mergePatch } from '../../../src/controllers/objects.js';
import { isEstablished } from '../../../src/kube/crds.js';
import { eventually, freshNamespace } from '../support.js';
import {
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  deploymentPath,
  eventsFor,
  get,
  type Harness,
  inline,
  installOperatorCrds,
  ipPath,
  startInstallControllers,
  testBundle,
  testCatalog,
  testCatalogSnapshot,
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

const ipInPhase = (ns: string, name: string, phase: string) =>
  eventually(`installplan ${ns}/${name} in phase ${phase}`, async () => {
    const ip = await get<InstallPlan>(h.ctx.client, ipPath(ns, name));
    return ip?.status?.phase === phase ? ip : undefined;
  });

describe('InstallPlan controller', () => {
  it('an approved plan installs the CRD, RBAC, objects and CSV, and the CSV reaches Succeeded', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ip');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns);

    const ip = await ipInPhase(ns, 'install-testop', 'Complete');
    const kinds = ip.status?.plan?.map((s) => s.resource.kind);
    // CRDs first, then ServiceAccounts, RBAC, the other objects, and the CSV last.
    expect(kinds?.[0]).toBe('CustomResourceDefinition');
    expect(kinds?.at(-1)).toBe('ClusterServiceVersion');
    expect(kinds?.indexOf('ServiceAccount')).toBeLessThan(kinds?.indexOf('Role') ?? -1);
    expect(kinds).toEqual(
      expect.arrayContaining(['ClusterRole', 'ClusterRoleBinding', 'RoleBinding', 'Service', 'ConfigMap']),
    );
    expect(ip.status?.plan?.every((s) => s.status === 'Created')).toBe(true);
    expect(ip.status?.conditions?.find((c) => c.type === 'Installed')?.status).toBe('True');
    expect(ip.status?.startTime).toBeDefined();

    const crd = await get<CustomResourceDefinition>(
      client,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${TestOperator.crd}`,
    );
    expect(crd && isEstablished(crd)).toBe(true);
    expect(crd?.metadata?.labels?.['olm.managed']).toBe('true');

    const csv = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded', 'InstallSucceeded');
    expect(csv.metadata.annotations?.['olm.targetNamespaces']).toBe(ns);
    expect(csv.status?.requirementStatus?.every((r) => r.status === 'Present')).toBe(true);
    // The phase history shows the way there.
    expect(csv.status?.conditions?.map((c) => c.phase)).toEqual(
      expect.arrayContaining(['Pending', 'InstallReady', 'Installing', 'Succeeded']),
    );

    const dep = await eventually('deployment available', async () => {
      const d = await get<Deployment>(client, deploymentPath(ns, TestOperator.deployment));
      return d?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')
        ? d
        : undefined;
    });
    expect(dep.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'ClusterServiceVersion',
      name: TestOperator.v1,
    });
    expect(dep.metadata?.labels).toMatchObject({ 'olm.managed': 'true', 'olm.owner': TestOperator.v1 });

    // Namespaced objects from the plan are owned by the CSV.
    const sa = await get<Deployment>(
      client,
      `/api/v1/namespaces/${ns}/serviceaccounts/${TestOperator.serviceAccount}`,
    );
    expect(sa?.metadata?.ownerReferences?.map((r) => r.uid)).toEqual([csv.metadata.uid]);
    const cm = await get<Deployment>(client, `/api/v1/namespaces/${ns}/configmaps/testop-config`);
    expect(cm?.metadata?.ownerReferences?.map((r) => r.uid)).toEqual([csv.metadata.uid]);

    const events = await eventsFor(client, ns, TestOperator.v1);
    expect(events.map((e) => e.reason)).toEqual(
      expect.arrayContaining(['AllRequirementsMet', 'InstallSucceeded']),
    );
  });

  it('a Manual plan lists its steps and creates nothing until approved', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ipm');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns, { approval: 'Manual' });

    const pending = await ipInPhase(ns, 'install-testop', 'RequiresApproval');
    expect(pending.status?.plan?.length).toBeGreaterThan(5);
    expect(pending.status?.plan?.every((s) => s.status === 'Unknown')).toBe(true);
    const csvStep = pending.status?.plan?.find((s) => s.resource.kind === 'ClusterServiceVersion');
    expect(csvStep?.resource).toMatchObject({
      name: TestOperator.v1,
      sourceName: 'testcat',
      sourceNamespace: 'olm-test',
    });
    expect(JSON.parse(csvStep?.resource.manifest ?? '{}').metadata.namespace).toBe(ns);
    // Nothing was applied: the plan was written without executing.
    expect(
      await get(
        client,
        `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${TestOperator.v1}`,
      ),
    ).toBeUndefined();
    expect(
      await get(client, `/api/v1/namespaces/${ns}/serviceaccounts/${TestOperator.serviceAccount}`),
    ).toBeUndefined();

    await mergePatch(client, ipPath(ns, 'install-testop'), { spec: { approved: true } });
    await ipInPhase(ns, 'install-testop', 'Complete');
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
  });

  it('a plan whose bundle is not in its catalog fails with a condition naming it', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ipf');
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns, { csv: 'testop.v9.9.9' });
    const ip = await ipInPhase(ns, 'install-testop', 'Failed');
    const installed = ip.status?.conditions?.find((c) => c.type === 'Installed');
    expect(installed).toMatchObject({ status: 'False', reason: 'InstallComponentFailed' });
    expect(installed?.message).toContain('testop.v9.9.9');
  });

  it('an object the API server rejects fails the plan at that step, before the CSV is created', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ipx');
    const bundle = testBundle('0.1.0');
    const broken = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'broken' },
      spec: { ports: [{ port: 999999 }] },
    };
    bundle.properties.push(inline(broken));
    h.catalogs.set(testCatalogSnapshot([bundle], { ...testCatalog, name: 'broken' }));
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns, { source: 'broken' });

    const ip = await ipInPhase(ns, 'install-testop', 'Failed');
    const installed = ip.status?.conditions?.find((c) => c.type === 'Installed');
    expect(installed).toMatchObject({ status: 'False', reason: 'InstallComponentFailed' });
    expect(installed?.message).toContain(`step Service ${ns}/broken: Invalid (422)`);
    const status = (kind: string, name?: string) =>
      ip.status?.plan?.find(
        (s) => s.resource.kind === kind && (name === undefined || s.resource.name === name),
      )?.status;
    expect(status('CustomResourceDefinition')).toBe('Created');
    expect(status('Service', 'broken')).toBe('Unknown');
    expect(status('ClusterServiceVersion')).toBe('Unknown');
    expect(
      await get(
        client,
        `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${TestOperator.v1}`,
      ),
    ).toBeUndefined();
    const events = await eventsFor(client, ns, 'install-testop');
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Warning', reason: 'InstallComponentFailed' }),
      ]),
    );
  });

  it('an object with a field its schema does not declare is applied without it, and the plan names the field', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ips');
    const bundle = testBundle('0.1.0');
    // Server-side apply would refuse the undeclared field; OLM's create has the server drop it.
    const misfit = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'misfit' },
      data: { a: 'b' },
      spec: { bogus: true },
    };
    bundle.properties.push(inline(misfit));
    h.catalogs.set(testCatalogSnapshot([bundle], { ...testCatalog, name: 'misfit' }));
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns, { source: 'misfit' });

    const ip = await ipInPhase(ns, 'install-testop', 'Complete');
    const pruned = ip.status?.conditions?.find((c) => c.type === 'Pruned');
    expect(pruned).toMatchObject({ status: 'True', reason: 'UndeclaredFieldsPruned' });
    expect(pruned?.message).toContain('ConfigMap/misfit: spec');
    const cm = await get<{ data?: unknown; spec?: unknown }>(
      client,
      `/api/v1/namespaces/${ns}/configmaps/misfit`,
    );
    expect(cm?.data).toEqual({ a: 'b' });
    expect(cm?.spec).toBeUndefined();
    const events = await eventsFor(client, ns, 'install-testop');
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Warning', reason: 'UndeclaredFieldsPruned' }),
      ]),
    );
  });

  /** A CRD with a conversion webhook whose caBundle is a placeholder, as some bundles ship it. */
  function placeholderConversionCrd(group: string, versions: string[]) {
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `gizmos.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
        versions: versions.map((name, i) => ({
          name,
          served: true,
          storage: i === 0,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        })),
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: {
              caBundle: 'Cg==',
              service: { name: 'webhook-service', namespace: 'system', path: '/convert', port: 443 },
            },
            conversionReviewVersions: ['v1'],
          },
        },
      },
    };
  }

  it('a one-version CRD whose placeholder conversion webhook could never be called is installed without it', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ipc');
    const bundle = testBundle('0.1.0');
    bundle.properties.push(inline(placeholderConversionCrd(`${ns}.bosun.test`, ['v1alpha1'])));
    h.catalogs.set(testCatalogSnapshot([bundle], { ...testCatalog, name: 'conv1' }));
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns, { source: 'conv1' });

    const ip = await ipInPhase(ns, 'install-testop', 'Complete');
    expect(ip.status?.conditions?.find((c) => c.type === 'BundleWarnings')?.message).toContain(
      `CustomResourceDefinition/gizmos.${ns}.bosun.test: spec.conversion`,
    );
    const crd = await get<CustomResourceDefinition & { spec?: { conversion?: unknown } }>(
      client,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.${ns}.bosun.test`,
    );
    expect(crd?.spec?.conversion).toEqual({ strategy: 'None' });
    expect(isEstablished(crd!)).toBe(true);
  });

  it('a CRD the API server will not establish fails the plan, naming the reason', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ipv');
    const bundle = testBundle('0.1.0');
    bundle.properties.push(inline(placeholderConversionCrd(`${ns}.bosun.test`, ['v1', 'v1beta1'])));
    h.catalogs.set(testCatalogSnapshot([bundle], { ...testCatalog, name: 'conv2' }));
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns, { source: 'conv2' });

    const ip = await ipInPhase(ns, 'install-testop', 'Failed');
    expect(ip.status?.conditions?.find((c) => c.type === 'Installed')?.message).toMatch(
      new RegExp(
        `CustomResourceDefinition gizmos\\.${ns}\\.bosun\\.test is not established: .*InvalidCABundle`,
      ),
    );
    await client.request({
      method: 'DELETE',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.${ns}.bosun.test`,
    });
  });

  it('a plan whose catalog is not loaded yet waits in Planning and goes on when the catalog arrives', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('ipw');
    const source = `later-${ns}`;
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns, { source });
    const waiting = await ipInPhase(ns, 'install-testop', 'Planning');
    expect(waiting.status?.message).toBe(`waiting for catalog olm-test/${source} to be loaded`);

    h.catalogs.set(testCatalogSnapshot(undefined, { ...testCatalog, name: source }));
    const done = await ipInPhase(ns, 'install-testop', 'Complete');
    expect(done.status?.message).toBeUndefined();
    expect(done.status?.catalogSources).toEqual([source]);
  });
});
