/**
 * The system clock's timers: a delay longer than setTimeout takes (2^31 - 1 ms), or Infinity,
 * waits rather than firing at once, as Node's setTimeout would (a requeueAfter derived from a
 * user's `1000h` deadline would otherwise reconcile in a tight loop).
 */
import { describe, expect, it } from 'vitest';
import { MaxTimerMs, systemClock } from '../../../src/kube/clock.js';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('systemClock.setTimer', () => {
  it.each([
    ['just past the longest delay', MaxTimerMs + 1],
    ['1000 hours', 1000 * 3_600_000],
    ['many times the longest delay', MaxTimerMs * 10],
    ['Infinity', Infinity],
  ])('does not fire at once for %s', async (_, ms) => {
    let fired = false;
    const timer = systemClock.setTimer(ms, () => {
      fired = true;
    });
    await wait(30);
    timer.cancel();
    expect(fired).toBe(false);
  });

  it('still fires a short delay, and a cancelled one never', async () => {
    const fired: string[] = [];
    systemClock.setTimer(5, () => fired.push('short'));
    systemClock.setTimer(5, () => fired.push('cancelled')).cancel();
    await wait(40);
    expect(fired).toEqual(['short']);
  });
});
