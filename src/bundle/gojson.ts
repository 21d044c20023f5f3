/**
 * JSON exactly as Go's encoding/json writes a Kubernetes object held as a map (what `opm render`
 * base64-encodes into `olm.bundle.object`): compact, object keys sorted at every level, and `<`,
 * `>`, `&`, U+2028, U+2029 escaped. Producing the same bytes as opm keeps rendered catalogs
 * identical whichever tool rendered them.
 */

const ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};
const NEEDS_ESCAPE = /[<>&\u2028\u2029]/;
const ESCAPE_ALL = /[<>&\u2028\u2029]/g;

/**
 * Native JSON.stringify over a copy with sorted keys is about twice as fast as assembling the
 * text in JavaScript; the escapes Go adds are rare, so they are a second pass only when needed.
 */
export function goJson(value: unknown): string {
  const json = JSON.stringify(sortedCopy(value)) ?? 'null';
  return NEEDS_ESCAPE.test(json) ? json.replace(ESCAPE_ALL, (c) => ESCAPES[c]!) : json;
}

function sortedCopy(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(sortedCopy);
  const obj = v as Record<string, unknown>;
  // Go sorts map keys by bytes; for the ASCII keys of manifests that is plain code-unit order.
  const keys = Object.keys(obj).sort();
  // No prototype, so a `__proto__` key from a manifest stays a key.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of keys) out[k] = sortedCopy(obj[k]);
  return out;
}
