import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  nextRollbackStep,
  ObjectFate,
  objectFate,
  type LiveObject,
  type RollbackState,
  type RollbackStep,
  RollbackStepKind,
} from '../../../src/install/rollback-step.js';
import { runs } from '../../support/properties.js';

const plan = (phase?: string, message?: string) => ({
  name: 'rollback-0123456789',
  ...(phase ? { phase } : {}),
  ...(message ? { message } : {}),
});

describe('nextRollbackStep', () => {
  const cases: [string, RollbackState, RollbackStep][] = [
    [
      'an upgrade that never succeeded: the previous CSV is still there, so its plan runs first',
      { from: 'present', to: 'present', fromPlans: ['install-b'] },
      { kind: RollbackStepKind.MakePlan },
    ],
    [
      'the plan is made but has not run yet',
      { from: 'present', to: 'present', plan: plan('Installing'), fromPlans: ['install-b'] },
      { kind: RollbackStepKind.AwaitPlan },
    ],
    [
      'the plan failed',
      { from: 'present', to: 'present', plan: plan('Failed', 'no such bundle'), fromPlans: [] },
      { kind: RollbackStepKind.Failed, message: 'InstallPlan rollback-0123456789 failed: no such bundle' },
    ],
    [
      'the plan ran: the CSV rolled back from goes, with its plans',
      { from: 'present', to: 'present', plan: plan('Complete'), fromPlans: ['install-b'] },
      { kind: RollbackStepKind.RemoveFrom, csv: true, plans: ['install-b'] },
    ],
    [
      'an upgrade that succeeded (the previous CSV retired): the CSV rolled back from goes first',
      { from: 'present', to: 'gone', fromPlans: ['install-b'] },
      { kind: RollbackStepKind.RemoveFrom, csv: true, plans: ['install-b'] },
    ],
    [
      'the CSV rolled back from is being deleted: only its plans are deleted',
      { from: 'deleting', to: 'gone', fromPlans: ['install-b'] },
      { kind: RollbackStepKind.RemoveFrom, csv: false, plans: ['install-b'] },
    ],
    [
      // What a manager killed between deleting the CSV and deleting its plans leaves behind.
      'the CSV rolled back from is gone but its plan is not: the plan is deleted before anything else',
      { from: 'gone', to: 'reinstated', plan: plan('Complete'), fromPlans: ['install-b'] },
      { kind: RollbackStepKind.RemoveFrom, csv: false, plans: ['install-b'] },
    ],
    [
      'the same, with the previous version still coming up',
      { from: 'gone', to: 'present', plan: plan('Complete'), fromPlans: ['install-b', 'install-c'] },
      { kind: RollbackStepKind.RemoveFrom, csv: false, plans: ['install-b', 'install-c'] },
    ],
    [
      'both CSVs gone: the previous one is installed from the catalog',
      { from: 'gone', to: 'gone', fromPlans: [] },
      { kind: RollbackStepKind.MakePlan },
    ],
    [
      'both CSVs gone after the plan ran (the previous one retired meanwhile): the plan is made anew',
      { from: 'gone', to: 'gone', plan: plan('Complete'), fromPlans: [] },
      { kind: RollbackStepKind.RemakePlan, plan: 'rollback-0123456789' },
    ],
    [
      'nothing of the version rolled back from is left: the objects of the plan are read back first',
      { from: 'gone', to: 'reinstated', plan: plan('Complete'), fromPlans: [] },
      { kind: RollbackStepKind.CheckObjects },
    ],
    [
      'nothing of the version rolled back from is left, the previous one not running yet',
      { from: 'gone', to: 'present', plan: plan('Complete'), fromPlans: [], lost: [] },
      { kind: RollbackStepKind.AwaitReinstated },
    ],
    [
      'nothing of the version rolled back from is left, the previous one running again',
      { from: 'gone', to: 'reinstated', plan: plan('Complete'), fromPlans: [], lost: [] },
      { kind: RollbackStepKind.Done },
    ],
    [
      // etcdoperator.v0.9.2 in a full run: the garbage collector of the version rolled back from
      // took the ServiceAccount both versions ship after the plan had applied it.
      'a ServiceAccount of the plan went after it ran: the plan runs again, even while the CSV waits for it',
      {
        from: 'gone',
        to: 'present',
        plan: plan('Complete'),
        fromPlans: [],
        lost: [{ object: 'ServiceAccount ns/etcd-operator', why: 'missing' }],
      },
      {
        kind: RollbackStepKind.RemakePlan,
        plan: 'rollback-0123456789',
        lost: ['ServiceAccount ns/etcd-operator'],
      },
    ],
    [
      'an object of the plan is owned only by the CSV rolled back from: the plan runs again, even with the previous one running',
      {
        from: 'gone',
        to: 'reinstated',
        plan: plan('Complete'),
        fromPlans: [],
        lost: [{ object: 'Service ns/metrics', why: 'orphaned' }],
      },
      { kind: RollbackStepKind.RemakePlan, plan: 'rollback-0123456789', lost: ['Service ns/metrics'] },
    ],
    [
      // A late cleanup after the deleted CSV took the ClusterRole the plan had just applied.
      'a ClusterRole of the plan went: not done though the previous CSV runs again',
      {
        from: 'gone',
        to: 'reinstated',
        plan: plan('Complete'),
        fromPlans: [],
        lost: [{ object: 'ClusterRole bosun-sample.v0.1.1-abc', why: 'missing' }],
      },
      {
        kind: RollbackStepKind.RemakePlan,
        plan: 'rollback-0123456789',
        lost: ['ClusterRole bosun-sample.v0.1.1-abc'],
      },
    ],
    [
      'an object of the plan is being deleted: waited for before the plan runs again',
      {
        from: 'gone',
        to: 'reinstated',
        plan: plan('Complete'),
        fromPlans: [],
        lost: [
          { object: 'Service ns/metrics', why: 'orphaned' },
          { object: 'ServiceAccount ns/op', why: 'deleting' },
        ],
      },
      { kind: RollbackStepKind.AwaitObjects, objects: ['ServiceAccount ns/op'] },
    ],
  ];
  it.each(cases)('%s', (_, state, step) => {
    expect(nextRollbackStep(state)).toEqual(step);
  });

  it('is done only when the version rolled back to runs again and nothing of the version rolled back from is left', () => {
    const state = fc.record({
      from: fc.constantFrom('present', 'deleting', 'gone'),
      to: fc.constantFrom('gone', 'present', 'reinstated'),
      plan: fc.option(
        fc.record({
          name: fc.constant('rollback-0123456789'),
          phase: fc.constantFrom('Installing', 'Complete', 'Failed'),
        }),
        { nil: undefined },
      ),
      fromPlans: fc.array(fc.constantFrom('install-a', 'install-b'), { maxLength: 2 }),
      lost: fc.option(
        fc.array(
          fc.record({
            object: fc.constantFrom('ServiceAccount ns/op', 'ClusterRole op-1'),
            why: fc.constantFrom(...Object.values(ObjectFate)),
          }),
          { maxLength: 2 },
        ),
        { nil: undefined },
      ),
    });
    fc.assert(
      fc.property(state, (s) => {
        const { plan: p, lost, ...rest } = s;
        const step = nextRollbackStep({ ...rest, ...(p ? { plan: p } : {}), ...(lost ? { lost } : {}) });
        if (step.kind === RollbackStepKind.Done)
          expect(s).toMatchObject({
            from: 'gone',
            to: 'reinstated',
            fromPlans: [],
            plan: { phase: 'Complete' },
            lost: [],
          });
        if (step.kind === RollbackStepKind.RemoveFrom) expect(step.plans).toEqual(s.fromPlans);
      }),
      runs(200),
    );
  });

  /**
   * A model of the cluster under a manager that is killed between any two of its writes: each
   * step's writes are applied one at a time, and a kill drops the rest of them. Whatever the kill
   * points, the rollback ends Done with nothing of the version rolled back from left, as it does
   * when never killed.
   */
  it('converges from wherever a killed manager left the rollback', () => {
    const scenario = fc.record({
      // An upgrade that never succeeded leaves the previous CSV; one that did, does not.
      start: fc.constantFrom<RollbackState['to']>('gone', 'present'),
      fromPlans: fc.array(fc.constantFrom('install-a', 'install-b', 'install-c'), {
        minLength: 1,
        maxLength: 3,
      }),
      // For each step, how many of its writes happen before the kill (undefined: not killed).
      kills: fc.array(fc.option(fc.nat({ max: 3 }), { nil: undefined }), { maxLength: 30 }),
      // The steps after which the collection of the version rolled back from (or a late cleanup)
      // takes an object the rollback InstallPlan had applied.
      collected: fc.array(fc.boolean(), { maxLength: 12 }),
    });
    fc.assert(
      fc.property(scenario, ({ start, fromPlans, kills, collected }) => {
        let world: World = {
          from: 'present',
          to: start,
          fromPlans: [...new Set(fromPlans)],
          objects: 'absent',
        };
        for (let i = 0; i < 60; i++) {
          const { objects, ...cluster } = world;
          // What the manager reads of the plan's objects when it asks.
          const seen = (s: RollbackState): RollbackState =>
            nextRollbackStep(s).kind === RollbackStepKind.CheckObjects
              ? {
                  ...s,
                  lost: objects === 'present' ? [] : [{ object: 'ServiceAccount ns/op', why: 'missing' }],
                }
              : s;
          const step = nextRollbackStep(seen(cluster));
          if (step.kind === RollbackStepKind.Done) {
            expect(world.fromPlans).toEqual([]);
            expect(world.from).toBe('gone');
            expect(world.objects).toBe('present');
            return;
          }
          expect(step.kind).not.toBe(RollbackStepKind.Failed);
          const writes = effects(world, step);
          const upTo = kills[i] ?? writes.length;
          for (const write of writes.slice(0, upTo)) world = write(world) as World;
          if (collected[i] && world.objects === 'present') world = { ...world, objects: 'absent' };
        }
        throw new Error(`no end after 60 steps: ${JSON.stringify(world)}`);
      }),
      runs(300),
    );
  });
});

