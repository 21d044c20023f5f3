import { beforeAll, describe, expect, it } from 'vitest';
import type { ManagedFieldsEntry } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, Subscription } from '../../../src/apis/operators.js';
import { addOwnerReference, ownerLabels } from '../../../src/install/ownership.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { eventually, freshNamespace } from '../support.js';
import { connect, fixture, installOperatorCrds } from './helpers.js';

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    managedFields?: ManagedFieldsEntry[];
  };
  data?: Record<string, string>;
}

const configMap = (namespace: string, data: Record<string, string>): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace },
  data,
});

/** The fields each manager owns, e.g. { bosun: ['f:data.f:a'] }. */
function ownership(
  obj: { metadata: { managedFields?: ManagedFieldsEntry[] } },
  subresource = '',
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const walk = (node: Record<string, unknown>, prefix: string, into: string[]) => {
    for (const [k, v] of Object.entries(node)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (v && typeof v === 'object' && Object.keys(v).length > 0)
        walk(v as Record<string, unknown>, path, into);
      else if (k !== '.') into.push(path);
    }
  };
  for (const entry of obj.metadata.managedFields ?? []) {
    if ((entry.subresource ?? '') !== subresource) continue;
    const fields: string[] = [];
    walk(entry.fieldsV1 ?? {}, '', fields);
    out[`${entry.manager}/${entry.operation}`] = fields.sort();
  }
  return out;
}

describe('server-side apply as field manager bosun', () => {
  beforeAll(async () => {
    await installOperatorCrds();
  });

  it('creates, updates, and removes fields it stops applying', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('apply');
    const created = await applier.apply(configMap(ns, { a: '1' }));
    expect(created.data).toEqual({ a: '1' });
    expect(ownership(created)).toEqual({ 'bosun/Apply': ['f:data.f:a'] });

    const updated = await applier.apply(configMap(ns, { a: '2', b: '3' }));
    expect(updated.data).toEqual({ a: '2', b: '3' });

    const trimmed = await applier.apply(configMap(ns, { b: '3' }));
    expect(trimmed.data).toEqual({ b: '3' });
    client.close();
  });

  it('takes over fields another manager set, without a conflict error (force)', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('force');
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      query: { fieldManager: 'someone-else' },
      body: configMap(ns, { a: 'theirs', b: 'theirs' }),
    });
    const applied = await applier.apply(configMap(ns, { a: 'ours' }));
    expect(applied.data).toEqual({ a: 'ours', b: 'theirs' });
    expect(ownership(applied)).toEqual({
      'bosun/Apply': ['f:data.f:a'],
      'someone-else/Update': ['f:data.f:b'],
    });
    client.close();
  });

  it('applies status through the status subresource, leaving the spec to its owner', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('status');
    const sub: Subscription = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: ns },
      spec: { name: 'etcd', source: 'catalog', sourceNamespace: ns },
    };
    await client.request({
      method: 'POST',
      path: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/subscriptions`,
      query: { fieldManager: 'kubectl-client-side-apply' },
      body: sub,
    });
    const withStatus = await applier.applyStatus<Subscription>({
      ...sub,
      status: {
        state: 'UpgradePending',
        currentCSV: 'etcdoperator.v0.9.4',
        lastUpdated: '2024-05-01T12:00:00Z',
      },
    });
    expect(withStatus.spec).toEqual(sub.spec);
    expect(withStatus.status).toEqual({
      state: 'UpgradePending',
      currentCSV: 'etcdoperator.v0.9.4',
      lastUpdated: '2024-05-01T12:00:00Z',
    });
    expect(ownership(withStatus, 'status')).toEqual({
      'bosun/Apply': ['f:status.f:currentCSV', 'f:status.f:lastUpdated', 'f:status.f:state'],
    });
    expect(Object.keys(ownership(withStatus))).toEqual(['kubectl-client-side-apply/Update']);
    client.close();
  });

  it('labels owned objects, and the garbage collector removes them with their CSV', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('owned');
    const csvFixture = await fixture<ClusterServiceVersion>('etcdoperator.v0.9.4.clusterserviceversion.yaml');
    const csv = await applier.apply<ClusterServiceVersion>({
      ...csvFixture,
      metadata: { ...csvFixture.metadata, namespace: ns },
    });
    const owned = await applier.apply(
      addOwnerReference(
        {
          ...configMap(ns, { a: '1' }),
          metadata: {
            name: 'settings',
            namespace: ns,
            labels: ownerLabels({ name: csv.metadata.name ?? '', namespace: ns }),
          },
        },
        { name: csv.metadata.name ?? '', uid: csv.metadata.uid ?? '' },
      ),
    );
    expect(owned.metadata.labels).toEqual({
      'olm.managed': 'true',
      'olm.owner': 'etcdoperator.v0.9.4',
      'olm.owner.kind': 'ClusterServiceVersion',
      'olm.owner.namespace': ns,
    });

    const selected = await client.request<{ items: ConfigMap[] }>({
      path: `/api/v1/namespaces/${ns}/configmaps`,
      query: { labelSelector: 'olm.managed=true,olm.owner.kind=ClusterServiceVersion' },
    });
    expect(selected.items.map((c) => c.metadata.name)).toEqual(['settings']);

    await client.request({
      method: 'DELETE',
      path: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${csv.metadata.name}`,
    });
    await eventually('the owned ConfigMap to be garbage-collected', async () => {
      try {
        await client.request({ path: `/api/v1/namespaces/${ns}/configmaps/settings` });
        return undefined;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    });
    client.close();
  });
});
