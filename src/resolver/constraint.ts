/**
 * Turns the requirement properties of a bundle into predicates over other bundles:
 * `olm.gvk.required`, `olm.package.required`, `olm.label.required` and `olm.constraint` (with
 * `gvk`, `package`, `all`, `any`, `not` and `cel`). Each compound constraint is about one
 * candidate bundle: `all` means one bundle satisfies every part, as in OLM.
 */
import type { Constraint } from '../apis/fbc.js';
import { compileCel } from './cel.js';
import { type BundleInfo, type GVK, gvkKey, gvkText, type LookupHint } from './model.js';
import {
  and,
  hasLabel,
  inPackage,
  inSemverRange,
  not,
  or,
  type Predicate,
  providesGVK,
} from './predicates.js';
import { parseRange } from '../olm/version.js';

export interface Compiled {
  test: Predicate<BundleInfo>;
  hint: LookupHint;
  wants: string;
  problem?: string;
}

const never: Predicate<BundleInfo> = () => false;
const broken = (wants: string, problem: string): Compiled => ({
  test: never,
  hint: { kind: 'all' },
  wants,
  problem,
});

export function isGVK(v: unknown): v is GVK {
  if (typeof v !== 'object' || v === null) return false;
  const g = v as Record<string, unknown>;
  return typeof g.group === 'string' && typeof g.version === 'string' && typeof g.kind === 'string';
}

export function gvkRequirement(v: unknown): Compiled {
  if (!isGVK(v) || v.version === '' || v.kind === '') {
    return broken('a provider of an API', 'needs group, version and kind');
  }
  return {
    test: providesGVK(v),
    hint: { kind: 'gvk', key: gvkKey(v) },
    wants: `a provider of ${gvkText(v)}`,
  };
}

export function packageRequirement(v: unknown): Compiled {
  const p = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const name = p.packageName;
  const rangeText = p.versionRange;
  if (typeof name !== 'string' || name === '') return broken('a package', 'needs packageName');
  if (typeof rangeText !== 'string' || rangeText.trim() === '') {
    return broken(`package ${name}`, 'needs versionRange');
  }
  const range = parseRange(rangeText);
  const wants = `package ${name} in range ${rangeText}`;
  if (!range.ok) return broken(wants, `versionRange ${JSON.stringify(rangeText)} is not a semver range`);
  return { test: and(inPackage(name), inSemverRange(range.range)), hint: { kind: 'package', name }, wants };
}

export function labelRequirement(v: unknown): Compiled {
  const label = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).label : undefined;
  if (typeof label !== 'string' || label === '') return broken('a label', 'needs label');
  return { test: hasLabel(label), hint: { kind: 'label', label }, wants: `a bundle labelled ${label}` };
}

const CONSTRAINT_KEYS = ['gvk', 'package', 'all', 'any', 'not', 'none', 'cel'] as const;

/** Compiles an `olm.constraint` value, recursively for `all`, `any` and `not`. */
export function constraintRequirement(v: unknown, depth = 0): Compiled {
  if (typeof v !== 'object' || v === null) return broken('a constraint', 'must be an object');
  if (depth > 32) return broken('a constraint', 'nests deeper than 32 levels');
  const c = v as Constraint & { none?: { constraints: Constraint[] } };
  const set = CONSTRAINT_KEYS.filter((k) => c[k] !== undefined && c[k] !== null);
  // `none` is the deprecated spelling of `not`; when both are there OLM reads `not`.
  const kinds = set.includes('not') ? set.filter((k) => k !== 'none') : set;
  if (kinds.length !== 1) {
    return broken(
      'a constraint',
      kinds.length === 0
        ? 'sets none of gvk, package, all, any, not, cel'
        : `sets more than one of ${kinds.join(', ')}`,
    );
  }
  const kind = kinds[0]!;
  switch (kind) {
    case 'gvk':
      return gvkRequirement(c.gvk);
    case 'package':
      return packageRequirement(c.package);
    case 'cel':
      return celRequirement(c.cel);
    case 'all':
    case 'any':
    case 'not':
    case 'none': {
      const compound = c[kind] as { constraints?: unknown } | undefined;
      const list = compound?.constraints;
      if (!Array.isArray(list) || list.length === 0)
        return broken(`${kind} of constraints`, `${kind}.constraints is empty`);
      const parts = list.map((x) => constraintRequirement(x, depth + 1));
      const problem = parts.find((p) => p.problem)?.problem;
      const words = parts.map((p) => p.wants);
      if (kind === 'all') {
        const wants = `one bundle with all of: ${words.join('; ')}`;
        if (problem) return broken(wants, problem);
        return { test: and(...parts.map((p) => p.test)), hint: narrowest(parts.map((p) => p.hint)), wants };
      }
      if (kind === 'any') {
        const wants = `a bundle with any of: ${words.join('; ')}`;
        if (problem) return broken(wants, problem);
        const hints = parts.map((p) => p.hint);
        return {
          test: or(...parts.map((p) => p.test)),
          hint: hints.some((h) => h.kind === 'all') ? { kind: 'all' } : { kind: 'union', hints },
          wants,
        };
      }
      const wants = `a bundle with none of: ${words.join('; ')}`;
      if (problem) return broken(wants, problem);
      return { test: not(...parts.map((p) => p.test)), hint: { kind: 'all' }, wants };
    }
  }
}

function celRequirement(v: unknown): Compiled {
  const rule = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).rule : undefined;
  if (typeof rule !== 'string' || rule.trim() === '') return broken('a CEL rule', 'cel.rule is empty');
  const wants = `a bundle for which ${rule}`;
  const program = compileCel(rule);
  if (!program.ok) return broken(wants, program.message);
  return { test: (b) => program.program(b.properties), hint: { kind: 'all' }, wants };
}

/** For `all`, any part's index will do; prefer one that is not a full scan. */
function narrowest(hints: LookupHint[]): LookupHint {
  return (
    hints.find((h) => h.kind === 'gvk' || h.kind === 'package' || h.kind === 'label') ??
    hints.find((h) => h.kind === 'union') ?? { kind: 'all' }
  );
}
