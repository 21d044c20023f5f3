import { describe, expect, it } from 'vitest';
import type { KubeObject, ObjectMeta } from '../../../src/apis/meta.js';
import {
  addOwnerReference,
  csvOwnerOf,
  isManaged,
  managedSelector,
  ownerLabels,
  ownerSelector,
  withOwner,
} from '../../../src/install/ownership.js';

const csv = { name: 'etcdoperator.v0.9.4', namespace: 'operators', uid: 'uid-1' };
const subscription = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: { name: 'etcd', namespace: 'operators', uid: 'sub-1' },
};

const configMap = (namespace = 'operators'): KubeObject & { metadata: ObjectMeta } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace, labels: { app: 'etcd' } },
});

describe('owner labels', () => {
  it('labels with olm.managed and the owning CSV, as OLM does, and selects by them', () => {
    expect(ownerLabels(csv)).toEqual({
      'olm.managed': 'true',
      'olm.owner': 'etcdoperator.v0.9.4',
      'olm.owner.kind': 'ClusterServiceVersion',
      'olm.owner.namespace': 'operators',
    });
    expect(ownerSelector(csv)).toBe(
      'olm.managed=true,olm.owner=etcdoperator.v0.9.4,olm.owner.kind=ClusterServiceVersion,olm.owner.namespace=operators',
    );
  });

  const cases: { title: string; labels: Record<string, string> | undefined; want: unknown }[] = [
    {
      title: 'the labels a CSV gives',
      labels: ownerLabels(csv),
      want: { name: csv.name, namespace: 'operators' },
    },
    { title: 'no labels', labels: undefined, want: undefined },
    {
      title: 'an owner of another kind',
      labels: { 'olm.owner': 'x', 'olm.owner.kind': 'OperatorGroup', 'olm.owner.namespace': 'ns' },
      want: undefined,
    },
    {
      title: 'a kind without a name',
      labels: { 'olm.owner.kind': 'ClusterServiceVersion' },
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(`csvOwnerOf reads ${c.title}`, () => {
      expect(csvOwnerOf(c.labels)).toEqual(c.want);
    });
  }
});

describe('managed objects', () => {
  it('olm.managed=true marks what Bosun manages, and selects it', () => {
    expect(managedSelector).toBe('olm.managed=true');
    expect(isManaged({ metadata: { labels: ownerLabels(csv) } })).toBe(true);
    expect(isManaged({ metadata: { labels: { 'olm.managed': 'false' } } })).toBe(false);
    expect(isManaged({})).toBe(false);
  });
});

describe('owner references', () => {
  it('a CSV owns without blocking, replacing a reference to an earlier CSV of the same name', () => {
    const stale = addOwnerReference(configMap(), { name: csv.name, uid: 'old' });
    const owned = addOwnerReference(stale, csv);
    expect(owned.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        name: csv.name,
        uid: 'uid-1',
        controller: false,
        blockOwnerDeletion: false,
      },
    ]);
  });

  it('any owner: one reference per uid, the latest options win', () => {
    const once = withOwner(configMap(), subscription, { controller: false });
    const twice = withOwner(once, subscription, { blockOwnerDeletion: true });
    expect(twice.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        name: 'etcd',
        uid: 'sub-1',
        blockOwnerDeletion: true,
      },
    ]);
    expect(configMap().metadata.ownerReferences).toBeUndefined();
  });

  it('refuses an owner in another namespace, which the garbage collector would not honour', () => {
    expect(() => withOwner(configMap('elsewhere'), subscription)).toThrow(
      /can only own objects in its namespace/,
    );
  });

  it('refuses an owner without a uid', () => {
    expect(() => withOwner(configMap(), { ...subscription, metadata: { name: 'x' } })).toThrow(
      /needs a name and uid/,
    );
  });
});
