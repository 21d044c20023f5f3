/**
 * A ClusterExtension's progress deadline: where it comes from (the annotation Subscriptions use
 * before spec.progressDeadlineMinutes, none when neither is set), when an attempt is late, and
 * v1's message for one that is.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterExtension } from '../../../src/apis/olmv1.js';
import {
  attemptStart,
  deadlineExceededMessage,
  deadlineState,
  extensionDeadline,
} from '../../../src/controllers/clusterextension-deadline.js';

const ext = (minutes?: number, annotation?: string): ClusterExtension => ({
  apiVersion: 'olm.operatorframework.io/v1',
  kind: 'ClusterExtension',
  metadata: {
    name: 'argocd',
    ...(annotation !== undefined ? { annotations: { 'bosun.dev/upgrade-deadline': annotation } } : {}),
  },
  spec: {
    namespace: 'argocd',
    serviceAccount: { name: 'installer' },
    source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator' } },
    ...(minutes !== undefined ? { progressDeadlineMinutes: minutes } : {}),
  },
});

describe('extensionDeadline', () => {
  it.each([
    ['neither set: no deadline, as v1', undefined, undefined, { ms: null, source: 'none' }],
    ['the field alone', 15, undefined, { ms: 15 * 60_000, source: 'spec' }],
    ['the annotation alone', undefined, '30s', { ms: 30_000, source: 'annotation' }],
    ['the annotation wins over the field', 15, '45s', { ms: 45_000, source: 'annotation' }],
    ['an annotation 0 turns the field off', 15, '0', { ms: null, source: 'annotation' }],
    ['an annotation off turns the field off', 15, 'off', { ms: null, source: 'annotation' }],
  ])('%s', (_, minutes, annotation, expected) => {
    expect(extensionDeadline(ext(minutes, annotation))).toEqual(expected);
  });

  it('an unreadable annotation leaves the field in force and says so', () => {
    expect(extensionDeadline(ext(15, 'soon'))).toEqual({
      ms: 15 * 60_000,
      source: 'spec',
      problem:
        'annotation bosun.dev/upgrade-deadline: "soon" is not a duration like 90s, 10m or 1h (or 0 or off); spec.progressDeadlineMinutes (15) applies',
    });
    expect(extensionDeadline(ext(undefined, '-5m'))).toMatchObject({
      ms: null,
      source: 'none',
      problem: expect.stringMatching(/"-5m" is not a duration.*; no deadline applies$/),
    });
  });
});

describe('deadlineState', () => {
  const start = Date.parse('2026-11-27T06:00:00Z');
  it.each([
    ['no deadline', null, start, start + 3_600_000, { kind: 'none' }],
    ['nothing to time', 60_000, undefined, start, { kind: 'none' }],
    ['within it', 60_000, start, start + 20_000, { kind: 'waiting', dueInMs: 40_000 }],
    ['at it', 60_000, start, start + 60_000, { kind: 'exceeded' }],
    ['past it', 60_000, start, start + 61_000, { kind: 'exceeded' }],
  ])('%s', (_, ms, from, now, expected) => {
    expect(deadlineState(from, ms, now)).toEqual(expected);
  });
});

describe('attemptStart', () => {
  it('is the earliest creation, times that do not parse left out', () => {
    expect(attemptStart(['2026-11-27T06:00:05Z', undefined, 'yesterday', '2026-11-27T06:00:01Z'])).toBe(
      Date.parse('2026-11-27T06:00:01Z'),
    );
    expect(attemptStart([undefined, 'never'])).toBeUndefined();
  });
});

describe('deadlineExceededMessage', () => {
  it('says whole minutes as v1 does, and a shorter deadline as Go prints a duration', () => {
    expect(deadlineExceededMessage(10 * 60_000, 'InstallPlan extension-1 is Installing')).toBe(
      'Revision has not rolled out for 10 minute(s). Last status: InstallPlan extension-1 is Installing',
    );
    expect(deadlineExceededMessage(90_000, 'x')).toBe(
      'Revision has not rolled out for 1m30s. Last status: x',
    );
  });
});
