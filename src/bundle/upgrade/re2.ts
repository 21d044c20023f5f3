/**
 * Whether a schema's `pattern` compiles as the API server compiles it: with Go's regexp package,
 * which speaks RE2 syntax. JavaScript's RegExp is no judge of that (it refuses Go's inline flags
 * such as `(?i)` and accepts lookarounds and backreferences, which RE2 refuses), so this scans for
 * what RE2 refuses that authors of JSON-schema patterns commonly write. A pattern that passes may
 * still be refused for a reason not scanned for; the API server has the last word.
 */

/** Escapes RE2 knows (besides escaped punctuation, which is always a literal). */
const knownEscapes = new Set([...'afnrtvdDsSwWbBAzpPQEx0123456789']);

/** RE2's limit on `{n}` and `{n,m}` counts. */
const maxRepeat = 1000;

/** Why Go's regexp would refuse `pattern`, or undefined when the scan finds nothing. */
export function re2Problem(pattern: string): string | undefined {
  let inClass = false;
  // The token before: a greedy repetition may be made lazy by one `?`; any other repetition of
  // a repetition is "invalid nested repetition" to RE2.
  let last: 'other' | 'greedy' | 'lazy' = 'other';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) return 'ends with a lone backslash';
      if (/[1-9]/.test(next) && !inClass && !/[0-7]/.test(pattern[i + 2] ?? '')) {
        return `\\${next} is a backreference, which RE2 does not support`;
      }
      if (/[A-Za-z0-9]/.test(next) && !knownEscapes.has(next)) {
        return `\\${next} is not an escape RE2 knows`;
      }
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        i = end < 0 ? pattern.length : end + 1;
      } else i++;
      last = 'other';
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      // A `]` right after `[` or `[^` is a literal member, not the end of the class.
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++;
      last = 'other';
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2);
      if (/^(=|!|<=|<!)/.test(rest))
        return 'lookaround assertions ((?=, (?!, (?<=, (?<!) are not supported by RE2';
      if (rest.startsWith('>')) return 'atomic groups ((?>...)) are not supported by RE2';
      if (rest.startsWith('#')) return 'comments ((?#...)) are not supported by RE2';
    }
    let repeat: string | undefined;
    if (c === '*' || c === '+' || c === '?') repeat = c;
    else if (c === '{') repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))?.[0];
    if (repeat === undefined) {
      last = 'other';
      continue;
    }
    if (repeat === '?' && last === 'greedy') {
      last = 'lazy';
      continue;
    }
    if (last !== 'other')
      return `${pattern.slice(Math.max(0, i - 1), i + repeat.length)} is a nested repetition, which RE2 refuses`;
    const counts = (repeat.match(/\d+/g) ?? []).map(Number);
    if (counts.some((n) => n > maxRepeat)) return `${repeat} repeats more than ${maxRepeat} times`;
    i += repeat.length - 1;
    last = 'greedy';
  }
  if (inClass) return 'has a character class that is not closed';
  return undefined;
}
