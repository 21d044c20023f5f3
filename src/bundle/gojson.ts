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

/** Thrown by sortedCopy when an object has a key that JavaScript would not keep in sorted order. */
const UNORDERABLE = Symbol('unorderable');

/**
 * Native JSON.stringify over a sorted view of the value is about twice as fast as assembling the
 * text in JavaScript; the escapes Go adds are rare, so they are a second pass only when needed.
 */
export function goJson(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(sortedCopy(value)) ?? 'null';
  } catch (err) {
    if (err !== UNORDERABLE) throw err;
    json = written(value);
  }
  return NEEDS_ESCAPE.test(json) ? json.replace(ESCAPE_ALL, (c) => ESCAPES[c]!) : json;
}

/**
 * The value with every object's keys in sorted order. Objects (and arrays) whose keys are already
 * sorted and whose members need no change are returned as they are; most of a manifest is.
 */
function sortedCopy(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      const c = sortedCopy(item);
      if (out) out.push(c);
      else if (c !== item) (out = v.slice(0, i)).push(c);
    }
    return out ?? v;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    // JavaScript enumerates integer-like keys ("9", "10") first and in numeric order, whatever
    // order they were set in; Go sorts them as text ("10" before "9"). Such objects are written
    // by hand instead (a key starting with a digit is enough to take that path).
    const c = k.charCodeAt(0);
    if (c >= 0x30 && c <= 0x39) throw UNORDERABLE;
    if (i > 0 && keys[i - 1]! > k) inOrder = false;
  }
  // Go sorts map keys by bytes; for the ASCII keys of manifests that is plain code-unit order.
  if (!inOrder) keys.sort();
  // No prototype, so a `__proto__` key from a manifest stays a key.
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const member = obj[k];
    const c = sortedCopy(member);
    if (!out && (c !== member || !inOrder)) {
      out = Object.create(null) as Record<string, unknown>;
      for (let j = 0; j < i; j++) out[keys[j]!] = obj[keys[j]!];
    }
    if (out) out[k] = c;
  }
  return out ?? v;
}

/** The same text written member by member: slower, and right for any keys. */
function written(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(written).join(',')}]`;
  const obj = v as Record<string, unknown>;
  const members: string[] = [];
  for (const k of Object.keys(obj).sort()) {
    const member = obj[k];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    members.push(`${JSON.stringify(k)}:${written(member)}`);
  }
  return `{${members.join(',')}}`;
}
