import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import {
  type AdoptionInput,
  adoptionChanges,
  componentConditions,
  componentLabelKey,
  componentRef,
  type LabelChange,
  operatorNameOf,
  operatorNamesOf,
  operatorStatus,
  ownerCSVsOf,
} from '../../../src/install/operator-components.js';

const key = 'operators.coreos.com/etcd.ops';

describe('componentLabelKey', () => {
  it.each([
    ['etcd.ops', 'operators.coreos.com/etcd.ops'],
    ['a', 'operators.coreos.com/a'],
    // 63 characters fit as they are.
    ['x'.repeat(63), `operators.coreos.com/${'x'.repeat(63)}`],
    // Longer names are cut to 63 characters...
    [`${'x'.repeat(60)}abcdef`, `operators.coreos.com/${'x'.repeat(60)}abc`],
    // ...and a cut that ends in `.`, `_` or `-` loses those characters.
    [`${'x'.repeat(60)}.-_def`, `operators.coreos.com/${'x'.repeat(60)}`],
    ['my-operator.my-namespace', 'operators.coreos.com/my-operator.my-namespace'],
  ])('%s → %s', (name, expected) => {
    expect(componentLabelKey(name)).toEqual({ ok: true, value: expected });
  });

  it('refuses an empty name and one that leaves nothing once cut, naming the field', () => {
    expect(componentLabelKey('')).toEqual({
      ok: false,
      errors: [{ object: 'Operator', field: 'metadata.name', message: 'is empty' }],
    });
    const dashes = componentLabelKey('-'.repeat(70));
    expect(dashes.ok).toBe(false);
    if (!dashes.ok)
      expect(dashes.errors[0]).toMatchObject({
        object: `Operator/${'-'.repeat(70)}`,
        field: 'metadata.name',
      });
  });
});

const sub = (
  name: string,
  ns: string,
  pkg: string,
  status: Subscription['status'] = undefined,
): Subscription => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: { name, namespace: ns, uid: `uid-sub-${ns}-${name}` },
  spec: { name: pkg, source: 'cat', sourceNamespace: 'olm' },
  ...(status ? { status } : {}),
});

describe('operatorNameOf', () => {
  it('is <package>.<namespace>, cut like the label key when too long', () => {
    expect(operatorNameOf(sub('etcd', 'ops', 'etcd'))).toBe('etcd.ops');
    const long = operatorNameOf(sub('s', 'n'.repeat(40), 'p'.repeat(40)));
    expect(long).toBe(`${'p'.repeat(40)}.${'n'.repeat(22)}`);
    expect(operatorNameOf({ ...sub('s', 'ops', ''), spec: { ...sub('s', 'ops', '').spec, name: '' } })).toBe(
      undefined,
    );
  });
});

describe('operatorNamesOf', () => {
  it('reads the operators from component labels, leaving out other labels and those named as not components', () => {
    const labels = {
      'operators.coreos.com/etcd.ops': '',
      'operators.coreos.com/other.ns': '',
      'operators.coreos.com/subscription': 'etcd',
      'operators.coreos.com/': '',
      'olm.managed': 'true',
      'app.kubernetes.io/name': 'etcd',
    };
    expect(operatorNamesOf(labels, new Set(['operators.coreos.com/subscription'])).sort()).toEqual([
      'etcd.ops',
      'other.ns',
    ]);
    expect(operatorNamesOf(undefined, new Set())).toEqual([]);
  });
});

const csv = (
  name: string,
  ns: string,
  opts: { labels?: Record<string, string>; phase?: string; crds?: string[] } = {},
): ClusterServiceVersion => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: {
    name,
    namespace: ns,
    uid: `uid-${ns}-${name}`,
    ...(opts.labels ? { labels: opts.labels } : {}),
  },
  spec: {
    displayName: name,
    install: { strategy: 'deployment' },
    customresourcedefinitions: {
      owned: (opts.crds ?? []).map((n) => ({ name: n, version: 'v1', kind: 'K' })),
    },
  },
  ...(opts.phase
    ? {
        status: {
          phase: opts.phase as 'Succeeded',
          reason: 'InstallSucceeded',
          message: 'install strategy completed with no errors',
          lastUpdateTime: '2024-05-01T12:00:00Z',
          lastTransitionTime: '2024-05-01T11:00:00Z',
        },
      }
    : {}),
});