/** The cluster of the model: a rollback's state, and whether the plan's objects are there. */
describe('objectFate: whether an object the rollback InstallPlan applied stays', () => {
  const live = new Set(['uid-to']);
  const owned = (...owners: { kind: string; uid: string }[]) => ({ metadata: { ownerReferences: owners } });
  const csv = (uid: string) => ({ kind: 'ClusterServiceVersion', uid });
  const cases: [string, LiveObject | undefined, ObjectFate | undefined][] = [
    ['gone', undefined, ObjectFate.Missing],
    ['being deleted', { metadata: { deletionTimestamp: '2026-11-27T00:00:00Z' } }, ObjectFate.Deleting],
    ['owned by the CSV rolled back to', owned(csv('uid-to')), undefined],
    ['owned only by the CSV rolled back from, which is gone', owned(csv('uid-from')), ObjectFate.Orphaned],
    [
      'owned by both: the collector only drops the dangling reference',
      owned(csv('uid-from'), csv('uid-to')),
      undefined,
    ],
    ['owned by no one (a cluster-scoped object, found by its labels)', { metadata: {} }, undefined],
    [
      'owned by something not a CSV: left to its owner',
      owned({ kind: 'Deployment', uid: 'uid-d' }),
      undefined,
    ],
  ];
  it.each(cases)('%s', (_, object, fate) => {
    expect(objectFate(object, live)).toBe(fate);
  });
});

