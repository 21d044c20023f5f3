/**
 * `olm.constraint` values, parsed once with OLM's rules (operator-framework/api
 * pkg/constraints): exactly one of `gvk`, `package`, `all`, `any`, `not` or `cel`; compound
 * constraints hold a non-empty list of constraints; a package constraint's `versionRange` is a
 * blang range; a CEL rule compiles and is boolean. `failureMessage` may sit beside any of them.
 * Any other field, at any depth, is refused, as OLM's decoding refuses it (so OLM's lack of a
 * `none` kind is an unknown field too), and so is a value larger than 128 KiB. One difference
 * remains: Go matches field names regardless of case (`GVK` reads as `gvk`); here they must be
 * spelt as OLM writes them.
 *
 * Validation reports the problems (by field path under the value); the resolver turns a parsed
 * constraint into a predicate over bundles.
 */
import { type CelProgram, compileCel } from './cel.js';
import { parseRange, type Range } from './version.js';
import { isRecord } from '../util/record.js';

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
// bounds the value's size instead, which is checked too.
const MAX_DEPTH = 32;

/** OLM refuses a constraint whose JSON is larger than this many bytes (128 KiB). */
export const MAX_CONSTRAINT_BYTES = 2 << 16;

/**
 * The fields OLM's Go types declare, at each level. OLM decodes a constraint refusing any other
 * field, at any depth, so a misspelt `versionrange` or an unknown kind such as `none` fails
 * rather than being ignored.
 */
const FIELDS = {
  constraint: ['failureMessage', ...CONSTRAINT_KINDS],
  gvk: ['group', 'version', 'kind'],
  package: ['packageName', 'versionRange'],
  cel: ['rule'],
  compound: ['constraints'],
} as const;

/** An `olm.gvk` value (also the `gvk` of a constraint): group, and non-empty version and kind. */
export function parseGVK(v: unknown): GVK | undefined {
  if (!isRecord(v)) return undefined;
  const { group, version, kind } = v;
  if (typeof group !== 'string' || typeof version !== 'string' || typeof kind !== 'string') return undefined;
  if (version === '' || kind === '') return undefined;
  return { group, version, kind };
}

export function parseConstraint(v: unknown): ConstraintResult {
  const bytes = Buffer.byteLength(JSON.stringify(v) ?? '');
  if (bytes > MAX_CONSTRAINT_BYTES) {
    const message = `an olm.constraint value is at most ${MAX_CONSTRAINT_BYTES} bytes of JSON, found ${bytes}`;
    return { ok: false, problems: [{ path: '', message }] };
  }
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
  if (!knownFields(v, FIELDS.constraint, path, problems)) return undefined;
  if (v.failureMessage !== undefined && v.failureMessage !== null && typeof v.failureMessage !== 'string')
    return say('.failureMessage', 'is a string');
  const present = CONSTRAINT_KINDS.filter((k) => v[k] !== undefined && v[k] !== null);
  if (present.length !== 1) {
    return say(
      '',
      `an olm.constraint has exactly one of ${CONSTRAINT_KINDS.join(', ')}, found ${present.length ? present.join(', ') : 'none'}`,
    );
  }
  const kind = present[0]!;
  const inner = v[kind];
  const fields = kind === 'all' || kind === 'any' || kind === 'not' ? FIELDS.compound : FIELDS[kind];
  if (isRecord(inner) && !knownFields(inner, fields, `${path}.${kind}`, problems)) return undefined;
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

/** Reports each field of `v` OLM's type for it does not declare; true when there is none. */
function knownFields(
  v: Record<string, unknown>,
  known: readonly string[],
  path: string,
  problems: ConstraintProblem[],
): boolean {
  const unknown = Object.keys(v).filter((k) => !known.includes(k));
  for (const k of unknown) {
    problems.push({
      path: `${path}.${k}`,
      message: `unknown field: OLM knows only ${known.join(', ')} here`,
    });
  }
  return unknown.length === 0;
}

/** What validation reports about an `olm.constraint` value; empty when OLM accepts it. */
export function constraintProblems(v: unknown): ConstraintProblem[] {
  const parsed = parseConstraint(v);
  return parsed.ok ? [] : parsed.problems;
}
