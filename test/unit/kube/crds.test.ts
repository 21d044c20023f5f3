import { describe, expect, it } from 'vitest';
import {
  crdStatusOf,
  isEstablished,
  isRefusedForGood,
  notEstablishedReason,
} from '../../../src/kube/crds.js';

const established = { type: 'Established', status: 'True', reason: 'InitialNamesAccepted' };
const conflict = { type: 'NamesAccepted', status: 'False', reason: 'PluralConflict', message: 'taken' };

describe('crdStatusOf', () => {
  it.each([
    { name: 'not an object', response: 'CRD', want: [] },
    { name: 'no status', response: { kind: 'CustomResourceDefinition' }, want: [] },
    {
      name: 'conditions not a list',
      response: { status: { conditions: { type: 'Established' } } },
      want: [],
    },
    {
      name: 'conditions kept, malformed ones left out',
      response: { status: { conditions: [established, { type: 'Established' }, null, conflict] } },
      want: [established, conflict],
    },
    {
      name: 'a reason or message that is not a string is dropped',
      response: { status: { conditions: [{ type: 'Established', status: 'False', reason: 7 }] } },
      want: [{ type: 'Established', status: 'False' }],
    },
  ])('$name', ({ response, want }) => {
    expect(crdStatusOf(response).status?.conditions).toEqual(want);
  });

  it('reads an apply response as the CRD helpers do', () => {
    expect(isEstablished(crdStatusOf({ status: { conditions: [established] } }))).toBe(true);
    const refused = crdStatusOf({ status: { conditions: [conflict] } });
    expect(isEstablished(refused)).toBe(false);
    expect(isRefusedForGood(refused)).toBe(true);
    expect(notEstablishedReason(refused)).toBe('NamesAccepted=False (PluralConflict: taken)');
  });
});
