import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../src/apis/meta.js';
import type { SubscriptionCondition } from '../../../src/apis/operators.js';
import {
  findCondition,
  formatTime,
  isConditionTrue,
  MaxConditionMessageLength,
  removeCondition,
  setCondition,
  statusChanged,
} from '../../../src/kube/conditions.js';

const t0 = Date.parse('2024-05-01T12:00:00Z');
const t1 = t0 + 90_000;

const ready = (
  status: Condition['status'],
  reason = 'Ready',
  message = '',
): Omit<Condition, 'lastTransitionTime'> => ({
  type: 'Ready',
  status,
  reason,
  message,
  observedGeneration: 1,
});

describe('setCondition', () => {
  it.each([
    ['a short message is kept', 'fine', 'fine'],
    [
      'a message of the limit is kept',
      'x'.repeat(MaxConditionMessageLength),
      'x'.repeat(MaxConditionMessageLength),
    ],
    [
      'a longer message is cut to the limit, marked by ...',
      'y'.repeat(MaxConditionMessageLength + 1),
      `${'y'.repeat(MaxConditionMessageLength - 3)}...`,
    ],
  ])('%s', (_, message, want) => {
    const [c] = setCondition<Condition>([], ready('False', 'Failed', message), t0);
    expect(c?.message).toBe(want);
  });

  it('adds a condition with the transition time set to now, in API server format', () => {
    expect(setCondition<Condition>([], ready('True'), t0)).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Ready',
        message: '',
        observedGeneration: 1,
        lastTransitionTime: '2024-05-01T12:00:00Z',
      },
    ]);
  });

  it('keeps the transition time when only the reason, message or generation change', () => {
    const first = setCondition<Condition>([], ready('False', 'Waiting', 'waiting for a'), t0);
    const second = setCondition<Condition>(
      first,
      { ...ready('False', 'StillWaiting', 'waiting for b'), observedGeneration: 2 },
      t1,
    );
    expect(second).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'StillWaiting',
        message: 'waiting for b',
        observedGeneration: 2,
        lastTransitionTime: '2024-05-01T12:00:00Z',
      },
    ]);
  });

  it('moves the transition time when the status changes', () => {
    const first = setCondition<Condition>([], ready('False', 'Waiting'), t0);
    expect(setCondition<Condition>(first, ready('True'), t1)[0]?.lastTransitionTime).toBe(
      '2024-05-01T12:01:30Z',
    );
  });

  it('replaces a condition in place and leaves the others alone', () => {
    let list = setCondition<Condition>([], { ...ready('True'), type: 'A' }, t0);
    list = setCondition<Condition>(list, { ...ready('True'), type: 'B' }, t0);
    list = setCondition<Condition>(list, { ...ready('False', 'Broken'), type: 'A' }, t1);
    expect(list.map((c) => [c.type, c.status])).toEqual([
      ['A', 'False'],
      ['B', 'True'],
    ]);
  });

  it('does not change the list it is given', () => {
    const original = setCondition<Condition>([], ready('True'), t0);
    const frozen = Object.freeze(original.map((c) => Object.freeze({ ...c })));
    setCondition<Condition>(frozen, ready('False', 'Broken'), t1);
    expect(frozen[0]?.status).toBe('True');
  });

  it('works on OLM Subscription conditions, which have no observedGeneration', () => {
    const list = setCondition<SubscriptionCondition>(
      undefined,
      {
        type: 'ResolutionFailed',
        status: 'True',
        reason: 'ConstraintsNotSatisfiable',
        message: 'no operators found',
      },
      t0,
    );
    expect(findCondition(list, 'ResolutionFailed')).toEqual({
      type: 'ResolutionFailed',
      status: 'True',
      reason: 'ConstraintsNotSatisfiable',
      message: 'no operators found',
      lastTransitionTime: '2024-05-01T12:00:00Z',
    });
    expect(isConditionTrue(list, 'ResolutionFailed')).toBe(true);
    expect(isConditionTrue(list, 'CatalogSourcesUnhealthy')).toBe(false);
  });

  it.each(['not camel', 'Bad-Reason', '1Start', 'EndsWith:'])('rejects the reason %j', (reason) => {
    expect(() => setCondition<Condition>([], ready('True', reason), t0)).toThrow(/CamelCase/);
  });

  it('only ever moves the transition time on a status change (any sequence of updates)', () => {
    const statusArb = fc.constantFrom<Condition['status']>('True', 'False', 'Unknown');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(statusArb, fc.constantFrom('A', 'B')), { minLength: 1, maxLength: 30 }),
        (steps) => {
          let list: Condition[] = [];
          let lastStatus: string | undefined;
          let lastTransition = '';
          steps.forEach(([status, reason], i) => {
            const now = t0 + i * 1_000;
            list = setCondition<Condition>(list, ready(status, reason), now);
            const c = findCondition(list, 'Ready')!;
            if (status !== lastStatus) expect(c.lastTransitionTime).toBe(formatTime(now));
            else expect(c.lastTransitionTime).toBe(lastTransition);
            lastStatus = status;
            lastTransition = c.lastTransitionTime;
            expect(list).toHaveLength(1);
          });
        },
      ),
    );
  });
});

describe('removeCondition', () => {
  it('drops one type and keeps the rest', () => {
    let list = setCondition<Condition>([], { ...ready('True'), type: 'A' }, t0);
    list = setCondition<Condition>(list, { ...ready('True'), type: 'B' }, t0);
    expect(removeCondition(list, 'A').map((c) => c.type)).toEqual(['B']);
    expect(removeCondition(undefined, 'A')).toEqual([]);
  });
});

describe('statusChanged', () => {
  const base = {
    state: 'AtLatestKnown',
    lastUpdated: '2024-05-01T12:00:00Z',
    conditions: [
      { type: 'CatalogSourcesUnhealthy', status: 'False', lastTransitionTime: 'x', lastHeartbeatTime: 'h1' },
    ],
  };

  it('is false when only heartbeat timestamps differ', () => {
    const next = structuredClone(base);
    next.lastUpdated = '2024-05-01T13:00:00Z';
    next.conditions[0]!.lastHeartbeatTime = 'h2';
    expect(statusChanged(base, next)).toBe(false);
  });

  it('is false when keys come in another order or an undefined field is spelled out', () => {
    const next = {
      conditions: base.conditions,
      lastUpdated: base.lastUpdated,
      state: base.state,
      reason: undefined,
    };
    expect(statusChanged(base, next)).toBe(false);
  });

  it.each([
    ['a field changes', { ...base, state: 'UpgradePending' }],
    ['a field is added', { ...base, currentCSV: 'etcd.v0.9.4' }],
    ['a condition changes', { ...base, conditions: [{ ...base.conditions[0]!, status: 'True' }] }],
    ['a condition is added', { ...base, conditions: [...base.conditions, { type: 'X', status: 'True' }] }],
  ])('is true when %s', (_, next) => {
    expect(statusChanged(base, next)).toBe(true);
  });

  it('treats a missing status like an empty one', () => {
    expect(statusChanged(undefined, {})).toBe(false);
    expect(statusChanged(undefined, { phase: 'Pending' })).toBe(true);
  });
});
