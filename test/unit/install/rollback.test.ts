import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  ClusterServiceVersion,
  ClusterServiceVersionStatus,
  HeldVersion,
  Subscription,
  SubscriptionHistoryEntry,
} from '../../../src/apis/operators.js';
import {
  bundleContentDigest,
  DefaultUpgradeDeadlineMs,
  everSucceeded,
  formatDuration,
  healthClockStart,
  type LiveCRD,
  MaxHistory,
  parseDuration,
  pushHistory,
  RollbackAnnotations,
  rollbackCRDProblems,
  stillHeld,
  upgradeDeadline,
  upgradeHealth,
} from '../../../src/install/rollback.js';
import { runs } from '../../support/properties.js';

const created = '2026-01-01T00:00:00Z';
const createdMs = Date.parse(created);
const minute = 60_000;

const csv = (status?: ClusterServiceVersionStatus, creationTimestamp: string | null = created) =>
  ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: 'foo.v1.1.0',
      namespace: 'ns',
      ...(creationTimestamp !== null ? { creationTimestamp } : {}),
    },
    spec: { displayName: 'foo', version: '1.1.0', install: { strategy: 'deployment' } },
    ...(status ? { status } : {}),
  }) as ClusterServiceVersion;

const sub = (annotations?: Record<string, string>): Subscription => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: { name: 'foo', namespace: 'ns', ...(annotations ? { annotations } : {}) },
  spec: { name: 'foo', source: 'cat', sourceNamespace: 'olm' },
});

describe('parseDuration', () => {
  it.each([
    ['300ms', 300],
    ['90s', 90_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['2m30s', 150_000],
    ['1h2m3s4ms', 3_723_004],
    ['1.5s', 1_500],
    ['0', 0],
    ['0s', 0],
    [' 90s ', 90_000],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    '5 minutes',
    '-1s',
    '',
    '   ',
    '5',
    '1.5',
    'm',
    '1d',
    '1h 30m',
    '90S',
    '1.h',
    'off',
    '1e3s',
    '+1s',
  ])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('adds up any sequence of whole-number parts', () => {
    const unit = fc.constantFrom(['ms', 1], ['s', 1_000], ['m', 60_000], ['h', 3_600_000]) as fc.Arbitrary<
      [string, number]
    >;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: 10_000 }), unit), { minLength: 1, maxLength: 5 }),
        (parts) => {
          const text = parts.map(([n, [u]]) => `${n}${u}`).join('');
          const want = parts.reduce((sum, [n, [, ms]]) => sum + n * ms, 0);
          expect(parseDuration(text)).toBe(want);
        },
      ),
      runs(500),
    );
  });
});

describe('formatDuration', () => {
  it.each([
    [300, '300ms'],
    [999, '999ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [90_000, '1m30s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [5_400_000, '1h30m0s'],
    [3_723_000, '1h2m3s'],
  ])('%d ms is %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('reads back as the same duration (whole milliseconds)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 * 3_600_000 }), (ms) => {
        // Whole seconds, and sub-second values, print without a fraction that floats could blur.
        const whole = ms < 1_000 ? ms : Math.round(ms / 1_000) * 1_000;
        expect(parseDuration(formatDuration(whole))).toBe(whole);
      }),
      runs(1000),
    );
  });
});

describe('upgradeDeadline', () => {
  it('is the default 5m without the annotation', () => {
    expect(DefaultUpgradeDeadlineMs).toBe(300_000);
    expect(upgradeDeadline(sub())).toEqual({ ms: 300_000 });
    expect(upgradeDeadline(sub({ other: '1s' }))).toEqual({ ms: 300_000 });
  });

  it('reads the annotation', () => {
    expect(RollbackAnnotations.deadline).toBe('bosun.dev/upgrade-deadline');
    expect(upgradeDeadline(sub({ 'bosun.dev/upgrade-deadline': '90s' }))).toEqual({ ms: 90_000 });
    expect(upgradeDeadline(sub({ 'bosun.dev/upgrade-deadline': '1h30m' }))).toEqual({ ms: 5_400_000 });
  });

  it.each(['off', ' off ', '0', '0s', '0m'])('%j turns automatic rollback off', (text) => {
    expect(upgradeDeadline(sub({ 'bosun.dev/upgrade-deadline': text }))).toEqual({ ms: null });
  });

  it.each(['5 minutes', '-1s', '', 'OFF', 'never'])(
    '%j gives the default and a problem naming the annotation and the value',
    (text) => {
      expect(upgradeDeadline(sub({ 'bosun.dev/upgrade-deadline': text }))).toEqual({
        ms: 300_000,
        problem: `annotation bosun.dev/upgrade-deadline: "${text}" is not a duration like 90s, 10m or 1h (or 0 or off); the default 5m0s applies`,
      });
    },
  );
});

