import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeConfig, openWatch } from '../client-node.js';
import { eventually, freshNamespace } from '../support.js';

describe('the local control plane is a real Kubernetes', () => {
  it('serves a new CRD and delivers a watch event for a custom resource through client-node', async () => {
    const kc = kubeConfig();
    const ns = await freshNamespace();
    const group = `${ns}.bosun.test`;
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                },
              },
            },
          ],
        },
      },
    });
    try {
      await eventually('the CRD to be Established', async () => {
        const crd = await ext.readCustomResourceDefinition({ name: `widgets.${group}` });
        return (
          crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') || undefined
        );
      });

      const seen: { type: string; name: string; size: number }[] = [];
      const req = await openWatch(kc, `/apis/${group}/v1/namespaces/${ns}/widgets`, (type, obj) => {
        const w = obj as { metadata: { name: string }; spec: { size: number } };
        seen.push({ type, name: w.metadata.name, size: w.spec.size });
      });
      try {
        const custom = kc.makeApiClient(k8s.CustomObjectsApi);
        await custom.createNamespacedCustomObject({
          group,
          version: 'v1',
          namespace: ns,
          plural: 'widgets',
          body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } },
        });
        const event = await eventually('the ADDED event', async () => seen.find((e) => e.type === 'ADDED'));
        expect(event).toEqual({ type: 'ADDED', name: 'w1', size: 3 });
      } finally {
        req.abort();
      }
    } finally {
      await ext.deleteCustomResourceDefinition({ name: `widgets.${group}` });
    }
  });

  it('runs a Deployment until it is Available, with Pods Ready on the simulated node', async () => {
    const kc = kubeConfig();
    const ns = await freshNamespace();
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'registry.example/web:1.0' }] },
          },
        },
      },
    });
    const dep = await eventually('the Deployment to be Available', async () => {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
      const available = d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
      return available && d.status?.readyReplicas === 2 ? d : undefined;
    });
    expect(dep.status?.availableReplicas).toBe(2);
    const pods = await kc
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
    expect(pods.items).toHaveLength(2);
    for (const pod of pods.items) {
      expect(pod.spec?.nodeName).toBe('bosun-node');
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
  });

  it('garbage-collects an object when its owner is deleted', async () => {
    const kc = kubeConfig();
    const ns = await freshNamespace();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const owner = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'owner' } },
    });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'owned',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns });
    const gone = await eventually('the owned ConfigMap to be collected', async () => {
      const list = await core.listNamespacedConfigMap({ namespace: ns });
      return list.items.some((c) => c.metadata?.name === 'owned') ? undefined : true;
    });
    expect(gone).toBe(true);
  });

  it('denies a ServiceAccount without RBAC (403) and admits it once a Role is bound', async () => {
    const kc = kubeConfig();
    const ns = await freshNamespace();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'reader' } } });
    const token = await core.createNamespacedServiceAccountToken({
      name: 'reader',
      namespace: ns,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const asReader = new k8s.KubeConfig();
    const cluster = kc.getCurrentCluster()!;
    asReader.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'reader', token: token.status!.token }],
      contexts: [{ name: 'reader', cluster: cluster.name, user: 'reader' }],
      currentContext: 'reader',
    });
    const readerCore = asReader.makeApiClient(k8s.CoreV1Api);

    const denied = await readerCore.listNamespacedConfigMap({ namespace: ns }).then(
      () => undefined,
      (err: k8s.ApiException<unknown>) => err.code,
    );
    expect(denied).toBe(403);

    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'cm-reader' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'cm-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
      },
    });
    // A ConfigMap of the test's own: kube-root-ca.crt appears only when the controller manager
    // gets to the namespace, which on a loaded machine can be after the Role takes effect.
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'readable' } } });
    const list = await eventually('the Role to take effect', () =>
      readerCore.listNamespacedConfigMap({ namespace: ns }),
    );
    expect(list.items.map((c) => c.metadata?.name)).toContain('readable');
    // The Role grants configmaps only: other resources stay forbidden.
    const stillDenied = await readerCore.listNamespacedSecret({ namespace: ns }).then(
      () => undefined,
      (err: k8s.ApiException<unknown>) => err.code,
    );
    expect(stillDenied).toBe(403);
  });
});