describe('componentConditions and componentRef', () => {
  it('gives a CSV its phase as one True condition', () => {
    expect(componentConditions(csv('etcd.v1', 'ops', { phase: 'Succeeded' }))).toEqual([
      {
        type: 'Succeeded',
        status: 'True',
        reason: 'InstallSucceeded',
        message: 'install strategy completed with no errors',
        lastUpdateTime: '2024-05-01T12:00:00Z',
        lastTransitionTime: '2024-05-01T11:00:00Z',
      },
    ]);
    expect(componentConditions(csv('etcd.v1', 'ops'))).toBeUndefined();
  });

  it('keeps the condition fields of other kinds and drops the rest', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'etcd-operator', namespace: 'ops' },
      status: {
        replicas: 1,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
            lastUpdateTime: '2024-05-01T12:00:00Z',
            lastTransitionTime: '2024-05-01T12:00:00Z',
            observedGeneration: 3,
          },
          'not a condition',
        ],
      },
    };
    expect(componentRef(deployment)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'etcd-operator',
      namespace: 'ops',
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
          lastUpdateTime: '2024-05-01T12:00:00Z',
          lastTransitionTime: '2024-05-01T12:00:00Z',
        },
      ],
    });
    // A cluster-scoped object without status: no namespace, no conditions.
    expect(
      componentRef({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'r' },
      }),
    ).toEqual({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'r' });
  });
});

describe('operatorStatus', () => {
  it('selects by the label and lists components sorted by kind, apiVersion, namespace and name', () => {
    const objs: KubeObject[] = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'b', namespace: 'ops' } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'z' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a', namespace: 'ops' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a', namespace: 'aaa' } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ops' } },
    ];
    expect(operatorStatus(key, objs)).toEqual({
      components: {
        labelSelector: { matchExpressions: [{ key, operator: 'Exists' }] },
        refs: [
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'z' },
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', namespace: 'ops' },
          { apiVersion: 'v1', kind: 'ServiceAccount', name: 'a', namespace: 'aaa' },
          { apiVersion: 'v1', kind: 'ServiceAccount', name: 'a', namespace: 'ops' },
          { apiVersion: 'v1', kind: 'ServiceAccount', name: 'b', namespace: 'ops' },
        ],
      },
    });
  });

  it('has no refs when nothing is left', () => {
    expect(operatorStatus(key, [])).toEqual({
      components: { labelSelector: { matchExpressions: [{ key, operator: 'Exists' }] } },
    });
  });
});

// ---- adoption ----

const ip = (name: string, ns: string, labels?: Record<string, string>): InstallPlan => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'InstallPlan',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  spec: { clusterServiceVersionNames: [], approval: 'Automatic', approved: true },
});
const crd = (name: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name, uid: `uid-${name}`, ...(labels ? { labels } : {}) },
});
const ownerLabels = (csvName: string, ns: string) => ({
  'olm.managed': 'true',
  'olm.owner': csvName,
  'olm.owner.kind': 'ClusterServiceVersion',
  'olm.owner.namespace': ns,
});
const labelled = { [key]: '' };