describe('everSucceeded', () => {
  it('is true when Succeeded now', () => {
    expect(everSucceeded(csv({ phase: 'Succeeded' }))).toBe(true);
  });

  it('is true when Succeeded once in the phase history', () => {
    expect(
      everSucceeded(
        csv({
          phase: 'Failed',
          reason: 'ComponentUnhealthy',
          conditions: [{ phase: 'Installing' }, { phase: 'Succeeded' }, { phase: 'Failed' }],
        }),
      ),
    ).toBe(true);
  });

  it('is false otherwise', () => {
    expect(everSucceeded(csv())).toBe(false);
    expect(everSucceeded(csv({ phase: 'Installing', conditions: [{ phase: 'Pending' }] }))).toBe(false);
    expect(everSucceeded(csv({ phase: 'Failed', conditions: [] }))).toBe(false);
  });
});

describe('healthClockStart', () => {
  it('is the creation time without a wait on the operator', () => {
    expect(healthClockStart(csv())).toBe(createdMs);
    expect(
      healthClockStart(
        csv({
          phase: 'Installing',
          conditions: [
            { phase: 'Pending', reason: 'RequirementsUnknown', lastTransitionTime: '2026-01-01T00:01:00Z' },
            { phase: 'Installing', reason: 'InstallWaiting', lastTransitionTime: '2026-01-01T00:02:00Z' },
          ],
        }),
      ),
    ).toBe(createdMs);
  });

  it('is undefined without a creation time', () => {
    expect(healthClockStart(csv(undefined, null))).toBeUndefined();
  });

  it('after a wait on the operator, is the transition time of the next entry in the history', () => {
    const start = healthClockStart(
      csv({
        phase: 'Installing',
        reason: 'InstallWaiting',
        conditions: [
          { phase: 'Pending', reason: 'RequirementsUnknown', lastTransitionTime: '2026-01-01T00:00:10Z' },
          {
            phase: 'Pending',
            reason: 'OperatorConditionNotUpgradeable',
            lastTransitionTime: '2026-01-01T00:01:00Z',
          },
          { phase: 'InstallReady', reason: 'AllRequirementsMet', lastTransitionTime: '2026-01-01T02:00:00Z' },
          { phase: 'Installing', reason: 'InstallWaiting', lastTransitionTime: '2026-01-01T02:00:05Z' },
        ],
      }),
    );
    expect(start).toBe(Date.parse('2026-01-01T02:00:00Z'));
  });

  it('counts from the last of several waits', () => {
    const start = healthClockStart(
      csv({
        phase: 'Installing',
        conditions: [
          { phase: 'Pending', reason: 'OperatorConditionNotUpgradeable', lastTransitionTime: created },
          { phase: 'InstallReady', lastTransitionTime: '2026-01-01T01:00:00Z' },
          {
            phase: 'Pending',
            reason: 'OperatorConditionNotUpgradeable',
            lastTransitionTime: '2026-01-01T01:30:00Z',
          },
          { phase: 'InstallReady', lastTransitionTime: '2026-01-01T03:00:00Z' },
        ],
      }),
    );
    expect(start).toBe(Date.parse('2026-01-01T03:00:00Z'));
  });

  it('is undefined while the CSV waits on the operator now', () => {
    expect(
      healthClockStart(
        csv({
          phase: 'Pending',
          reason: 'OperatorConditionNotUpgradeable',
          conditions: [
            {
              phase: 'Pending',
              reason: 'OperatorConditionNotUpgradeable',
              lastTransitionTime: '2026-01-01T00:01:00Z',
            },
          ],
        }),
      ),
    ).toBeUndefined();
  });
});

