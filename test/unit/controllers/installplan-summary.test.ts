import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { installedOf, packageChannels, summarize } from '../../../src/controllers/installplan-summary.js';

const csv = (
  name: string,
  extra: { replaces?: string; labels?: Record<string, string>; rules?: string[] } = {},
) =>
  ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name, namespace: 'ns', ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: {
      ...(extra.replaces ? { replaces: extra.replaces } : {}),
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [],
          permissions: [
            {
              serviceAccountName: 'op',
              rules: (extra.rules ?? []).map((r) => ({ apiGroups: [''], resources: [r], verbs: ['get'] })),
            },
          ],
        },
      },
    },
  }) as unknown as ClusterServiceVersion;

describe('summarize', () => {
  it('a plan awaiting approval carries the CRD verdict; without findings given, none', () => {
    const base = { to: ['op.v2'], newCSVs: [], exists: [] };
    expect(summarize({ ...base, crdFindings: ['CRD a.b v1: FieldRemoved: .spec.x'] }).crdSafety).toEqual({
      safe: false,
      findings: ['CRD a.b v1: FieldRemoved: .spec.x'],
    });
    expect(summarize({ ...base, crdFindings: [] }).crdSafety).toEqual({ safe: true, findings: [] });
    expect(summarize(base).crdSafety).toBeUndefined();
  });

  it('an upgrade: from, to, path, objects by whether they exist, RBAC counts', () => {
    const hops = [{ from: 'op.v1', to: 'op.v2', via: 'replaces' as const }];
    expect(
      summarize({
        to: ['op.v2'],
        from: csv('op.v1', { rules: ['configmaps', 'nodes'] }),
        path: { channel: 'stable', hops },
        newCSVs: [csv('op.v2', { rules: ['configmaps', 'secrets', 'pods'] })],
        exists: [true, false, true, false, false],
      }),
    ).toEqual({
      from: 'op.v1',
      to: ['op.v2'],
      channel: 'stable',
      path: hops,
      objects: { create: 3, present: 2, delete: 1 },
      rbac: { added: 2, removed: 1 },
    });
  });

  it('a new install: no from, no path, nothing to delete, every rule added', () => {
    expect(
      summarize({
        to: ['op.v1'],
        newCSVs: [csv('op.v1', { rules: ['configmaps'] })],
        exists: [false, false],
      }),
    ).toEqual({
      to: ['op.v1'],
      objects: { create: 2, present: 0, delete: 0 },
      rbac: { added: 1, removed: 0 },
    });
  });

  it('an upgrade without a path through the catalog says so by leaving it out', () => {
    const s = summarize({ to: ['op.v2'], from: csv('op.v1'), newCSVs: [csv('op.v2')], exists: [] });
    expect(s.from).toBe('op.v1');
    expect(s).not.toHaveProperty('path');
    expect(s).not.toHaveProperty('channel');
  });
});

describe('installedOf', () => {
  const ofOp = (c: ClusterServiceVersion) => c.metadata.name!.startsWith('op.');

  it('the package’s CSV, not another package’s, not a copy, not the one the plan installs', () => {
    const csvs = [
      csv('other.v1'),
      csv('op.v1', { labels: { 'olm.copiedFrom': 'elsewhere' } }),
      csv('op.v2'),
      csv('op.v3'),
    ];
    expect(installedOf(csvs, ['op.v3'], ofOp)?.metadata.name).toBe('op.v2');
  });

  it('while an upgrade is under way, the newer of the two (the one nothing replaces)', () => {
    const csvs = [csv('op.v2', { replaces: 'op.v1' }), csv('op.v1')];
    expect(installedOf(csvs, ['op.v3'], ofOp)?.metadata.name).toBe('op.v2');
  });

  it('none for a new install', () => {
    expect(installedOf([csv('other.v1')], ['op.v1'], ofOp)).toBeUndefined();
  });
});

describe('packageChannels', () => {
  it('the channels listing the target, the default channel first, then by name', () => {
    const entries = [{ name: 'op.v2' }];
    const config = {
      packages: [{ schema: 'olm.package' as const, name: 'op', defaultChannel: 'stable' }],
      channels: [
        { schema: 'olm.channel' as const, package: 'op', name: 'alpha', entries },
        { schema: 'olm.channel' as const, package: 'op', name: 'stable', entries },
        { schema: 'olm.channel' as const, package: 'op', name: 'beta', entries: [{ name: 'op.v1' }] },
        { schema: 'olm.channel' as const, package: 'other', name: 'stable', entries },
      ],
    };
    expect(packageChannels(config, 'op', 'op.v2').map((c) => c.name)).toEqual(['stable', 'alpha']);
  });
});
