/**
 * Time and randomness as dependencies, so that backoff, requeueAfter and watchdogs can be tested
 * step by step with a fake clock instead of waiting on the real one.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds unless cancelled first. */
  setTimer(ms: number, fn: () => void): TimerHandle;
}

/** A number in [0, 1), like Math.random. */
export type Random = () => number;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    // A pending retry or resync must not keep the process alive on its own.
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** Resolves after `ms` on `clock`. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
