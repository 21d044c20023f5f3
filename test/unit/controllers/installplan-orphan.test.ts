import { describe, expect, it } from 'vitest';
import type { OwnerReference } from '../../../src/apis/meta.js';
import type { Subscription } from '../../../src/apis/operators.js';
import { orphanedBy, subscriptionOwners } from '../../../src/controllers/installplan-orphan.js';

const owner = (name: string, uid: string): OwnerReference => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  name,
  uid,
  controller: false,
  blockOwnerDeletion: false,
});

const sub = (name: string, uid: string, deleting = false): Subscription => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: {
    name,
    namespace: 'ns',
    uid,
    ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: { name: 'pkg', source: 'cat', sourceNamespace: 'olm' },
});

type Row = [string, OwnerReference[], [string, Subscription | undefined][], RegExp | undefined];

const table: Row[] = [
  ['a plan of no Subscription (made by hand) is never orphaned', [], [], undefined],
  ['a plan whose Subscription is there goes on', [owner('a', 'u1')], [['a', sub('a', 'u1')]], undefined],
  [
    'a plan whose Subscription is not found is orphaned',
    [owner('a', 'u1')],
    [['a', undefined]],
    /a was deleted/,
  ],
  [
    'a Subscription made again under the same name is another one: the old plan is orphaned',
    [owner('a', 'u1')],
    [['a', sub('a', 'u2')]],
    /a was deleted \(the one there now, uid u2, is another\)/,
  ],
  [
    'a Subscription being deleted orphans its plan already',
    [owner('a', 'u1')],
    [['a', sub('a', 'u1', true)]],
    /a is being deleted/,
  ],
  [
    'a plan of two Subscriptions goes on while one of them is there',
    [owner('a', 'u1'), owner('b', 'u2')],
    [
      ['a', undefined],
      ['b', sub('b', 'u2')],
    ],
    undefined,
  ],
  [
    'a plan of two Subscriptions is orphaned once both are gone, naming each',
    [owner('a', 'u1'), owner('b', 'u2')],
    [
      ['a', undefined],
      ['b', sub('b', 'u3')],
    ],
    /a was deleted; Subscription b was deleted \(the one there now/,
  ],
];

describe('orphanedBy', () => {
  it.each(table)('%s', (_name, owners, live, expected) => {
    const why = orphanedBy(owners, new Map(live));
    if (expected === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(expected);
  });
});

describe('subscriptionOwners', () => {
  it('counts only ownerReferences to operators.coreos.com Subscriptions', () => {
    const refs: OwnerReference[] = [
      owner('a', 'u1'),
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u2' },
      { apiVersion: 'example.com/v1', kind: 'Subscription', name: 'other', uid: 'u3' },
    ];
    expect(subscriptionOwners({ metadata: { ownerReferences: refs } }).map((o) => o.name)).toEqual(['a']);
  });
});
