/**
 * Properties over generated catalogs: every plan satisfies every constraint and invariant and
 * never downgrades; a plan is found exactly when one exists; the result does not depend on the
 * order of the input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolve } from '../../../src/resolver/index.js';
import { planProblem, reorder, satisfiable, toInput, worldArb } from './world.js';
import { runs } from '../../support/properties.js';

const cases = runs(300);

describe('resolver properties', () => {
  it('every returned plan satisfies every constraint and invariant, and never downgrades', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const input = toInput(w);
        const r = resolve(input);
        if (r.ok) expect(planProblem(input, r.steps)).toBeNull();
      }),
      cases,
    );
  });

  it('finds a plan exactly when one exists (checked by brute force)', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const input = toInput(w);
        const r = resolve(input);
        expect(r.ok ? 'resolved' : r.reason).toBe(
          satisfiable(input) ? 'resolved' : 'ConstraintsNotSatisfiable',
        );
      }),
      cases,
    );
  });

  it('gives the same result whatever the order of catalogs, packages, channels, entries, bundles, properties, installed operators and Subscriptions', () => {
    fc.assert(
      fc.property(worldArb, fc.integer(), (w, seed) => {
        const input = toInput(w);
        expect(resolve(reorder(input, seed), { explain: true })).toEqual(resolve(input, { explain: true }));
      }),
      cases,
    );
  });

  it('explains every failure with a message and a conflicting set that names a Subscription or installed operator', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const r = resolve(toInput(w));
        if (r.ok) return;
        expect(r.message.length).toBeGreaterThan(0);
        expect(r.explanation.failure).toBeDefined();
        const kinds = new Set(r.explanation.conflict?.map((c) => c.kind));
        expect(kinds.has('subscription') || kinds.has('installed')).toBe(true);
      }),
      cases,
    );
  });
});
