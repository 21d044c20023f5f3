/**
 * Turns the requirement properties of a bundle into predicates over other bundles:
 * `olm.gvk.required`, `olm.package.required`, `olm.label.required` and `olm.constraint` (with
 * `gvk`, `package`, `all`, `any`, `not` and `cel`). Each compound constraint is about one
 * candidate bundle: `all` means one bundle satisfies every part, as in OLM.
 */
import { type Constraint, parseConstraint } from '../olm/constraint.js';
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

/**
 * Compiles an `olm.constraint` value: the kernel parses it (and compiles its CEL rules) once; here
 * each part becomes a predicate, with the words that explain it and an index hint.
 */
export function constraintRequirement(v: unknown): Compiled {
  const parsed = parseConstraint(v);
  if (!parsed.ok) return broken('a constraint', parsed.problems[0]!.message);
  return fromConstraint(parsed.constraint);
}

function fromConstraint(c: Constraint): Compiled {
  switch (c.kind) {
    case 'gvk':
      return gvkRequirement(c.gvk);
    case 'package': {
      const wants = `package ${c.packageName} in range ${c.versionRange}`;
      return {
        test: and(inPackage(c.packageName), inSemverRange(c.range)),
        hint: { kind: 'package', name: c.packageName },
        wants,
      };
    }
    case 'cel':
      return {
        test: (b) => c.program(b.properties),
        hint: { kind: 'all' },
        wants: `a bundle for which ${c.rule}`,
      };
    case 'all': {
      const parts = c.constraints.map(fromConstraint);
      return {
        test: and(...parts.map((p) => p.test)),
        hint: narrowest(parts.map((p) => p.hint)),
        wants: `one bundle with all of: ${parts.map((p) => p.wants).join('; ')}`,
      };
    }
    case 'any': {
      const parts = c.constraints.map(fromConstraint);
      const hints = parts.map((p) => p.hint);
      return {
        test: or(...parts.map((p) => p.test)),
        hint: hints.some((h) => h.kind === 'all') ? { kind: 'all' } : { kind: 'union', hints },
        wants: `a bundle with any of: ${parts.map((p) => p.wants).join('; ')}`,
      };
    }
    case 'not': {
      const parts = c.constraints.map(fromConstraint);
      return {
        test: not(...parts.map((p) => p.test)),
        hint: { kind: 'all' },
        wants: `a bundle with none of: ${parts.map((p) => p.wants).join('; ')}`,
      };
    }
  }
}

/** For `all`, any part's index will do; prefer one that is not a full scan. */
function narrowest(hints: LookupHint[]): LookupHint {
  return (
    hints.find((h) => h.kind === 'gvk' || h.kind === 'package' || h.kind === 'label') ??
    hints.find((h) => h.kind === 'union') ?? { kind: 'all' }
  );
}
