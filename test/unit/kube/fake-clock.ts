import type { Clock, TimerHandle } from '../../../src/kube/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to, running due timers in order. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Timers that have not fired or been cancelled, soonest first, as delays from now. */
  pendingDelays(): number[] {
    return this.live().map((t) => t.at - this.t);
  }

  /** Moves time forward by `ms`, firing each timer that comes due, in order, at its own time. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const next = this.live()[0];
      if (!next || next.at > end) break;
      this.t = next.at;
      next.cancelled = true;
      next.fn();
    }
    this.t = end;
  }

  private live(): Timer[] {
    this.timers = this.timers.filter((t) => !t.cancelled);
    return [...this.timers].sort((a, b) => a.at - b.at || a.seq - b.seq);
  }
}

/** Lets pending promise callbacks run (several turns, for chains of awaits). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise with its resolve and reject exposed, to control when a fake reconcile finishes. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
