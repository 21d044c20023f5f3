/**
 * `olm.constraint` values, parsed once with OLM's rules (operator-framework/api
 * pkg/constraints): exactly one of `gvk`, `package`, `all`, `any`, `not` or `cel`; compound
 * constraints hold a non-empty list of constraints; a package constraint's `versionRange` is a
 * blang range; a CEL rule compiles and is boolean. `failureMessage` may sit beside any of them.
 * OLM has no `none`: a constraint that uses it is refused like any other unknown kind.
 *
 * Validation reports the problems (by field path under the value); the resolver turns a parsed
 * constraint into a predicate over bundles.
 */
import { type CelProgram, compileCel } from './cel.js';
import { parseRange, type Range } from './version.js';

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

export type Constraint =
  | { kind: 'gvk'; gvk: GVK }
  | { kind: 'package'; packageName: string; versionRange: string; range: Range }
  | { kind: 'cel'; rule: string; program: CelProgram }
  | { kind: 'all' | 'any' | 'not'; constraints: Constraint[] };

/** One thing wrong, at `path` below the constraint value (`''` for the value itself). */
export interface ConstraintProblem {
  path: string;
  message: string;
}

export type ConstraintResult =
  { ok: true; constraint: Constraint } | { ok: false; problems: ConstraintProblem[] };

export const CONSTRAINT_KINDS = ['gvk', 'package', 'all', 'any', 'not', 'cel'] as const;

// Deeper nesting has no use; the bound keeps a hostile catalog from exhausting the stack. OLM
// bounds the value's size instead (128 KiB).
const MAX_DEPTH = 32;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An `olm.gvk` value (also the `gvk` of a constraint): group, and non-empty version and kind. */
export function parseGVK(v: unknown): GVK | undefined {
  if (!isRecord(v)) return undefined;
  const { group, version, kind } = v;
  if (typeof group !== 'string' || typeof version !== 'string' || typeof kind !== 'string') return undefined;
  if (version === '' || kind === '') return undefined;
  return { group, version, kind };
}

export function parseConstraint(v: unknown): ConstraintResult {
  const problems: ConstraintProblem[] = [];
  const constraint = read(v, '', 0, problems);
  return constraint && problems.length === 0 ? { ok: true, constraint } : { ok: false, problems };
}

function read(
  v: unknown,
  path: string,
  depth: number,
  problems: ConstraintProblem[],
): Constraint | undefined {
  const say = (at: string, message: string) => {
    problems.push({ path: path + at, message });
    return undefined;
  };
  if (!isRecord(v)) return say('', 'an olm.constraint value is a map');
  if (depth > MAX_DEPTH) return say('', `constraints nest deeper than ${MAX_DEPTH} levels`);
  const present = CONSTRAINT_KINDS.filter((k) => v[k] !== undefined && v[k] !== null);
  if (present.length !== 1) {
    return say(
      '',
      `an olm.constraint has exactly one of ${CONSTRAINT_KINDS.join(', ')}, found ${present.length ? present.join(', ') : 'none'}`,
    );
  }
  const kind = present[0]!;
  const inner = v[kind];
  switch (kind) {
    case 'gvk': {
      const gvk = parseGVK(inner);
      return gvk ? { kind, gvk } : say('.gvk', 'an olm.gvk value needs group, version and kind');
    }
    case 'package': {
      const p = isRecord(inner) ? inner : {};
      const { packageName, versionRange } = p;
      if (typeof packageName !== 'string' || packageName === '') say('.package.packageName', 'is required');
      if (typeof versionRange !== 'string') return say('.package.versionRange', 'is required');
      const range = parseRange(versionRange);
      if (!range.ok) return say('.package.versionRange', range.message);
      if (typeof packageName !== 'string' || packageName === '') return undefined;
      return { kind, packageName, versionRange, range: range.range };
    }
    case 'cel': {
      const rule = isRecord(inner) ? inner.rule : undefined;
      if (typeof rule !== 'string' || rule.trim() === '') return say('.cel.rule', 'is required');
      const compiled = compileCel(rule);
      return compiled.ok ? { kind, rule, program: compiled.program } : say('.cel.rule', compiled.message);
    }
    default: {
      const list = isRecord(inner) ? inner.constraints : undefined;
      if (!Array.isArray(list) || list.length === 0)
        return say(`.${kind}.constraints`, 'is required: a non-empty list of constraints');
      const parts = list.map((c, i) => read(c, `${path}.${kind}.constraints[${i}]`, depth + 1, problems));
      if (parts.some((p) => p === undefined)) return undefined;
      return { kind, constraints: parts as Constraint[] };
    }
  }
}

/** What validation reports about an `olm.constraint` value; empty when OLM accepts it. */
export function constraintProblems(v: unknown): ConstraintProblem[] {
  const parsed = parseConstraint(v);
  return parsed.ok ? [] : parsed.problems;
}
