import { describe, expect, it } from 'vitest';
import type { InstallMode, OperatorGroup } from '../../../src/apis/operators.js';
import {
  installModeSupport,
  isAllNamespaces,
  type NamespaceInfo,
  operatorGroupAnnotations,
  operatorGroupNamespaces,
  parseTargetNamespaces,
  pickOperatorGroup,
  targetNamespacesAnnotation,
  type Verdict,
} from '../../../src/install/index.js';

const modes = (...supported: InstallMode['type'][]): InstallMode[] =>
  (['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'] as const).map((type) => ({
    type,
    supported: supported.includes(type),
  }));

const ok: Verdict = { supported: true };
const unsupported = (message: string): Verdict => ({
  supported: false,
  reason: 'UnsupportedOperatorGroup',
  message,
});

describe('installModeSupport', () => {
  const cases: { name: string; modes: InstallMode[]; targets: string[]; expected: Verdict }[] = [
    {
      name: 'OwnNamespace group with OwnNamespace supported',
      modes: modes('OwnNamespace'),
      targets: ['ops'],
      expected: ok,
    },
    {
      name: 'OwnNamespace group without OwnNamespace',
      modes: modes('SingleNamespace', 'AllNamespaces'),
      targets: ['ops'],
      expected: unsupported(
        'OwnNamespace InstallModeType not supported, cannot configure to watch own namespace',
      ),
    },
    { name: 'SingleNamespace group', modes: modes('SingleNamespace'), targets: ['team-a'], expected: ok },
    {
      name: 'SingleNamespace group without SingleNamespace',
      modes: modes('OwnNamespace', 'MultiNamespace'),
      targets: ['team-a'],
      expected: unsupported(
        'SingleNamespace InstallModeType not supported, cannot configure to watch one namespace',
      ),
    },
    {
      name: 'MultiNamespace group',
      modes: modes('MultiNamespace'),
      targets: ['team-a', 'team-b'],
      expected: ok,
    },
    {
      name: 'MultiNamespace group without MultiNamespace',
      modes: modes('SingleNamespace', 'AllNamespaces'),
      targets: ['team-a', 'team-b'],
      expected: unsupported(
        'MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces',
      ),
    },
    {
      name: 'MultiNamespace group including the own namespace without OwnNamespace',
      modes: modes('MultiNamespace'),
      targets: ['ops', 'team-a'],
      expected: unsupported(
        'OwnNamespace InstallModeType not supported, cannot configure to watch own namespace',
      ),
    },
    { name: 'AllNamespaces group', modes: modes('AllNamespaces'), targets: [''], expected: ok },
    {
      name: 'AllNamespaces group without AllNamespaces',
      modes: modes('OwnNamespace', 'SingleNamespace', 'MultiNamespace'),
      targets: [''],
      expected: unsupported(
        'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces',
      ),
    },
    {
      name: 'all namespaces mixed with named ones',
      modes: modes('MultiNamespace', 'AllNamespaces'),
      targets: ['', 'team-a'],
      expected: unsupported(
        'operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1',
      ),
    },
    {
      name: 'a selector that matched no namespace',
      modes: modes('OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'),
      targets: [],
      expected: {
        supported: false,
        reason: 'NoTargetNamespaces',
        message: 'no targetNamespaces are matched operatorgroups namespace selection',
      },
    },
    {
      name: 'a CSV listing an install mode twice',
      modes: [...modes('AllNamespaces'), { type: 'AllNamespaces', supported: false }],
      targets: [''],
      expected: {
        supported: false,
        reason: 'InvalidInstallModes',
        message:
          'InstallMode list contains duplicates, cannot make set: AllNamespaces appears more than once',
      },
    },
    {
      name: 'a CSV without install modes',
      modes: [],
      targets: ['ops'],
      expected: unsupported(
        'OwnNamespace InstallModeType not supported, cannot configure to watch own namespace',
      ),
    },
  ];
  for (const c of cases) {
    it(`${c.expected.supported ? 'allows' : 'refuses'} ${c.name}`, () => {
      expect(installModeSupport(c.modes, 'ops', c.targets)).toEqual(c.expected);
    });
  }
});

