import { describe, expect, it } from 'vitest';
import type { OperatorGroup } from '../../../src/apis/operators.js';
import { nextOperatorGroupStatus } from '../../../src/controllers/operatorgroup.js';

const now = Date.parse('2026-11-22T04:00:00Z');
const og = (spec: OperatorGroup['spec'], status?: OperatorGroup['status']): OperatorGroup => ({
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name: 'og', namespace: 'ops' },
  spec,
  ...(status ? { status } : {}),
});
const namespaces = [
  { name: 'a', labels: { team: 'x' } },
  { name: 'b', labels: { team: 'x' } },
  { name: 'c' },
];

describe('nextOperatorGroupStatus', () => {
  it.each([
    ['no spec targets all namespaces', undefined, ['']],
    ['targetNamespaces, sorted', { targetNamespaces: ['c', 'a'] }, ['a', 'c']],
    ['a selector picks the labelled namespaces', { selector: { matchLabels: { team: 'x' } } }, ['a', 'b']],
    [
      'targetNamespaces win over a selector',
      { targetNamespaces: ['c'], selector: { matchLabels: { team: 'x' } } },
      ['c'],
    ],
    ['a selector matching nothing targets nothing', { selector: { matchLabels: { team: 'y' } } }, []],
  ] as const)('%s', (_name, spec, expected) => {
    const status = nextOperatorGroupStatus(og(spec as OperatorGroup['spec']), namespaces, 1, now);
    expect(status).toEqual({ namespaces: expected, lastUpdated: '2026-11-22T04:00:00Z' });
  });

  it('writes nothing (and keeps lastUpdated) when the namespaces did not change', () => {
    const current = og(
      { targetNamespaces: ['a'] },
      { namespaces: ['a'], lastUpdated: '2026-01-01T00:00:00Z' },
    );
    expect(nextOperatorGroupStatus(current, namespaces, 1, now)).toBeUndefined();
  });

  const saRef = { apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'ops', name: 'sa', uid: 'u1' };

  it('moves lastUpdated when the namespaces change, keeping the rest of the status', () => {
    const current = og(
      { targetNamespaces: ['a', 'b'], serviceAccountName: 'sa' },
      { namespaces: ['a'], lastUpdated: '2026-01-01T00:00:00Z', serviceAccountRef: saRef },
    );
    expect(nextOperatorGroupStatus(current, namespaces, 1, now, { found: true, uid: 'u1' })).toEqual({
      namespaces: ['a', 'b'],
      lastUpdated: '2026-11-22T04:00:00Z',
      serviceAccountRef: saRef,
    });
  });

  it('refers to the ServiceAccount the group names once it exists, and says when it does not', () => {
    const spec = { targetNamespaces: ['a'], serviceAccountName: 'sa' };
    const missing = nextOperatorGroupStatus(
      og(spec, { namespaces: ['a'], lastUpdated: '2026-01-01T00:00:00Z' }),
      namespaces,
      1,
      now,
      { found: false, message: 'ServiceAccount sa not found' },
    );
    expect(missing).toEqual({
      namespaces: ['a'],
      lastUpdated: '2026-01-01T00:00:00Z',
      conditions: [
        {
          type: 'OperatorGroupServiceAccount',
          status: 'True',
          reason: 'ServiceAccountNotFound',
          message: 'ServiceAccount sa not found',
          lastTransitionTime: '2026-11-22T04:00:00Z',
        },
      ],
    });
    const found = nextOperatorGroupStatus(og(spec, missing), namespaces, 1, now + 1000, {
      found: true,
      uid: 'u1',
    });
    expect(found).toEqual({
      namespaces: ['a'],
      lastUpdated: '2026-11-22T04:00:01Z',
      serviceAccountRef: saRef,
      conditions: [],
    });
    expect(
      nextOperatorGroupStatus(og(spec, found), namespaces, 1, now + 2000, { found: true, uid: 'u1' }),
    ).toBeUndefined();
    // The name taken out of the spec: the reference goes (as OLM resets it).
    expect(
      nextOperatorGroupStatus(og({ targetNamespaces: ['a'] }, found), namespaces, 1, now + 3000),
    ).toEqual({
      namespaces: ['a'],
      lastUpdated: '2026-11-22T04:00:03Z',
      conditions: [],
    });
  });

  it('leaves the status alone for a spec the CSVs will report ("" in targetNamespaces)', () => {
    expect(nextOperatorGroupStatus(og({ targetNamespaces: [''] }), namespaces, 1, now)).toBeUndefined();
  });

  it('a group with neighbours in its namespace carries MultipleOperatorGroup, and loses it when alone again', () => {
    const current = og(
      { targetNamespaces: ['a'] },
      { namespaces: ['a'], lastUpdated: '2026-01-01T00:00:00Z' },
    );
    const crowded = nextOperatorGroupStatus(current, namespaces, 2, now);
    expect(crowded).toEqual({
      namespaces: ['a'],
      lastUpdated: '2026-01-01T00:00:00Z',
      conditions: [
        {
          type: 'MultipleOperatorGroup',
          status: 'True',
          reason: 'MultipleOperatorGroupsFound',
          message: 'Multiple OperatorGroup found in the same namespace',
          lastTransitionTime: '2026-11-22T04:00:00Z',
        },
      ],
    });
    expect(
      nextOperatorGroupStatus({ ...current, status: crowded }, namespaces, 2, now + 5000),
    ).toBeUndefined();
    expect(nextOperatorGroupStatus({ ...current, status: crowded }, namespaces, 1, now)).toEqual({
      namespaces: ['a'],
      lastUpdated: '2026-01-01T00:00:00Z',
      conditions: [],
    });
  });
});
