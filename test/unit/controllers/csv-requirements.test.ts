import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion, OperatorGroup } from '../../../src/apis/operators.js';
import { checkRequirements, operatorGroupVerdict } from '../../../src/controllers/csv-requirements.js';

function csv(installModes: ClusterServiceVersion['spec']['installModes'] = allModes): ClusterServiceVersion {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'op.v1', namespace: 'ops' },
    spec: {
      displayName: 'op',
      installModes,
      customresourcedefinitions: {
        owned: [{ name: 'widgets.example.com', version: 'v1', kind: 'Widget' }],
        required: [{ name: 'gadgets.example.com', version: 'v1', kind: 'Gadget' }],
      },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [],
          permissions: [{ serviceAccountName: 'op', rules: [] }],
          clusterPermissions: [{ serviceAccountName: 'op-cluster', rules: [] }],
        },
      },
    },
  };
}

const allModes = [
  { type: 'OwnNamespace', supported: true },
  { type: 'SingleNamespace', supported: true },
  { type: 'MultiNamespace', supported: false },
  { type: 'AllNamespaces', supported: true },
] as const satisfies ClusterServiceVersion['spec']['installModes'];

const og = (name: string, spec: OperatorGroup['spec'] = {}): OperatorGroup => ({
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name, namespace: 'ops' },
  spec,
});

const established = { status: { conditions: [{ type: 'Established', status: 'True' }] } };

describe('operatorGroupVerdict', () => {
  const namespaces = [{ name: 'ops' }, { name: 'a', labels: { team: 'x' } }, { name: 'b' }];
  it.each([
    ['no group', [], { ok: false, reason: 'NoOperatorGroup' }],
    ['two groups', [og('x'), og('y')], { ok: false, reason: 'TooManyOperatorGroups' }],
    ['all namespaces', [og('g')], { ok: true, targets: { operatorGroup: 'g', namespaces: [''] } }],
    [
      'target namespaces',
      [og('g', { targetNamespaces: ['a'] })],
      { ok: true, targets: { operatorGroup: 'g', namespaces: ['a'] } },
    ],
    [
      'a selector',
      [og('g', { selector: { matchLabels: { team: 'x' } } })],
      { ok: true, targets: { operatorGroup: 'g', namespaces: ['a'] } },
    ],
    [
      'two targets without MultiNamespace',
      [og('g', { targetNamespaces: ['a', 'b'] })],
      { ok: false, reason: 'UnsupportedOperatorGroup' },
    ],
    [
      '"" in targetNamespaces',
      [og('g', { targetNamespaces: [''] })],
      { ok: false, reason: 'UnsupportedOperatorGroup' },
    ],
  ] as const)('%s', (_name, groups, expected) => {
    expect(operatorGroupVerdict(csv(), groups, namespaces)).toMatchObject(expected);
  });

  it('all namespaces is refused when the CSV does not support it', () => {
    const own = csv([{ type: 'OwnNamespace', supported: true }]);
    expect(operatorGroupVerdict(own, [og('g')], namespaces)).toMatchObject({
      ok: false,
      reason: 'UnsupportedOperatorGroup',
      message: 'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces',
    });
  });
});

describe('checkRequirements', () => {
  it('lists every owned and required CRD and every ServiceAccount, met only when all are present', () => {
    const r = checkRequirements({
      csv: csv(),
      crd: (name) =>
        name === 'widgets.example.com' ? established : name === 'gadgets.example.com' ? {} : undefined,
      serviceAccountExists: (name) => name === 'op',
    });
    expect(r.met).toBe(false);
    expect(r.statuses.map((s) => [s.kind, s.name, s.status])).toEqual([
      ['CustomResourceDefinition', 'gadgets.example.com', 'PresentNotAvailable'],
      ['CustomResourceDefinition', 'widgets.example.com', 'Present'],
      ['ServiceAccount', 'op', 'Present'],
      ['ServiceAccount', 'op-cluster', 'NotPresent'],
    ]);
  });

  it('a missing CRD is NotPresent', () => {
    const r = checkRequirements({ csv: csv(), crd: () => undefined, serviceAccountExists: () => true });
    expect(r.statuses.filter((s) => s.status === 'NotPresent').map((s) => s.name)).toEqual([
      'gadgets.example.com',
      'widgets.example.com',
    ]);
  });

  it('is met when everything is present', () => {
    expect(
      checkRequirements({ csv: csv(), crd: () => established, serviceAccountExists: () => true }).met,
    ).toBe(true);
  });
});