describe('upgradeHealth', () => {
  const deadline = 5 * minute;

  it('is settled once the CSV was ever Succeeded, whatever the time', () => {
    expect(upgradeHealth(csv({ phase: 'Succeeded' }), deadline, createdMs + 100 * minute)).toEqual({
      kind: 'settled',
    });
    const wasOnce = csv({
      phase: 'Failed',
      reason: 'InstallCheckFailed',
      message: 'deployment gone',
      conditions: [{ phase: 'Succeeded' }, { phase: 'Failed', reason: 'InstallCheckFailed' }],
    });
    expect(upgradeHealth(wasOnce, deadline, createdMs + 100 * minute)).toEqual({ kind: 'settled' });
  });

  it.each(['InstallCheckFailed', 'InvalidInstallStrategy'] as const)(
    'Failed with %s fails at once, before the deadline',
    (reason) => {
      expect(
        upgradeHealth(csv({ phase: 'Failed', reason, message: 'boom' }), deadline, createdMs + 1_000),
      ).toEqual({ kind: 'failed', cause: `foo.v1.1.0 failed (${reason}): boom` });
    },
  );

  it('Failed for another reason (NoOperatorGroup) waits for the deadline', () => {
    const c = csv({ phase: 'Failed', reason: 'NoOperatorGroup', message: 'no operator group' });
    expect(upgradeHealth(c, deadline, createdMs + minute)).toEqual({ kind: 'waiting', dueInMs: 4 * minute });
    expect(upgradeHealth(c, deadline, createdMs + 5 * minute)).toEqual({
      kind: 'failed',
      cause: 'foo.v1.1.0 did not reach Succeeded within 5m0s (it is Failed: no operator group)',
    });
  });

  it('waits with the time left before the deadline', () => {
    const c = csv({ phase: 'Installing', reason: 'InstallWaiting', message: 'waiting for deployment' });
    expect(upgradeHealth(c, deadline, createdMs)).toEqual({ kind: 'waiting', dueInMs: 300_000 });
    expect(upgradeHealth(c, deadline, createdMs + 299_999)).toEqual({ kind: 'waiting', dueInMs: 1 });
  });

  it('fails after the deadline with a cause naming the CSV, the deadline, the phase and the message', () => {
    const c = csv({ phase: 'Installing', reason: 'InstallWaiting', message: 'waiting for deployment' });
    expect(upgradeHealth(c, 90_000, createdMs + 90_000)).toEqual({
      kind: 'failed',
      cause: 'foo.v1.1.0 did not reach Succeeded within 1m30s (it is Installing: waiting for deployment)',
    });
  });

  it('says when the CSV was never reconciled, and leaves out an absent message', () => {
    expect(upgradeHealth(csv(), deadline, createdMs + 10 * minute)).toEqual({
      kind: 'failed',
      cause: 'foo.v1.1.0 did not reach Succeeded within 5m0s (it is not yet reconciled)',
    });
    expect(upgradeHealth(csv({ phase: 'Pending' }), deadline, createdMs + 10 * minute)).toEqual({
      kind: 'failed',
      cause: 'foo.v1.1.0 did not reach Succeeded within 5m0s (it is Pending)',
    });
  });

  it('is settled while the CSV waits on the operator, and counts from its release', () => {
    const gated = csv({
      phase: 'Pending',
      reason: 'OperatorConditionNotUpgradeable',
      conditions: [
        { phase: 'Pending', reason: 'OperatorConditionNotUpgradeable', lastTransitionTime: created },
      ],
    });
    expect(upgradeHealth(gated, deadline, createdMs + 100 * minute)).toEqual({ kind: 'settled' });
    const released = csv({
      phase: 'Installing',
      conditions: [
        { phase: 'Pending', reason: 'OperatorConditionNotUpgradeable', lastTransitionTime: created },
        { phase: 'Installing', lastTransitionTime: '2026-01-01T01:00:00Z' },
      ],
    });
    expect(upgradeHealth(released, deadline, Date.parse('2026-01-01T01:02:00Z'))).toEqual({
      kind: 'waiting',
      dueInMs: 3 * minute,
    });
  });

  it('without a deadline, waits with no time to look again', () => {
    const c = csv({ phase: 'Installing' });
    expect(upgradeHealth(c, null, createdMs + 1_000 * minute)).toEqual({ kind: 'waiting' });
    expect(
      upgradeHealth(csv({ phase: 'Failed', reason: 'NoOperatorGroup' }), null, createdMs + 1_000 * minute),
    ).toEqual({ kind: 'waiting' });
    // Off means off: not even a failed install check rolls back.
    expect(
      upgradeHealth(csv({ phase: 'Failed', reason: 'InstallCheckFailed', message: 'boom' }), null, createdMs),
    ).toEqual({ kind: 'waiting' });
  });

  it('reads fractions and prints zero as Go does', () => {
    expect(parseDuration('1.1h')).toBe(3_960_000);
    expect(formatDuration(3_960_000)).toBe('1h6m0s');
    expect(formatDuration(0)).toBe('0s');
  });

  it('before the deadline waits exactly the rest of it; from the deadline on it fails', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 * 3_600_000 }),
        fc.nat({ max: 20 * 3_600_000 }),
        (d, elapsed) => {
          const h = upgradeHealth(csv({ phase: 'Installing' }), d, createdMs + elapsed);
          if (elapsed < d) expect(h).toEqual({ kind: 'waiting', dueInMs: d - elapsed });
          else expect(h.kind).toBe('failed');
        },
      ),
      runs(500),
    );
  });
});

