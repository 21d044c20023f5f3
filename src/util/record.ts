/** A JSON object (a map), as opposed to a list, a scalar or null. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
