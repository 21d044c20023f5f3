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

/**
 * setTimeout's longest delay, 2^31 - 1 ms (about 24.8 days). Node runs a timer given a longer one
 * (or Infinity) after 1 ms instead: a requeueAfter computed from a user's setting (an upgrade
 * deadline of `1000h` in an annotation) would then reconcile the object in a tight loop.
 */
export const MaxTimerMs = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    let t: ReturnType<typeof setTimeout>;
    // A longer delay waits in steps of MaxTimerMs; Infinity never fires.
    const arm = (left: number) => {
      t = setTimeout(
        left > MaxTimerMs ? () => arm(left - MaxTimerMs) : fn,
        Math.min(MaxTimerMs, Math.max(0, left)),
      );
      // A pending retry or resync must not keep the process alive on its own.
      t.unref();
    };
    arm(ms);
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