/** A cluster with etcd installed in `ops`, in the middle of an upgrade from v1 to v2. */
function world(): AdoptionInput {
  const v1 = csv('etcd.v1', 'ops', { labels: labelled, crds: ['etcdclusters.etcd.io'] });
  return {
    key,
    subscriptions: [
      sub('etcd', 'ops', 'etcd', {
        installedCSV: 'etcd.v1',
        currentCSV: 'etcd.v2',
        installPlanRef: { name: 'install-2', namespace: 'ops' },
        lastUpdated: '2024-05-01T12:00:00Z',
      }),
      // Another package, and the same package in another namespace: other operators.
      sub('redis', 'ops', 'redis', { installedCSV: 'redis.v1', lastUpdated: '' }),
      sub('etcd', 'dev', 'etcd', { installedCSV: 'etcd.v1', lastUpdated: '' }),
    ],
    csvs: [
      v1,
      csv('etcd.v2', 'ops', { crds: ['etcdclusters.etcd.io', 'etcdbackups.etcd.io'] }),
      csv('redis.v1', 'ops'),
      csv('etcd.v1', 'dev'),
      // A CSV carrying the label but copied from elsewhere (OLM's copied CSVs) is no owner.
      csv('copied.v1', 'ops', { labels: { ...labelled, 'olm.copiedFrom': 'elsewhere' } }),
    ],
    installPlans: [
      ip('install-1', 'ops', labelled),
      ip('install-2', 'ops'),
      ip('install-r', 'ops'),
      ip('install-1', 'dev', labelled),
    ],
    crds: [crd('etcdclusters.etcd.io', labelled), crd('etcdbackups.etcd.io'), crd('redis.redis.io')],
    owned: [
      // Owned by v1 through an ownerReference (by uid), and by owner labels.
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          name: 'etcd-operator',
          namespace: 'ops',
          ownerReferences: [
            {
              apiVersion: 'operators.coreos.com/v1alpha1',
              kind: 'ClusterServiceVersion',
              name: 'etcd.v1',
              uid: 'uid-ops-etcd.v1',
            },
          ],
        },
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'etcd.v1-abc', labels: ownerLabels('etcd.v1', 'ops') },
      },
      // Owned by v2, adopted now that the Subscription is installing it.
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'etcd-operator', namespace: 'ops', labels: ownerLabels('etcd.v2', 'ops') },
      },
      // Already labelled: no change.
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'etcd-config',
          namespace: 'ops',
          labels: { ...ownerLabels('etcd.v1', 'ops'), ...labelled },
        },
      },
      // A stale ownerReference (the name matches, the uid does not), and other owners' objects.
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'old',
          namespace: 'ops',
          ownerReferences: [
            {
              apiVersion: 'operators.coreos.com/v1alpha1',
              kind: 'ClusterServiceVersion',
              name: 'etcd.v1',
              uid: 'gone',
            },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'redis', namespace: 'ops', labels: ownerLabels('redis.v1', 'ops') },
      },
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'etcd', namespace: 'dev', labels: ownerLabels('etcd.v1', 'dev') },
      },
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'copy', namespace: 'ops', labels: ownerLabels('copied.v1', 'ops') },
      },
    ],
  };
}

const describeChange = (c: LabelChange) =>
  `${c.add ? '+' : '-'} ${c.object.kind} ${c.object.metadata?.namespace ?? ''}/${c.object.metadata?.name}`;

describe('adoptionChanges', () => {
  it('labels the Subscription, its CSVs and latest InstallPlan, what those CSVs own and their CRDs; unlabels older InstallPlans', () => {
    expect(adoptionChanges(world()).map(describeChange).sort()).toEqual([
      '+ ClusterRole /etcd.v1-abc',
      '+ ClusterServiceVersion ops/etcd.v2',
      '+ CustomResourceDefinition /etcdbackups.etcd.io',
      '+ Deployment ops/etcd-operator',
      '+ InstallPlan ops/install-2',
      '+ ServiceAccount ops/etcd-operator',
      '+ Subscription ops/etcd',
      '- InstallPlan ops/install-1',
    ]);
  });

  it('changes nothing once its changes are made', () => {
    const before = world();
    const apply = <T extends KubeObject>(list: readonly T[]): T[] =>
      list.map((o) => {
        const c = adoptionChanges(before).find((x) => x.object === o);
        if (!c) return o;
        const labels = { ...o.metadata?.labels };
        if (c.add) labels[c.key] = '';
        else delete labels[c.key];
        return { ...o, metadata: { ...o.metadata, labels } };
      });
    const after: AdoptionInput = {
      key,
      subscriptions: apply(before.subscriptions),
      csvs: apply(before.csvs),
      installPlans: apply(before.installPlans),
      crds: apply(before.crds),
      owned: apply(before.owned),
    };
    expect(adoptionChanges(after)).toEqual([]);
  });

  it('without a Subscription, still labels what a labelled CSV owns, and disowns nothing', () => {
    const w = world();
    const changes = adoptionChanges({ ...w, subscriptions: [] })
      .map(describeChange)
      .sort();
    expect(changes).toEqual(['+ ClusterRole /etcd.v1-abc', '+ Deployment ops/etcd-operator']);
  });
});

describe('ownerCSVsOf', () => {
  it('reads owner labels and CSV ownerReferences of a namespaced object', () => {
    expect(
      ownerCSVsOf({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 's',
          namespace: 'ops',
          labels: ownerLabels('a.v1', 'other'),
          ownerReferences: [
            {
              apiVersion: 'operators.coreos.com/v1alpha1',
              kind: 'ClusterServiceVersion',
              name: 'b.v1',
              uid: 'u',
            },
            { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'v' },
          ],
        },
      }),
    ).toEqual([
      { namespace: 'other', name: 'a.v1' },
      { namespace: 'ops', name: 'b.v1' },
    ]);
  });
});
