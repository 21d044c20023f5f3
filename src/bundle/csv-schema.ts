/**
 * A ClusterServiceVersion is checked once, where its bundle is read, against the schema Bosun's
 * own CSV CRD is generated from (src/apis/crds/clusterserviceversion.ts), so reading accepts what
 * Bosun's API server would accept, and everything after reading works on the checked type.
 *
 * OLM reads a CSV into its Go types, and that typed decoding tolerates three things the schema
 * alone would refuse, so they are not errors here either (the install path repairs them the way
 * OLM's decoding does, src/install/typed-decoding.ts):
 * - `null` for a field: Go reads it as the zero value;
 * - a missing field the schema requires: Go fills in its zero value;
 * - unknown fields: Go ignores them (and the API server prunes them);
 * and a descriptor's `value`, a string in the CRD, is any JSON value to Go (`json.RawMessage`).
 * The first two are returned as warnings, for whoever wants to show them; reading and validation
 * tolerate them silently, as the install path already says which fields it repaired. What Go cannot decode (a string where a list belongs, a list
 * where a map belongs) fails reading, naming file, object and field.
 */
import type { ValidateFunction } from 'ajv';
import { clusterServiceVersionCrd } from '../apis/crds/clusterserviceversion.js';
import { compileChecker, schemaProblems } from '../apis/crds/check.js';
import type { ClusterServiceVersion } from '../apis/operators.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';

// Made when first needed (compiled ahead of time by `npm run build`, else here, in about half a
// second), so that commands reading no bundle never pay for it.
let compiled: ValidateFunction<ClusterServiceVersion> | undefined;

/** The CSV checker, made now if it was not yet. */
export const compileCSVChecker = () =>
  (compiled ??= compileChecker<ClusterServiceVersion>(clusterServiceVersionCrd.schema));

export interface CSVCheck {
  /** What OLM's typed decoding would refuse: the CSV cannot be read. */
  errors: Problem[];
  /** What OLM's typed decoding tolerates (nulls, missing required fields). */
  warnings: Problem[];
}

/**
 * Decodes a manifest as a CSV: the checked CSV, or what OLM's decoding could not hold. The CSV
 * may still lack the fields OLM's decoding would give zero values (the install path fills them
 * in, src/install/typed-decoding.ts).
 */
export function decodeClusterServiceVersion(
  value: Record<string, unknown>,
  file: string,
  object: string,
): Result<ClusterServiceVersion> {
  const { errors } = checkClusterServiceVersion(value, file, object);
  // The schema is the CSV type's (the builder ties them), so what passes it is that type, but
  // for the zero values tolerated above.
  return errors.length > 0 ? fail(errors) : ok(value as unknown as ClusterServiceVersion);
}

/** Checks a decoded manifest as a CSV; with no errors, `csv` is a `ClusterServiceVersion`. */
export function checkClusterServiceVersion(
  csv: Record<string, unknown>,
  file: string,
  object: string,
): CSVCheck {
  const checkCSV = compileCSVChecker();
  if (checkCSV(csv)) return { errors: [], warnings: [] };
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  for (const e of checkCSV.errors ?? []) {
    const [found] = schemaProblems([e], file, object);
    if (!found) continue;
    const { file: _, ...unfiled } = found;
    const p: Problem = file ? found : unfiled;
    // A descriptor's value is Go's json.RawMessage, which holds any JSON value.
    if (/Descriptors\[\d+\]\.value$/.test(p.field ?? '')) continue;
    if (e.keyword === 'required' || (e.keyword === 'type' && at(csv, e.instancePath) === null)) {
      warnings.push({
        ...p,
        message:
          e.keyword === 'required'
            ? 'is required; it is read as empty, as OLM does'
            : `is null; it is read as empty, as OLM does (${p.message} or left out)`,
      });
    } else {
      const value = at(csv, e.instancePath);
      const unquoted =
        e.keyword === 'type' && (e.params as { type: string }).type === 'string' && typeof value !== 'object';
      // YAML reads an unquoted 1.5 or true as a number or boolean.
      errors.push(unquoted ? { ...p, message: `${p.message}; quote it in YAML ("${String(value)}")` } : p);
    }
  }
  return { errors: dedupe(errors), warnings: dedupe(warnings) };
}

/** The value at a JSON pointer. */
function at(value: unknown, pointer: string): unknown {
  let v = value;
  for (const raw of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.field ?? ''}\n${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