describe('rollbackCRDProblems', () => {
  const widgets = (versions: { name: string; served?: boolean }[], stored: string[] = []): LiveCRD => ({
    metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', names: { kind: 'Widget' }, versions },
    status: { storedVersions: stored },
  });
  const byName = { name: 'widgets.example.com', kind: 'Widget', version: 'v1alpha1' };
  const byGVK = { group: 'example.com', kind: 'Widget', version: 'v1alpha1' };

  it('a missing CRD is fine (the rollback creates it)', () => {
    expect(rollbackCRDProblems('foo.v1.0.0', [byName, byGVK], [])).toEqual([]);
    const other: LiveCRD = {
      metadata: { name: 'gadgets.example.com' },
      spec: { group: 'example.com', names: { kind: 'Gadget' }, versions: [] },
    };
    expect(rollbackCRDProblems('foo.v1.0.0', [byName, byGVK], [other])).toEqual([]);
  });

  it('a live CRD that serves the version is fine', () => {
    const live = [widgets([{ name: 'v1alpha1', served: true }, { name: 'v1' }], ['v1alpha1', 'v1'])];
    expect(rollbackCRDProblems('foo.v1.0.0', [byName], live)).toEqual([]);
    expect(rollbackCRDProblems('foo.v1.0.0', [byGVK], live)).toEqual([]);
    // `served` absent counts as served.
    expect(rollbackCRDProblems('foo.v1.0.0', [byName], [widgets([{ name: 'v1alpha1' }])])).toEqual([]);
  });

  const problem =
    'foo.v1.0.0 needs Widget v1alpha1 of CustomResourceDefinition widgets.example.com, which no longer serves it; ' +
    'going back would mean replacing the CRD (stored versions v1alpha1, v1), and a rollback never replaces one';

  it.each([
    [
      'by name, the version not served',
      byName,
      [
        { name: 'v1alpha1', served: false },
        { name: 'v1', served: true },
      ],
    ],
    ['by name, the version absent', byName, [{ name: 'v1', served: true }]],
    [
      'by group and kind, the version not served',
      byGVK,
      [{ name: 'v1alpha1', served: false }, { name: 'v1' }],
    ],
    ['by group and kind, the version absent', byGVK, [{ name: 'v1' }]],
  ])('%s: one problem naming the CRD, the version and the stored versions', (_, api, versions) => {
    expect(rollbackCRDProblems('foo.v1.0.0', [api], [widgets(versions, ['v1alpha1', 'v1'])])).toEqual([
      problem,
    ]);
  });

  it('leaves out stored versions when there are none', () => {
    expect(rollbackCRDProblems('foo.v1.0.0', [byName], [widgets([{ name: 'v1' }])])).toEqual([
      'foo.v1.0.0 needs Widget v1alpha1 of CustomResourceDefinition widgets.example.com, which no longer serves it; ' +
        'going back would mean replacing the CRD, and a rollback never replaces one',
    ]);
  });

  it('matches by name only when the name is given, by group and kind otherwise', () => {
    const live = [widgets([{ name: 'v1' }], ['v1'])];
    // A name that is not the live CRD's: no match, though group and kind are the same.
    expect(
      rollbackCRDProblems(
        'foo.v1.0.0',
        [{ name: 'other.example.com', group: 'example.com', kind: 'Widget', version: 'v1alpha1' }],
        live,
      ),
    ).toEqual([]);
    // Another group, or another kind: no match.
    expect(rollbackCRDProblems('foo.v1.0.0', [{ ...byGVK, group: 'other.io' }], live)).toEqual([]);
    expect(rollbackCRDProblems('foo.v1.0.0', [{ ...byGVK, kind: 'Gadget' }], live)).toEqual([]);
  });

  it('gives one problem per API not served, in order', () => {
    const gadgets: LiveCRD = {
      metadata: { name: 'gadgets.example.com' },
      spec: { group: 'example.com', names: { kind: 'Gadget' }, versions: [{ name: 'v2' }] },
      status: { storedVersions: ['v2'] },
    };
    const problems = rollbackCRDProblems(
      'foo.v1.0.0',
      [byGVK, { group: 'example.com', kind: 'Gadget', version: 'v1' }, { ...byGVK, version: 'v1' }],
      [widgets([{ name: 'v1' }], ['v1']), gadgets],
    );
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^foo\.v1\.0\.0 needs Widget v1alpha1 of CustomResourceDefinition widgets\.example\.com,/,
    );
    expect(problems[1]).toMatch(
      /^foo\.v1\.0\.0 needs Gadget v1 of CustomResourceDefinition gadgets\.example\.com,/,
    );
    expect(problems[1]).toContain('(stored versions v2)');
  });
});

