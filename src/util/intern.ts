/**
 * One copy of each long string value in a tree of plain data. Values that arrive from a worker
 * thread or a parser are fresh strings even when equal: the corpus catalog repeats the same
 * description, examples and icon across the versions of a package (one description 69 times), about
 * 5 MiB of the manager's heap held twice or more. `table` is shared by every tree that may repeat
 * one another's values.
 */
export function internStrings<T>(value: T, table: Map<string, string>, minLength = 64): T {
  const intern = (s: string): string => {
    if (s.length < minLength) return s;
    const held = table.get(s);
    if (held !== undefined) return held;
    table.set(s, s);
    return s;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return intern(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = walk(v[i]);
    } else if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) o[k] = walk(o[k]);
    }
    return v;
  };
  return walk(value) as T;
}
