/**
 * CEL for `olm.constraint` `cel.rule`, as OLM defines it (operator-framework/api
 * pkg/constraints): one variable, `properties`, the candidate bundle's properties as a list of
 * `{type, value}` maps with JSON values; and one function, `semver_compare(a, b)`, which compares
 * two versions after blang's tolerant parsing and returns -1, 0 or 1. A rule must be boolean; an
 * error while evaluating means the candidate does not satisfy it (OLM does the same).
 */
import { Environment } from '@marcbachmann/cel-js';
import type { Property } from '../apis/fbc.js';
import { decode } from './property-value.js';
import { compareVersions, parseTolerant } from './version.js';

function semverCompare(a: unknown, b: unknown): bigint {
  const va = parseTolerant(String(a));
  if (!va) throw new Error(`unable to parse '${String(a)}' to semver format`);
  const vb = parseTolerant(String(b));
  if (!vb) throw new Error(`unable to parse '${String(b)}' to semver format`);
  return BigInt(compareVersions(va, vb));
}

const env = new Environment({ homogeneousAggregateLiterals: false })
  .registerVariable('properties', 'list<map<string, dyn>>')
  .registerFunction('semver_compare(dyn, dyn): int', semverCompare);

export type CelProgram = (properties: readonly Property[]) => boolean;

export type Compiled = { ok: true; program: CelProgram } | { ok: false; message: string };

// Rules repeat across the bundles of a package; compile each once per process.
const compiled = new Map<string, Compiled>();

export function compileCel(rule: string): Compiled {
  const hit = compiled.get(rule);
  if (hit) return hit;
  const result = compile(rule);
  compiled.set(rule, result);
  return result;
}

function compile(rule: string): Compiled {
  const checked = env.check(rule);
  if (!checked.valid) {
    return {
      ok: false,
      message: `cel rule ${JSON.stringify(rule)} does not compile: ${firstLine(checked.error)}`,
    };
  }
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    return { ok: false, message: `cel rule ${JSON.stringify(rule)} must be boolean, not ${checked.type}` };
  }
  const evaluate = env.parse(rule);
  const program: CelProgram = (properties) => {
    try {
      return evaluate({ properties: properties.map(celProperty) }) === true;
    } catch {
      return false;
    }
  };
  return { ok: true, program };
}

// CEL sees each value as decoded JSON, as in OLM.
const celProperty = (p: Property): { type: string; value: unknown } => ({
  type: p.type,
  value: decode(p.value) ?? null,
});

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0] ?? msg;
}
