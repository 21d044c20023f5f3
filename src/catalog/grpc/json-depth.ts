/**
 * How deep JSON text nests, read before it is parsed: JSON.parse itself copes with deep nesting,
 * but every recursive walk after it (schema checks, JSON.stringify, the YAML writer) overflows the
 * stack on a value nested some 10^4 levels, which takes only as many bytes. Pure.
 */

/**
 * The deepest nesting of arrays and objects in `text` (a scalar alone is 0, `[1]` is 1), or
 * `limit + 1` as soon as it goes past `limit`. Brackets inside strings do not count; text that
 * is not JSON gets some answer, and JSON.parse then refuses it.
 */
export function jsonNestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped, quote or not
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return limit + 1;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}