type World = RollbackState & { objects: 'present' | 'absent' };
type Write = (w: World) => World;

/** The writes the manager makes for `step`, in order, and what the cluster then does by itself. */
function effects(world: RollbackState, step: RollbackStep): Write[] {
  switch (step.kind) {
    case RollbackStepKind.MakePlan:
      // The plan is created; the InstallPlan controller runs it and the previous CSV comes back.
      return [
        (w) => ({ ...w, plan: plan('Installing') }),
        (w) => ({ ...w, plan: plan('Complete'), objects: 'present', to: w.to === 'gone' ? 'present' : w.to }),
      ];
    case RollbackStepKind.AwaitPlan:
      return [
        (w) => ({ ...w, plan: plan('Complete'), objects: 'present', to: w.to === 'gone' ? 'present' : w.to }),
      ];
    case RollbackStepKind.RemakePlan:
      return [({ plan: _, ...w }) => w];
    case RollbackStepKind.RemoveFrom:
      return [
        ...(step.csv ? [(w: World) => ({ ...w, from: 'gone' as const })] : []),
        ...step.plans.map((name) => (w: World) => ({
          ...w,
          fromPlans: w.fromPlans.filter((p) => p !== name),
        })),
      ];
    case RollbackStepKind.AwaitReinstated:
      return [(w) => ({ ...w, to: 'reinstated' })];
    default:
      throw new Error(`no effects for ${step.kind} in ${JSON.stringify(world)}`);
  }
}
