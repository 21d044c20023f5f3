/**
 * What a ClusterExtension reports of a rollback and of a missed deadline: `Progressing` with
 * Bosun's reasons while a rollback is under way and v1's ProgressDeadlineExceeded after it (or
 * when nothing could be rolled back), its transition time judged against the stored condition,
 * the rollback and held versions in status; and when a held version is let go.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterExtension } from '../../../src/apis/olmv1.js';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import {
  type ExtensionHeldVersion,
  type ExtensionRollback,
  foreignCSVs,
  progressingFor,
  stillHeldBack,
  storedRollback,
  withProgressReport,
} from '../../../src/controllers/clusterextension-rollback-status.js';
import { clusterExtensionStatus } from '../../../src/controllers/clusterextension-status.js';

const now = Date.parse('2026-11-27T06:00:00Z');
const cause = 'Revision has not rolled out for 30s. Last status: ClusterServiceVersion op.v2 is Installing';
const rollback = (
  phase: ExtensionRollback['phase'],
  extra: Partial<ExtensionRollback> = {},
): ExtensionRollback => ({
  phase,
  from: 'op.v2',
  to: 'op.v1',
  cause,
  reason: 'ProgressDeadlineExceeded',
  generation: 3,
  startedAt: '2026-11-27T05:59:00Z',
  ...extra,
});
const held = (extra: Partial<ExtensionHeldVersion> = {}): ExtensionHeldVersion => ({
  csv: 'op.v2',
  bundleDigest: 'abc',
  since: '2026-11-27T05:59:00Z',
  generation: 3,
  catalog: 'operatorhub',
  ...extra,
});
const ext = (status?: ClusterExtension['status']): ClusterExtension => ({
  apiVersion: 'olm.operatorframework.io/v1',
  kind: 'ClusterExtension',
  metadata: { name: 'op', generation: 3 },
  spec: {
    namespace: 'op',
    serviceAccount: { name: 'installer' },
    source: { sourceType: 'Catalog', catalog: { packageName: 'op' } },
  },
  ...(status ? { status } : {}),
});

describe('progressingFor', () => {
  it.each([
    ['nothing to say: v1 rules stand', { held: [] }, undefined],
    [
      'a rollback under way',
      { rollback: rollback('RollingBack'), held: [held()] },
      { status: 'True', reason: 'RollingBack', message: `${cause}; rolling back to op.v1` },
    ],
    [
      'rolled back after the deadline, the version held',
      { rollback: rollback('RolledBack'), held: [held()] },
      {
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: `${cause}; rolled back to op.v1, and op.v2 is held back until the extension's spec or the catalog's bundle of it changes`,
      },
    ],
    [
      'rolled back after the new CSV failed for good',
      {
        rollback: rollback('RolledBack', {
          reason: 'RolledBack',
          cause: 'op.v2 failed (InstallCheckFailed): x',
        }),
        held: [held()],
      },
      {
        status: 'False',
        reason: 'RolledBack',
        message: `op.v2 failed (InstallCheckFailed): x; rolled back to op.v1, and op.v2 is held back until the extension's spec or the catalog's bundle of it changes`,
      },
    ],
    [
      'rolled back, the hold lifted: v1 rules stand',
      { rollback: rollback('RolledBack'), held: [] },
      undefined,
    ],
    [
      'a first install past its deadline',
      { held: [], deadlineExceeded: 'Revision has not rolled out for 10 minute(s). Last status: y' },
      {
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'Revision has not rolled out for 10 minute(s). Last status: y',
      },
    ],
    [
      'past the deadline, the rollback refused',
      {
        rollback: rollback('Refused', { message: 'op.v1 is no longer installed' }),
        held: [],
        deadlineExceeded: 'late',
      },
      {
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'late; not rolled back: op.v1 is no longer installed',
      },
    ],
  ])('%s', (_, report, expected) => {
    expect(progressingFor(report)).toEqual(expected);
  });
});

describe('withProgressReport', () => {
  it('keeps the stored transition time of a Progressing that stays False, and the rollback in status', () => {
    const earlier = '2026-11-27T05:59:30Z';
    const before = ext({
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'old',
          lastTransitionTime: earlier,
          observedGeneration: 3,
        },
      ],
    });
    // v1's rules alone would say True (desired state reached), with a new transition time.
    const base = clusterExtensionStatus(
      before,
      { kind: 'installed', resolved: { bundle: { name: 'op.v1', version: '1.0.0' } } },
      undefined,
      now,
    );
    const report = { rollback: rollback('RolledBack'), held: [held()] };
    const status = withProgressReport(before, base, report, now);
    const progressing = status.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      lastTransitionTime: earlier,
    });
    expect(status.conditions?.map((c) => c.type)).toEqual(base.conditions?.map((c) => c.type));
    expect(status.rollback).toEqual(report.rollback);
    expect(status.heldBack).toEqual([held()]);
  });

  it('leaves v1 rules alone, and adds no fields, when there is nothing to report', () => {
    const base = clusterExtensionStatus(
      ext(),
      {
        kind: 'progressing',
        message: 'installing',
        resolved: { bundle: { name: 'op.v1', version: '1.0.0' } },
      },
      undefined,
      now,
    );
    expect(withProgressReport(ext(), base, { held: [] }, now)).toEqual(base);
  });
});

describe('stillHeldBack', () => {
  it.each([
    ['the same spec and bundle: held', held(), 'abc', true],
    ['another spec: let go', held({ generation: 2 }), 'abc', false],
    ['the bundle changed: let go', held(), 'def', false],
    ['the bundle gone from the catalog: let go', held(), undefined, false],
    ['the catalog not read yet: held', held(), 'unknown' as const, true],
  ])('%s', (_, h, digest, kept) => {
    expect(stillHeldBack([h], 3, () => digest)).toEqual(kept ? [h] : []);
  });
});

describe('storedRollback', () => {
  it('reads the fields back from a stored status, and ignores a heldBack that is not a list', () => {
    const stored = ext({ conditions: [], rollback: rollback('RolledBack'), heldBack: [held()] } as never);
    expect(storedRollback(stored)).toEqual({ rollback: rollback('RolledBack'), heldBack: [held()] });
    expect(storedRollback(ext({ heldBack: 'x' } as never))).toEqual({});
  });
});

describe('foreignCSVs', () => {
  const csv = (name: string, owner?: string): ClusterServiceVersion =>
    ({
      metadata: {
        name,
        namespace: 'op',
        ...(owner ? { ownerReferences: [{ kind: 'ClusterExtension', uid: owner }] } : {}),
      },
      spec: {},
    }) as unknown as ClusterServiceVersion;
  const owned = (c: ClusterServiceVersion) =>
    (c.metadata.ownerReferences ?? []).some((o) => o.uid === 'ext-uid');
  const live = [
    csv('op.v1', 'ext-uid'),
    csv('op.v2', 'ext-uid'),
    csv('other.v1'),
    csv('shared.v1', 'another-uid'),
  ];

  it.each([
    ["both the extension's own", { from: 'op.v2', to: 'op.v1' }, []],
    ["removing another operator's CSV", { from: 'other.v1', to: 'op.v1' }, ['other.v1']],
    ["reinstating another operator's CSV", { from: 'op.v2', to: 'other.v1' }, ['other.v1']],
    ['a CSV another extension owns', { from: 'shared.v1', to: 'op.v1' }, ['shared.v1']],
    ['both foreign', { from: 'other.v1', to: 'shared.v1' }, ['other.v1', 'shared.v1']],
    ["CSVs that are not there: no one's", { from: 'gone.v2', to: 'gone.v1' }, []],
    ['no CSV to reinstate', { from: 'op.v2' }, []],
  ])('%s', (_, rollback, expected) => {
    expect(foreignCSVs(rollback, live, owned)).toEqual(expected);
  });
});