describe('bundleContentDigest', () => {
  const bundle = { name: 'foo.v1.1.0', image: 'img/foo:1.1.0', properties: [{ type: 'olm.package' }] };

  it('is a stable 16-hex fingerprint', () => {
    const d = bundleContentDigest(bundle);
    expect(d).toMatch(/^[0-9a-f]{16}$/);
    expect(bundleContentDigest(structuredClone(bundle))).toBe(d);
  });

  it('differs when the content differs', () => {
    expect(bundleContentDigest({ ...bundle, image: 'img/foo:1.1.0-fixed' })).not.toBe(
      bundleContentDigest(bundle),
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b);
        expect(bundleContentDigest({ ...bundle, image: a })).not.toBe(
          bundleContentDigest({ ...bundle, image: b }),
        );
      }),
      runs(300),
    );
  });

  it('is undefined for no bundle', () => {
    expect(bundleContentDigest(undefined)).toBeUndefined();
  });
});

describe('pushHistory', () => {
  const entry = (csv: string, outcome: SubscriptionHistoryEntry['outcome'] = 'Installed') => ({
    csv,
    time: created,
    outcome,
  });

  it('puts the new entry first', () => {
    const history = [entry('foo.v1.0.0')];
    expect(pushHistory(history, entry('foo.v1.1.0'))).toEqual([entry('foo.v1.1.0'), entry('foo.v1.0.0')]);
    expect(history).toEqual([entry('foo.v1.0.0')]);
  });

  it('does not repeat the newest entry’s csv and outcome', () => {
    const history = [entry('foo.v1.1.0'), entry('foo.v1.0.0')];
    const same = pushHistory(history, { ...entry('foo.v1.1.0'), time: '2026-02-01T00:00:00Z' });
    expect(same).toEqual(history);
    expect(same).not.toBe(history);
    // Another outcome of the same CSV is new.
    expect(pushHistory(history, entry('foo.v1.1.0', 'Failed'))).toEqual([
      entry('foo.v1.1.0', 'Failed'),
      ...history,
    ]);
    // The same csv and outcome further down is not the newest: it is pushed.
    expect(pushHistory(history, entry('foo.v1.0.0'))).toEqual([entry('foo.v1.0.0'), ...history]);
  });

  it('keeps at most MaxHistory entries, dropping the oldest', () => {
    expect(MaxHistory).toBe(10);
    let history: SubscriptionHistoryEntry[] = [];
    for (let i = 0; i < 15; i++) history = pushHistory(history, entry(`foo.v1.${i}.0`));
    expect(history.map((h) => h.csv)).toEqual(
      [14, 13, 12, 11, 10, 9, 8, 7, 6, 5].map((i) => `foo.v1.${i}.0`),
    );
  });

  it('over any sequence: bounded, newest first, never two equal neighbours at the head', () => {
    const e = fc.record({
      csv: fc.constantFrom('a', 'b', 'c'),
      time: fc.constant(created),
      outcome: fc.constantFrom('Installed', 'Failed', 'RolledBack') as fc.Arbitrary<
        SubscriptionHistoryEntry['outcome']
      >,
    });
    fc.assert(
      fc.property(fc.array(e, { maxLength: 40 }), (entries) => {
        let history: SubscriptionHistoryEntry[] = [];
        for (const next of entries) {
          const before = history;
          history = pushHistory(history, next);
          expect(history.length).toBeLessThanOrEqual(MaxHistory);
          expect(history[0]).toMatchObject({ csv: next.csv, outcome: next.outcome });
          if (before[0]?.csv === next.csv && before[0]?.outcome === next.outcome)
            expect(history).toEqual(before);
          else expect(history).toEqual([next, ...before].slice(0, MaxHistory));
        }
      }),
      runs(300),
    );
  });
});