describe('operatorGroupNamespaces', () => {
  const namespaces: NamespaceInfo[] = [
    { name: 'team-b', labels: { team: 'b', tier: 'prod' } },
    { name: 'team-a', labels: { team: 'a', tier: 'prod' } },
    { name: 'sandbox', labels: { tier: 'dev' } },
    { name: 'kube-system' },
  ];
  const og = (spec?: OperatorGroup['spec']): Pick<OperatorGroup, 'spec'> => ({ spec });
  const cases: { name: string; spec?: OperatorGroup['spec']; expected: string[] }[] = [
    { name: 'no spec targets all namespaces', expected: [''] },
    { name: 'an empty spec targets all namespaces', spec: {}, expected: [''] },
    { name: 'an empty selector targets all namespaces', spec: { selector: {} }, expected: [''] },
    {
      name: 'targetNamespaces, sorted and deduplicated',
      spec: { targetNamespaces: ['team-b', 'team-a', 'team-b'] },
      expected: ['team-a', 'team-b'],
    },
    {
      name: 'targetNamespaces win over a selector',
      spec: { targetNamespaces: ['sandbox'], selector: { matchLabels: { tier: 'prod' } } },
      expected: ['sandbox'],
    },
    {
      name: 'an empty targetNamespaces list falls back to the selector',
      spec: { targetNamespaces: [], selector: { matchLabels: { tier: 'prod' } } },
      expected: ['team-a', 'team-b'],
    },
    {
      name: 'a selector with expressions',
      spec: {
        selector: {
          matchExpressions: [
            { key: 'team', operator: 'Exists' },
            { key: 'team', operator: 'NotIn', values: ['b'] },
          ],
        },
      },
      expected: ['team-a'],
    },
    {
      name: 'a selector matching nothing',
      spec: { selector: { matchLabels: { tier: 'staging' } } },
      expected: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(operatorGroupNamespaces(og(c.spec), namespaces)).toEqual({ ok: true, value: c.expected });
    });
  }

  it('rejects "" in targetNamespaces, naming the field', () => {
    expect(operatorGroupNamespaces(og({ targetNamespaces: ['team-a', ''] }), namespaces)).toEqual({
      ok: false,
      errors: [
        {
          field: 'spec.targetNamespaces',
          message: 'must not contain "" (all namespaces); leave targetNamespaces and selector out instead',
        },
      ],
    });
  });
});

describe('OperatorGroup annotations', () => {
  it('writes targets sorted and comma-joined, and all namespaces as ""', () => {
    expect(targetNamespacesAnnotation(['team-b', 'team-a'])).toBe('team-a,team-b');
    expect(targetNamespacesAnnotation([''])).toBe('');
  });

  it('reads the annotation back to the same targets', () => {
    for (const targets of [[''], ['ops'], ['team-a', 'team-b']]) {
      expect(parseTargetNamespaces(targetNamespacesAnnotation(targets))).toEqual(targets);
    }
    expect(isAllNamespaces(parseTargetNamespaces(''))).toBe(true);
    expect(isAllNamespaces(['ops'])).toBe(false);
  });

  it("gives the group's name, the operator's namespace and the targets", () => {
    expect(operatorGroupAnnotations({ operatorGroup: 'og', namespaces: ['team-a'] }, 'ops')).toEqual({
      'olm.operatorGroup': 'og',
      'olm.operatorNamespace': 'ops',
      'olm.targetNamespaces': 'team-a',
    });
  });
});

describe('pickOperatorGroup', () => {
  const group = (name: string): OperatorGroup => ({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name, namespace: 'ops' },
  });

  it('picks the only group of a namespace', () => {
    expect(pickOperatorGroup([group('og')])).toEqual({ ok: true, group: group('og') });
  });

  it('refuses a namespace without a group with NoOperatorGroup', () => {
    expect(pickOperatorGroup([])).toEqual({
      ok: false,
      reason: 'NoOperatorGroup',
      message: 'csv in namespace with no operatorgroups',
    });
  });

  it('refuses a namespace with two groups with TooManyOperatorGroups', () => {
    expect(pickOperatorGroup([group('a'), group('b')])).toMatchObject({
      ok: false,
      reason: 'TooManyOperatorGroups',
    });
  });
});
