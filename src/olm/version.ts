/**
 * Versions and version ranges with the meaning OLM gives them. OLM and opm read bundle versions,
 * `skipRange` (`olm.skipRange`) and `olm.package.required` `versionRange` with Go's
 * github.com/blang/semver/v4, so this module reads them exactly as that library does, quirks
 * included: a catalog means what OLM would make of it, not what a tidier grammar would.
 *
 * - Versions are strict SemVer 2.0 (`Parse`): no leading `v`, no missing parts, no leading
 *   zeros, numbers up to 2^64-1. Build metadata does not count when ordering.
 * - Ranges (`ParseRange`): comparators separated by spaces are ANDed, a `||` token separates
 *   alternatives, prereleases are ordinary versions, `x` wildcards expand as blang expands them.
 *   node-semver's syntax (`^`, `~`, `1.0`, `v1.0.0`) is refused.
 * - `parseTolerant` is blang's `ParseTolerant`, used by the CEL function `semver_compare` and for
 *   a CSV's `spec.version`.
 *
 * The tokenizing rules below follow blang's algorithm step by step because its edge cases are
 * observable: an operator followed by spaces stays with its version (`>= 1.0.0`), a token of a
 * single ASCII character is dropped, `||` counts only as a token of its own, and any token
 * containing a lower-case `x` goes through wildcard expansion. test/unit/olm/ checks this module
 * against blang itself (tools/blang-semver).
 */

/** A numeric part: a plain number while it is exact, a bigint above 2^53 (blang allows 2^64-1). */
export type VersionNumber = number | bigint;

/** A prerelease identifier: numeric identifiers as numbers, the others as text. */
export type PrereleaseId = VersionNumber | string;

export interface Version {
  readonly major: VersionNumber;
  readonly minor: VersionNumber;
  readonly patch: VersionNumber;
  readonly prerelease: readonly PrereleaseId[];
  readonly build: readonly string[];
  /** The version as written (for a strict parse, the text itself: nothing is normalised). */
  readonly text: string;
}

export type ComparatorOp = '=' | '!=' | '>' | '>=' | '<' | '<=';

export interface Comparator {
  readonly op: ComparatorOp;
  readonly version: Version;
}

/** A parsed range: any of the AND-groups of comparators holds. */
export interface Range {
  readonly source: string;
  readonly anyOf: readonly (readonly Comparator[])[];
  /** True when `v` is in the range; a string that is not a strict version is in no range. */
  test(v: Version | string): boolean;
}

export type RangeResult = { ok: true; range: Range } | { ok: false; message: string };
export type VersionResult = { ok: true; version: Version } | { ok: false; message: string };

// ---- parse caches ----

// Catalogs repeat the same version and range strings (1.0.0, >=1.0.0 <2.0.0) across packages and
// parsed values are immutable, so each string is parsed once. Bounded so that a manager watching
// many catalogs for a long time does not grow without limit.
const CACHE_LIMIT = 50_000;
const versionCache = new Map<string, VersionResult>();
const rangeCache = new Map<string, RangeResult>();

function cached<T>(cache: Map<string, T>, text: string, parse: (t: string) => T): T {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  if (cache.size >= CACHE_LIMIT) cache.clear();
  const value = parse(text);
  cache.set(text, value);
  return value;
}

// ---- versions ----

/** Reads a strict SemVer 2.0 version as blang's `Parse` does, with a message when it is not one. */
export function readVersion(text: string): VersionResult {
  if (typeof text !== 'string') return { ok: false, message: 'is not a string' };
  return cached(versionCache, text, parseStrict);
}

/** A strict SemVer 2.0 version, or `undefined` when blang's `Parse` refuses the text. */
export function parseVersion(text: string | undefined): Version | undefined {
  if (text === undefined) return undefined;
  const r = readVersion(text);
  return r.ok ? r.version : undefined;
}

export function isVersion(text: unknown): text is string {
  return typeof text === 'string' && readVersion(text).ok;
}

/**
 * blang's `ParseTolerant`: trims white space, drops one leading `v`, drops leading zeros and
 * fills `1` and `1.2` up to three parts; then parses strictly.
 */
export function parseTolerant(text: string): Version | undefined {
  let s = goTrimSpace(text);
  if (s.startsWith('v')) s = s.slice(1);
  const parts = splitN(s, '.', 3).map((p) => {
    if (p.length <= 1) return p;
    const trimmed = p.replace(/^0+/, '');
    return trimmed === '' || !/^[0-9]/.test(trimmed) ? `0${trimmed}` : trimmed;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1]!)) return undefined;
    while (parts.length < 3) parts.push('0');
  }
  const r = parseStrict(parts.join('.'));
  return r.ok ? r.version : undefined;
}

