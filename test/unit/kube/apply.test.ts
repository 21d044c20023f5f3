import { describe, expect, it } from 'vitest';
import type { KubeObject, ObjectMeta } from '../../../src/apis/meta.js';
import {
  applyPatchBody,
  isOwnedBy,
  type Owner,
  ownerLabels,
  ownerReference,
  withLabels,
  withOwner,
} from '../../../src/kube/apply.js';

const csv: Owner = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'etcdoperator.v0.9.4', namespace: 'operators', uid: 'uid-1' },
};

const configMap = (
  namespace = 'operators',
): KubeObject & { metadata: ObjectMeta; data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace, labels: { app: 'etcd' } },
  data: { a: '1' },
});

describe('owner labels and references', () => {
  it('labels with olm.managed and the owner, as OLM does', () => {
    expect(ownerLabels(csv)).toEqual({
      'olm.managed': 'true',
      'olm.owner': 'etcdoperator.v0.9.4',
      'olm.owner.kind': 'ClusterServiceVersion',
      'olm.owner.namespace': 'operators',
    });
    const clusterOwner = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'operators', uid: 'u' } };
    expect(ownerLabels(clusterOwner)).not.toHaveProperty('olm.owner.namespace');
  });

  it('merges labels into a copy', () => {
    const cm = configMap();
    const labelled = withLabels(cm, ownerLabels(csv));
    expect(labelled.metadata.labels).toMatchObject({ app: 'etcd', 'olm.managed': 'true' });
    expect(cm.metadata.labels).toEqual({ app: 'etcd' });
  });

  it('adds an ownerReference once per owner, replacing an older one with the same uid', () => {
    const once = withOwner(configMap(), csv, { controller: false });
    const twice = withOwner(once, csv, { blockOwnerDeletion: true });
    expect(twice.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        name: 'etcdoperator.v0.9.4',
        uid: 'uid-1',
        blockOwnerDeletion: true,
      },
    ]);
    expect(isOwnedBy(twice, csv)).toBe(true);
    expect(isOwnedBy(configMap(), csv)).toBe(false);
  });

  it('refuses an owner in another namespace, which the garbage collector would not honour', () => {
    expect(() => withOwner(configMap('elsewhere'), csv)).toThrow(/can only own objects in its namespace/);
  });

  it('refuses an owner without a uid', () => {
    expect(() => ownerReference({ ...csv, metadata: { name: 'x' } })).toThrow(/needs a name and uid/);
  });
});

describe('applyPatchBody', () => {
  const stored = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: {
      name: 'etcd',
      namespace: 'operators',
      uid: 'u',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2024-05-01T12:00:00Z',
      managedFields: [{ manager: 'kubectl' }],
      labels: { a: 'b' },
    },
    spec: { name: 'etcd' },
    status: { state: 'AtLatestKnown' },
  };

  it('leaves out server-set metadata and the status when applying the object', () => {
    expect(applyPatchBody(stored, 'spec')).toEqual({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'operators', labels: { a: 'b' } },
      spec: { name: 'etcd' },
    });
  });

  it('sends only the status when applying the status', () => {
    expect(applyPatchBody(stored, 'status')).toEqual({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'operators', labels: { a: 'b' } },
      status: { state: 'AtLatestKnown' },
    });
  });
});
