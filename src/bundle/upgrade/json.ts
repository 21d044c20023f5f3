/** Plain JSON values as manifests hold them, and the few helpers the converters share. */

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isJsonObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A deep copy that keeps only JSON values (dropping `undefined`, functions and the like). */
export function cloneJson<T>(v: T): T {
  return structuredClone(v);
}

/** `a.b` for a key that reads as an identifier, `a["b.c"]` otherwise, so paths stay readable. */
export function childPath(path: string, key: string): string {
  const safe = /^[A-Za-z_$][\w$-]*$/.test(key);
  if (path === '') return safe ? key : `[${JSON.stringify(key)}]`;
  return safe ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

export function describeJson(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** A value as a message shows it: strings as they are, anything else as JSON. */
export function show(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? typeof v;
  } catch {
    return typeof v;
  }
}
