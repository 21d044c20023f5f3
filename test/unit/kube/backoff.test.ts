import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/kube/backoff.js';

const noJitter = { baseMs: 100, maxMs: 1_000, jitter: 0 };

describe('backoffDelay', () => {
  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [4, 800],
    [5, 1_000],
    [60, 1_000],
    [10_000, 1_000],
  ])('retry %i waits %i ms without jitter', (attempt, expected) => {
    expect(backoffDelay(noJitter, attempt, () => 0.5)).toBe(expected);
  });

  it('jitter spreads a delay by at most the jitter fraction either way', () => {
    const opts = { baseMs: 100, maxMs: 10_000, jitter: 0.2 };
    expect(backoffDelay(opts, 1, () => 0)).toBe(80);
    expect(backoffDelay(opts, 1, () => 0.5)).toBe(100);
    expect(backoffDelay(opts, 1, () => 0.999_999)).toBe(120);
  });

  it('stays within [delay·(1−jitter), min(max, delay·(1+jitter))] for any attempt and random draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 0.9999, noNaN: true }),
        (baseMs, extra, attempt, jitter, r) => {
          const maxMs = baseMs + extra;
          const raw = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
          const d = backoffDelay({ baseMs, maxMs, jitter }, attempt, () => r);
          expect(d).toBeGreaterThanOrEqual(Math.floor(raw * (1 - jitter)));
          expect(d).toBeLessThanOrEqual(Math.min(maxMs, Math.ceil(raw * (1 + jitter))));
        },
      ),
    );
  });
});
