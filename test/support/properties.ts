/**
 * How property tests (fast-check) run. By default every property starts from one fixed seed, so a
 * test run is reproducible: the same code passes or fails the same way each time, in CI as here.
 * Exploring for new counterexamples is a separate, deliberate run:
 *
 *   BOSUN_FC_SEED=random BOSUN_FC_SCALE=100 npm run test:unit
 *
 * runs each property from a fresh seed with 100 times its usual number of cases. A failure prints
 * its seed; `BOSUN_FC_SEED=<that seed>` (with the same scale) replays it.
 */
import fc from 'fast-check';

const FIXED_SEED = 20_261_122;

function scale(): number {
  const raw = process.env.BOSUN_FC_SCALE;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  // At least 1: tests may count how many cases reached a branch, against their usual number.
  if (!(n >= 1)) throw new Error(`BOSUN_FC_SCALE must be a number of at least 1, not ${JSON.stringify(raw)}`);
  return n;
}

function seed(): number | undefined {
  const raw = process.env.BOSUN_FC_SEED;
  if (raw === undefined || raw === '') return FIXED_SEED;
  if (raw === 'random') return undefined; // fast-check picks one and prints it with a failure
  const n = Number(raw);
  if (!Number.isInteger(n))
    throw new Error(`BOSUN_FC_SEED must be an integer or "random", not ${JSON.stringify(raw)}`);
  return n;
}

/** A property's number of cases: `numRuns` in a normal run, scaled when exploring. */
export function runs(numRuns: number): { numRuns: number } {
  return { numRuns: Math.max(1, Math.round(numRuns * scale())) };
}

/** Applied before each test file (vitest `setupFiles`): the seed, and fast-check's default 100 runs scaled. */
export function configureProperties(): void {
  fc.configureGlobal({ seed: seed(), ...runs(100) });
}