const UINT64_MAX = 18_446_744_073_709_551_615n;
const DIGITS = /^[0-9]*$/;
const ALPHANUM = /^[0-9A-Za-z-]*$/;

/** A decimal part as blang's `strconv.ParseUint(s, 10, 64)` reads it; `undefined` when it fails. */
function uint64(s: string): VersionNumber | undefined {
  if (s === '' || !DIGITS.test(s)) return undefined;
  if (s.length <= 15) return Number(s);
  const n = BigInt(s);
  if (n > UINT64_MAX) return undefined;
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

const hasLeadingZero = (s: string) => s.length > 1 && s[0] === '0';

function parseStrict(s: string): VersionResult {
  const fail = (message: string): VersionResult => ({ ok: false, message });
  if (s === '') return fail('is empty');
  const parts = splitN(s, '.', 3);
  if (parts.length !== 3) return fail(`"${s}" is not a version of the form major.minor.patch`);
  const numbers: VersionNumber[] = [];
  const names = ['major', 'minor'] as const;
  for (const [i, name] of names.entries()) {
    const p = parts[i]!;
    if (!DIGITS.test(p)) return fail(`"${s}": the ${name} number "${p}" is not a number`);
    if (hasLeadingZero(p)) return fail(`"${s}": the ${name} number "${p}" has a leading zero`);
    const n = uint64(p);
    if (n === undefined) return fail(`"${s}": the ${name} number "${p}" is empty or too large`);
    numbers.push(n);
  }
  let patchText = parts[2]!;
  let build: string[] = [];
  let prerelease: string[] = [];
  const plus = patchText.indexOf('+');
  if (plus !== -1) {
    build = patchText.slice(plus + 1).split('.');
    patchText = patchText.slice(0, plus);
  }
  const dash = patchText.indexOf('-');
  if (dash !== -1) {
    prerelease = patchText.slice(dash + 1).split('.');
    patchText = patchText.slice(0, dash);
  }
  if (!DIGITS.test(patchText)) return fail(`"${s}": the patch number "${patchText}" is not a number`);
  if (hasLeadingZero(patchText)) return fail(`"${s}": the patch number "${patchText}" has a leading zero`);
  const patch = uint64(patchText);
  if (patch === undefined) return fail(`"${s}": the patch number "${patchText}" is empty or too large`);

  const pre: PrereleaseId[] = [];
  for (const id of prerelease) {
    if (id === '') return fail(`"${s}": a prerelease identifier is empty`);
    if (DIGITS.test(id)) {
      if (hasLeadingZero(id)) return fail(`"${s}": the prerelease identifier "${id}" has a leading zero`);
      const n = uint64(id);
      if (n === undefined) return fail(`"${s}": the prerelease identifier "${id}" is too large`);
      pre.push(n);
    } else if (ALPHANUM.test(id)) pre.push(id);
    else return fail(`"${s}": the prerelease identifier "${id}" may only hold [0-9A-Za-z-]`);
  }
  for (const id of build) {
    if (id === '') return fail(`"${s}": a build metadata identifier is empty`);
    if (!ALPHANUM.test(id)) return fail(`"${s}": the build metadata "${id}" may only hold [0-9A-Za-z-]`);
  }
  return {
    ok: true,
    version: { major: numbers[0]!, minor: numbers[1]!, patch, prerelease: pre, build, text: s },
  };
}

// ---- ordering ----

const cmpNumber = (a: VersionNumber, b: VersionNumber): number => (a < b ? -1 : a > b ? 1 : 0);

function cmpPrereleaseId(a: PrereleaseId, b: PrereleaseId): number {
  const an = typeof a !== 'string';
  const bn = typeof b !== 'string';
  if (an && bn) return cmpNumber(a, b);
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function toVersion(v: Version | string): Version | undefined {
  return typeof v === 'string' ? parseVersion(v) : v;
}

/**
 * SemVer precedence as blang's `Compare`: build metadata does not count. A string that is not a
 * version is a bug in the caller here, so it throws.
 */
export function compareVersions(a: Version | string, b: Version | string): number {
  if (typeof a === 'object' && typeof b === 'object') return compareParsed(a, b);
  const x = toVersion(a);
  const y = toVersion(b);
  if (!x || !y) throw new Error(`compareVersions: "${String(x ? b : a)}" is not a semver version`);
  return compareParsed(x, y);
}

// Numeric parts are canonical (a number while exact, else a bigint), so `!==` is exact here.
function compareParsed(x: Version, y: Version): number {
  if (x.major !== y.major) return x.major < y.major ? -1 : 1;
  if (x.minor !== y.minor) return x.minor < y.minor ? -1 : 1;
  if (x.patch !== y.patch) return x.patch < y.patch ? -1 : 1;
  if (x.prerelease.length === 0 && y.prerelease.length === 0) return 0;
  return comparePrerelease(x.prerelease, y.prerelease);
}

function comparePrerelease(a: readonly PrereleaseId[], b: readonly PrereleaseId[]): number {
  // A release outranks its prereleases.
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : a.length === 0 ? 1 : -1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = cmpPrereleaseId(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Newest first, for choosing among candidates; a missing version sorts after every real one.
 * Precedence ignores build metadata; here it then breaks ties (numeric identifiers by value), so
 * that two builds of one version still have a fixed order.
 */
export function compareNewestFirst(a: Version | null, b: Version | null): number {
  if (a && b) return compareVersions(b, a) || compareBuild(b.build, a.build);
  if (a) return -1;
  if (b) return 1;
  return 0;
}

function compareBuild(a: readonly string[], b: readonly string[]): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = DIGITS.test(x);
    const yn = DIGITS.test(y);
    if (xn && yn) return cmpNumber(BigInt(x), BigInt(y));
    if (xn) return -1;
    if (yn) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** The version without its build metadata, the part that orders it (`1.2.3-rc.1+abc` → `1.2.3-rc.1`). */
export function versionCore(v: Version): string {
  const base = `${v.major}.${v.minor}.${v.patch}`;
  return v.prerelease.length === 0 ? base : `${base}-${v.prerelease.join('.')}`;
}

// ---- ranges ----

/** Parses a range as blang's `ParseRange` does; the message says why it does not parse. */
export function parseRange(text: string): RangeResult {
  if (typeof text !== 'string') return { ok: false, message: 'is not a string' };
  return cached(rangeCache, text, parseRangeUncached);
}

/** True when `v` satisfies the range (the resolver's predicate over versions). */
export function inRange(v: Version, range: Range): boolean {
  return range.test(v);
}

function parseRangeUncached(source: string): RangeResult {
  const fail = (message: string): RangeResult => ({ ok: false, message: `${message} in range "${source}"` });
  const tokens = splitAndTrim(source);
  if (tokens.length === 0) return fail('there is no comparator');
  if (tokens[0] === '||') return fail('"||" comes first');
  if (tokens[tokens.length - 1] === '||') return fail('"||" comes last');
  const alternatives: string[][] = [[]];
  for (const t of tokens) {
    if (t === '||') alternatives.push([]);
    else alternatives[alternatives.length - 1]!.push(t);
  }
  // blang accepts `a || || b` but its range then calls a missing function, and panics, for any
  // version outside `a`. Nobody writes that on purpose; it is refused.
  if (alternatives.some((a) => a.length === 0)) return fail('two "||" with nothing between them');

  const anyOf: Comparator[][] = [];
  for (const alt of alternatives) {
    const expanded: string[] = [];
    for (const token of alt) {
      const e = expandWildcard(token);
      if (typeof e === 'string') return fail(e);
      expanded.push(...e);
    }
    const group: Comparator[] = [];
    for (const token of expanded) {
      const c = readComparator(token);
      if (typeof c === 'string') return fail(c);
      group.push(c);
    }
    anyOf.push(group);
  }
  const range: Range = {
    source,
    anyOf,
    test: (v) => {
      const version = toVersion(v);
      return version !== undefined && anyOf.some((g) => g.every((c) => holds(c, version)));
    },
  };
  return { ok: true, range };
}

function holds(c: Comparator, v: Version): boolean {
  const cmp = compareParsed(v, c.version);
  switch (c.op) {
    case '=':
      return cmp === 0;
    case '!=':
      return cmp !== 0;
    case '>':
      return cmp > 0;
    case '>=':
      return cmp >= 0;
    case '<':
      return cmp < 0;
    case '<=':
      return cmp <= 0;
  }
}

/**
 * Splits on spaces, except after `>`, `<` or `=` (so `>= 1.0.0` is one token), then removes the
 * spaces inside each token. A piece of one ASCII character is dropped, as blang drops it: `! 1.0.0`
 * therefore reads as `1.0.0`. Only the space character separates; a tab stays in its token.
 */
function splitAndTrim(s: string): string[] {
  const out: string[] = [];
  const keep = (piece: string) => {
    if (piece.length >= 2 || (piece.length === 1 && piece.charCodeAt(0) >= 0x80))
      out.push(piece.replaceAll(' ', ''));
  };
  let last = 0;
  let lastChar = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === ' ' && lastChar !== '>' && lastChar !== '<' && lastChar !== '=') {
      keep(s.slice(last, i));
      last = i + 1;
    } else if (ch !== ' ') lastChar = ch;
  }
  keep(s.slice(last));
  return out;
}

/** Splits a token at its first digit into operator (white space trimmed) and version. */
function splitOperator(token: string): { op: string; version: string } | undefined {
  const i = token.search(/\p{Nd}/u);
  if (i === -1) return undefined;
  return { op: goTrimSpace(token.slice(0, i)), version: token.slice(i) };
}

/**
 * blang's wildcard expansion, for any token containing a lower-case `x` (`X` and `*` are not
 * wildcards). `1.2.x` and `1.x` become bounds: `>=1.2.x` → `>=1.2.0`, `>1.2.x` → `>=1.3.0`,
 * `<1.2.x` → `<1.2.0`, `<=1.2.x` → `<1.3.0`, `1.2.x` → `>=1.2.0 <1.3.0`. Its quirks are kept
 * because OLM has them: `1.x.x` is read like `1.0.x` (`>=1.0.0 <1.1.0`); `!=1.x` becomes
 * `<1.0.0 >=2.0.0`, ANDed, so it matches nothing; an unknown operator before a wildcard is
 * dropped (`~1.x` reads as `=1.0.0`); an `x` elsewhere (a prerelease `-alpha.x`) is replaced by
 * `0` as if it were a wildcard.
 */
function expandWildcard(token: string): string[] | string {
  if (!token.includes('x')) return [token];
  const parts = splitOperator(token);
  if (!parts) return `"${token}" has no version`;
  const { op, version } = parts;
  const pieces = version.split('.');
  const kind = pieces[pieces.length - 1] === 'x' && pieces.length <= 3 ? pieces.length : 0;
  const flat = flatten(version);
  const out: string[] = [];
  let resultOp = '';
  let increment = false;
  switch (op) {
    case '>':
      resultOp = '>=';
      increment = true;
      break;
    case '>=':
      resultOp = '>=';
      break;
    case '<':
      resultOp = '<';
      break;
    case '<=':
      resultOp = '<';
      increment = true;
      break;
    case '':
    case '=':
    case '==':
      out.push(`>=${flat}`);
      resultOp = '<';
      increment = true;
      break;
    case '!=':
    case '!':
      out.push(`<${flat}`);
      resultOp = '>=';
      increment = true;
      break;
  }
  let bound = flat;
  if (increment) {
    // When the last part is not an `x` (`1.x.3`, `1.2.3-x`) there is nothing to increment: the
    // bound is empty and the token is refused when read as a comparator, as blang refuses it.
    bound = kind === 3 ? (incrementPart(flat, 1) ?? '') : kind === 2 ? (incrementPart(flat, 0) ?? '') : '';
  }
  out.push(resultOp + bound);
  return out;
}

/** `1.2.x` → `1.2.0`, `1.x` → `1.0.0`, `1.x.x` → `1.0.0` (blang's `createVersionFromWildcard`). */
function flatten(version: string): string {
  const v = version.replace('.x.x', '.x').replace('.x', '.0');
  return v.split('.').length === 2 ? `${v}.0` : v;
}

/** Adds one to dot-separated part `i` as Go's `strconv.Atoi`/`Itoa` would; `undefined` when Atoi fails. */
function incrementPart(version: string, i: number): string | undefined {
  const parts = version.split('.');
  const p = parts[i];
  if (p === undefined || !/^[+-]?[0-9]+$/.test(p)) return undefined;
  const n = BigInt(p);
  if (n > 9_223_372_036_854_775_807n || n < -9_223_372_036_854_775_808n) return undefined;
  parts[i] = BigInt.asIntN(64, n + 1n).toString();
  return parts.join('.');
}

const OPERATORS: Readonly<Record<string, ComparatorOp>> = {
  '': '=',
  '=': '=',
  '==': '=',
  '!': '!=',
  '!=': '!=',
  '>': '>',
  '>=': '>=',
  '<': '<',
  '<=': '<=',
};

function readComparator(token: string): Comparator | string {
  const parts = splitOperator(token);
  if (!parts) return `"${token}" has no version`;
  const op = Object.hasOwn(OPERATORS, parts.op) ? OPERATORS[parts.op] : undefined;
  if (op === undefined)
    return `"${token}": "${parts.op}" is not a comparison (use =, !=, >, >=, <, <= or none for =)`;
  const v = parseStrict(parts.version);
  if (!v.ok) return `"${token}": ${v.message}`;
  return { op, version: v.version };
}

// ---- Go string helpers ----

/** `strings.SplitN(s, sep, n)`. */
function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i === -1) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}

// Go's unicode.IsSpace: JavaScript's \s without U+FEFF, plus U+0085.
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const GO_TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'g');

/** `strings.TrimSpace`. */
function goTrimSpace(s: string): string {
  return s.replace(GO_TRIM, '');
}
