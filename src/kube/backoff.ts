import type { Random } from './clock.js';

export interface BackoffOptions {
  /** Delay after the first failure. */
  baseMs: number;
  /** The delay never grows beyond this. */
  maxMs: number;
  /**
   * Spread: each delay is scaled by a random factor in [1 - jitter, 1 + jitter] so that many
   * keys or watches failing together do not retry in lockstep. 0 disables it.
   */
  jitter: number;
}

/**
 * The delay before retry number `attempt` (1 for the first retry): `baseMs * 2^(attempt-1)`,
 * capped at `maxMs`, then jittered and capped again.
 */
export function backoffDelay(opts: BackoffOptions, attempt: number, random: Random): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  const raw = Math.min(opts.maxMs, opts.baseMs * 2 ** exponent);
  const factor = 1 + opts.jitter * (2 * random() - 1);
  return Math.min(opts.maxMs, Math.max(0, Math.round(raw * factor)));
}
