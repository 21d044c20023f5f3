import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { csvRbacDelta, csvRules, describeRule, rbacDelta } from '../../../src/install/rbac-delta.js';

type Perms = { serviceAccountName: string; rules: Record<string, string[]>[] }[];

const csv = (permissions: Perms, clusterPermissions: Perms = []) =>
  ({
    spec: { install: { strategy: 'deployment', spec: { deployments: [], permissions, clusterPermissions } } },
  }) as unknown as ClusterServiceVersion;

const configmaps = { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] };
const widgets = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['*'] };
const nodes = { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] };

describe('csvRbacDelta', () => {
  it('the same rules, in another order and with repeats, are no change', () => {
    const before = csv([{ serviceAccountName: 'op', rules: [configmaps, widgets] }]);
    const after = csv([
      {
        serviceAccountName: 'op',
        rules: [widgets, { ...configmaps, verbs: ['watch', 'list', 'get', 'get'] }],
      },
    ]);
    expect(csvRbacDelta([before], [after])).toEqual({ added: [], removed: [] });
  });

  it('a new rule is added, a dropped one removed, each with its scope and service account', () => {
    const before = csv(
      [{ serviceAccountName: 'op', rules: [configmaps] }],
      [{ serviceAccountName: 'op', rules: [nodes] }],
    );
    const after = csv([{ serviceAccountName: 'op', rules: [configmaps, widgets] }]);
    expect(csvRbacDelta([before], [after])).toEqual({
      added: [
        {
          scope: 'namespace',
          serviceAccount: 'op',
          verbs: ['*'],
          apiGroups: ['example.com'],
          resources: ['widgets'],
        },
      ],
      removed: [
        {
          scope: 'cluster',
          serviceAccount: 'op',
          verbs: ['get', 'list'],
          apiGroups: [''],
          resources: ['nodes'],
        },
      ],
    });
  });

  it('a rule that gains a verb reads as the old rule removed and the new one added', () => {
    const before = csv([{ serviceAccountName: 'op', rules: [configmaps] }]);
    const after = csv([
      { serviceAccountName: 'op', rules: [{ ...configmaps, verbs: [...configmaps.verbs, 'update'] }] },
    ]);
    const d = csvRbacDelta([before], [after]);
    expect(d.added.map(describeRule)).toEqual(['get,list,update,watch configmaps']);
    expect(d.removed.map(describeRule)).toEqual(['get,list,watch configmaps']);
  });

  it('the same rule for another service account is a change', () => {
    const before = csv([{ serviceAccountName: 'op', rules: [configmaps] }]);
    const after = csv([{ serviceAccountName: 'op-v2', rules: [configmaps] }]);
    const d = csvRbacDelta([before], [after]);
    expect(d.added.map((r) => r.serviceAccount)).toEqual(['op-v2']);
    expect(d.removed.map((r) => r.serviceAccount)).toEqual(['op']);
  });

  it('a new install adds every rule', () => {
    const after = csv(
      [{ serviceAccountName: 'op', rules: [configmaps] }],
      [{ serviceAccountName: 'op', rules: [nodes] }],
    );
    expect(csvRbacDelta([], [after])).toEqual({ added: csvRules(after), removed: [] });
    expect(csvRules(after)).toHaveLength(2);
  });

  it('a namespaced rule and the same cluster-wide rule differ', () => {
    const ns = csvRules(csv([{ serviceAccountName: 'op', rules: [nodes] }]));
    const cluster = csvRules(csv([], [{ serviceAccountName: 'op', rules: [nodes] }]));
    expect(rbacDelta(ns, cluster).added).toHaveLength(1);
    expect(rbacDelta(ns, cluster).removed).toHaveLength(1);
  });
});

describe('describeRule', () => {
  it.each([
    [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }, 'get configmaps'],
    [{ verbs: ['*'], apiGroups: ['a.io', 'b.io'], resources: ['xs'] }, '* xs.a.io, xs.b.io'],
    [{ verbs: ['get'], resources: ['secrets'], resourceNames: ['token'] }, 'get secrets named token'],
    [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }, 'get /healthz'],
  ])('%j reads %s', (rule, text) => {
    expect(describeRule({ scope: 'namespace', serviceAccount: 'op', ...rule })).toBe(text);
  });
});
