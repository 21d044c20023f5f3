/**
 * Property values normally arrive decoded (FBC is JSON or YAML); OLM's gRPC registry API carries
 * them as JSON text instead, so a string that holds a JSON object or list is decoded too.
 */
export function decode(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return v;
  try {
    return JSON.parse(t);
  } catch {
    return v;
  }
}
