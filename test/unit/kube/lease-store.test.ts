import { describe, expect, it } from 'vitest';
import { leaseRecord } from '../../../src/kube/lease-store.js';

describe('leaseRecord', () => {
  const empty = {
    holderIdentity: '',
    leaseDurationSeconds: 0,
    acquireTime: '',
    renewTime: '',
    leaseTransitions: 0,
  };
  it.each([
    ['a Lease without a spec is free at once', {}, empty],
    [
      'a released Lease (the API server omits the empty holder)',
      { spec: { leaseDurationSeconds: 1, leaseTransitions: 4 } },
      { ...empty, leaseDurationSeconds: 1, leaseTransitions: 4 },
    ],
    [
      'a held Lease',
      {
        spec: {
          holderIdentity: 'h_1',
          leaseDurationSeconds: 15,
          acquireTime: 'a',
          renewTime: 'r',
          leaseTransitions: 2,
        },
      },
      {
        holderIdentity: 'h_1',
        leaseDurationSeconds: 15,
        acquireTime: 'a',
        renewTime: 'r',
        leaseTransitions: 2,
      },
    ],
    // Written by hand or by another tool: what is not a count reads as none, so it cannot hold the Lease forever by accident.
    [
      'a negative duration',
      { spec: { holderIdentity: 'h', leaseDurationSeconds: -5 } },
      { ...empty, holderIdentity: 'h' },
    ],
    [
      'a duration as text',
      { spec: { holderIdentity: 'h', leaseDurationSeconds: '15' } },
      { ...empty, holderIdentity: 'h' },
    ],
    [
      'a duration that is not a number',
      { spec: { holderIdentity: 'h', leaseDurationSeconds: Number.NaN } },
      { ...empty, holderIdentity: 'h' },
    ],
    [
      'an infinite duration',
      { spec: { holderIdentity: 'h', leaseDurationSeconds: Number.POSITIVE_INFINITY } },
      { ...empty, holderIdentity: 'h' },
    ],
    [
      'a fractional duration',
      { spec: { holderIdentity: 'h', leaseDurationSeconds: 2.9 } },
      { ...empty, holderIdentity: 'h', leaseDurationSeconds: 2 },
    ],
    [
      'a holder that is not text',
      { spec: { holderIdentity: { name: 'h' }, leaseDurationSeconds: 15 } },
      { ...empty, leaseDurationSeconds: 15 },
    ],
  ])('%s', (_, lease, expected) => {
    expect(leaseRecord(lease as never)).toEqual(expected);
  });
});
