import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type GroupTargets,
  type NamespaceInfo,
  namespaceLabelChanges,
  OperatorGroupLabelPrefix,
  operatorGroupLabel,
} from '../../../src/install/operatorgroup.js';

const label = operatorGroupLabel;

describe('namespaceLabelChanges', () => {
  it.each([
    {
      name: 'a targeted namespace gets the group label, empty-valued',
      namespaces: [{ name: 'a' }, { name: 'b', labels: { team: 'b' } }],
      groups: [{ uid: 'u1', namespaces: ['a'] }],
      want: [{ name: 'a', labels: { [label('u1')]: '' } }],
    },
    {
      name: 'an all-namespaces group labels nothing',
      namespaces: [{ name: 'a' }],
      groups: [{ uid: 'u1', namespaces: [''] }],
      want: [],
    },
    {
      name: 'a namespace two groups target gets both labels',
      namespaces: [{ name: 'a' }],
      groups: [
        { uid: 'u1', namespaces: ['a', 'b'] },
        { uid: 'u2', namespaces: ['a'] },
      ],
      want: [{ name: 'a', labels: { [label('u1')]: '', [label('u2')]: '' } }],
    },
    {
      name: 'a label of a group gone or no longer targeting the namespace is removed, others stay',
      namespaces: [
        { name: 'a', labels: { [label('gone')]: '', [label('u1')]: '', team: 'a' } },
        { name: 'b', labels: { [label('u1')]: '' } },
      ],
      groups: [{ uid: 'u1', namespaces: ['b'] }],
      want: [{ name: 'a', labels: { [label('gone')]: null, [label('u1')]: null } }],
    },
    {
      name: 'a label with a value is reset to empty',
      namespaces: [{ name: 'a', labels: { [label('u1')]: 'x' } }],
      groups: [{ uid: 'u1', namespaces: ['a'] }],
      want: [{ name: 'a', labels: { [label('u1')]: '' } }],
    },
    {
      name: 'a group without a uid yet labels nothing; namespaces not on the cluster are skipped',
      namespaces: [{ name: 'a' }],
      groups: [
        { uid: '', namespaces: ['a'] },
        { uid: 'u1', namespaces: ['missing'] },
      ],
      want: [],
    },
  ])('$name', ({ namespaces, groups, want }) => {
    expect(namespaceLabelChanges(namespaces as NamespaceInfo[], groups)).toEqual(want);
  });

  it('leaves every namespace with exactly the labels of the groups targeting it, and then has nothing to change (property)', () => {
    const names = ['a', 'b', 'c', 'd'];
    const uids = ['u1', 'u2', 'u3'];
    const arbNamespace = fc.record({
      name: fc.constantFrom(...names),
      labels: fc.dictionary(
        fc.oneof(fc.constantFrom(...[...uids, 'stale'].map(label)), fc.constantFrom('team', 'env')),
        fc.constantFrom('', 'x'),
      ),
    });
    const arbGroup = fc.record({
      uid: fc.constantFrom(...uids),
      namespaces: fc.oneof(fc.constant(['']), fc.subarray(names)),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(arbNamespace, { selector: (n) => n.name }),
        fc.array(arbGroup, { maxLength: 4 }),
        (namespaces, groups) => {
          const patched = namespaces.map((ns) => {
            const change = namespaceLabelChanges(namespaces, groups).find((c) => c.name === ns.name);
            const labels: Record<string, string> = { ...ns.labels };
            for (const [k, v] of Object.entries(change?.labels ?? {})) {
              if (v === null) delete labels[k];
              else labels[k] = v;
            }
            return { name: ns.name, labels };
          });
          for (const ns of patched) {
            const want = new Set(
              (groups as GroupTargets[])
                .filter(
                  (g) =>
                    !(g.namespaces.length === 1 && g.namespaces[0] === '') && g.namespaces.includes(ns.name),
                )
                .map((g) => label(g.uid)),
            );
            const have = Object.keys(ns.labels).filter((k) => k.startsWith(OperatorGroupLabelPrefix));
            expect(new Set(have)).toEqual(want);
            for (const k of have) expect(ns.labels[k]).toBe('');
            // Other labels are left alone.
            const others = (l: Record<string, string>) =>
              Object.entries(l).filter(([k]) => !k.startsWith(OperatorGroupLabelPrefix));
            expect(others(ns.labels)).toEqual(
              others(namespaces.find((n) => n.name === ns.name)?.labels ?? {}),
            );
          }
          expect(namespaceLabelChanges(patched, groups)).toEqual([]);
        },
      ),
    );
  });
});