describe('stillHeld', () => {
  const held = (csv: string, bundleDigest?: string): HeldVersion => ({
    csv,
    since: created,
    ...(bundleDigest !== undefined ? { bundleDigest } : {}),
  });
  const catalog =
    (digests: Record<string, string>) =>
    (csv: string): string | undefined =>
      digests[csv];

  it('holds nothing when nothing was held', () => {
    expect(stillHeld([], catalog({ 'foo.v1.1.0': 'd1' }))).toEqual([]);
  });

  it('keeps a version while the catalog’s bundle of it is the one that failed', () => {
    const h = [held('foo.v1.1.0', 'd1')];
    expect(stillHeld(h, catalog({ 'foo.v1.1.0': 'd1' }))).toEqual(h);
  });

  it('lifts the hold when the bundle changed, is gone, or had no fingerprint', () => {
    expect(stillHeld([held('foo.v1.1.0', 'd1')], catalog({ 'foo.v1.1.0': 'd2' }))).toEqual([]);
    expect(stillHeld([held('foo.v1.1.0', 'd1')], catalog({}))).toEqual([]);
    expect(stillHeld([held('foo.v1.1.0')], catalog({ 'foo.v1.1.0': 'd1' }))).toEqual([]);
    expect(stillHeld([held('foo.v1.1.0')], catalog({}))).toEqual([]);
  });

  it('decides each version by its own bundle, keeping the order', () => {
    const h = [held('foo.v1.3.0', 'd3'), held('foo.v1.2.0', 'd2'), held('foo.v1.1.0', 'd1')];
    expect(
      stillHeld(h, catalog({ 'foo.v1.3.0': 'd3', 'foo.v1.2.0': 'changed', 'foo.v1.1.0': 'd1' })),
    ).toEqual([held('foo.v1.3.0', 'd3'), held('foo.v1.1.0', 'd1')]);
  });

  it('with the fingerprint of the same bundle, the hold lasts; with another bundle’s, it goes', () => {
    const failed = { name: 'foo.v1.1.0', image: 'img/foo:1.1.0' };
    const h = [held('foo.v1.1.0', bundleContentDigest(failed))];
    expect(stillHeld(h, () => bundleContentDigest(structuredClone(failed)))).toEqual(h);
    expect(stillHeld(h, () => bundleContentDigest({ ...failed, image: 'img/foo:1.1.0-fix' }))).toEqual([]);
  });
});
