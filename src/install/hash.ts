/**
 * Deterministic hashes of plain data, for generated object names and the Deployment spec hash.
 * Both must come out the same on every re-plan and in every process, so the input is serialised
 * with object keys sorted (JSON.stringify alone follows insertion order, which depends on how an
 * object was built).
 */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level; `undefined` fields are left out, as JSON does. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v)));
  if (value !== null && typeof value === 'object') {
    // No prototype: a key named `__proto__` (legal in JSON and YAML) must stay a key.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** The first `length` hex digits of the SHA-256 of the value's stable serialisation. */
export function shortHash(value: unknown, length = 10): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex').slice(0, length);
}

/** Object names Bosun generates stay within 63 characters, as OLM's do (so they also fit in labels). */
export const MaxGeneratedNameLength = 63;

/**
 * `<base>-<hash of identity>`, with `base` cut short when the whole would pass 63 characters.
 * The identity is whatever makes the object what it is (e.g. the CSV name and the permission it
 * grants), so a re-plan of the same bundle yields the same name and a changed grant a new one.
 */
export function generatedName(base: string, identity: unknown): string {
  const hash = shortHash(identity);
  const room = MaxGeneratedNameLength - hash.length - 1;
  const trimmed = base.length > room ? base.slice(0, room).replace(/[-.]+$/, '') : base;
  return `${trimmed}-${hash}`;
}
