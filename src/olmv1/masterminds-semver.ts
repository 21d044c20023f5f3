/**
 * Versions and version ranges as OLM v1 reads a ClusterExtension's `spec.source.catalog.version`:
 * Masterminds/semver v3.3.1 (`NewVersion`, `NewConstraint`, `Constraints.Check`), the library
 * operator-controller v1.2.0 uses. Not blang's grammar (src/olm/version.ts), which v0 and v1's
 * skipRange use: here `^`, `~`, `x`/`X`/`*` wildcards, partial versions (`1.2`), hyphen ranges
 * (`1.2 - 1.4`), comma or space for AND and `||` for OR, and a prerelease matches only a
 * constraint that names a prerelease.
 *
 * The grammar is Masterminds' regular expressions, but a range is checked with a linear scan, not
 * with its validating expression: that one is ambiguous around whitespace, harmless under Go's
 * linear regexp engine and exponential under JavaScript's backtracking one. The scan accepts
 * exactly what the expression does: items `<op> <version>` separated by spaces or a comma. The
 * hyphen-range expression that remains is quadratic at worst under a backtracking engine, so a
 * range longer than MAX_RANGE_LENGTH is refused before it runs (the ClusterExtension CRD already
 * refuses more than 64 characters; the limit guards callers that did not go through it).
 */

export interface MmVersion {
  readonly major: bigint;
  readonly minor: bigint;
  readonly patch: bigint;
  /** The prerelease, dot-separated, as written ('' when none). */
  readonly pre: string;
  readonly metadata: string;
}

const U64_MAX = (1n << 64n) - 1n;

// version.go's semVerRegex, anchored.
const versionRe =
  /^v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Masterminds' `NewVersion` (loose: `v` prefix and missing minor or patch allowed), or undefined. */
export function parseMmVersion(text: string): MmVersion | undefined {
  const m = versionRe.exec(text);
  if (!m) return undefined;
  const [major, minor, patch] = [m[1]!, m[2] ?? '0', m[3] ?? '0'].map(BigInt) as [bigint, bigint, bigint];
  if (major > U64_MAX || minor > U64_MAX || patch > U64_MAX) return undefined;
  return { major, minor, patch, pre: m[4] ?? '', metadata: m[5] ?? '' };
}

/** Masterminds' `Compare`: build metadata does not count. */
export function compareMm(a: MmVersion, b: MmVersion): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  if (a.pre === '' && b.pre === '') return 0;
  if (a.pre === '') return 1;
  if (b.pre === '') return -1;
  return comparePrerelease(a.pre, b.pre);
}

function comparePrerelease(a: string, b: string): number {
  const as = a.split('.');
  const bs = b.split('.');
  for (let i = 0; i < Math.max(as.length, bs.length); i++) {
    const d = comparePrePart(as[i] ?? '', bs[i] ?? '');
    if (d !== 0) return d;
  }
  return 0;
}

const UINT = /^\d+$/;

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return -1;
  if (o === '') return 1;
  // strconv.ParseUint: digits only, within 64 bits; anything else compares as text.
  const sn = UINT.test(s) && BigInt(s) <= U64_MAX;
  const on = UINT.test(o) && BigInt(o) <= U64_MAX;
  if (!sn && !on) return s > o ? 1 : -1;
  if (!on) return -1;
  if (!sn) return 1;
  return BigInt(s) > BigInt(o) ? 1 : -1;
}

// ---- constraints ----

type Op = '' | '=' | '!=' | '>' | '<' | '>=' | '=>' | '<=' | '=<' | '~' | '~>' | '^';
const OPS = new Set<string>(['', '=', '!=', '>', '<', '>=', '=>', '<=', '=<', '~', '~>', '^']);

interface Constraint {
  op: Op;
  con: MmVersion;
  dirty: boolean;
  minorDirty: boolean;
  patchDirty: boolean;
}

/** A parsed range: any of the AND-groups holds. */
export interface MmConstraints {
  readonly anyOf: readonly (readonly Constraint[])[];
}

export type ConstraintsResult = { ok: true; value: MmConstraints } | { ok: false; message: string };

// Go's `\s` is ASCII whitespace without \v; JavaScript's is wider.
const WS = '[\\t\\n\\f\\r ]';
const CV =
  'v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?';
const cvAnchored = new RegExp(`^${CV}$`);
// constraintRangeRegex: `a - b` becomes `>= a, <= b`.
const hyphenRange = new RegExp(`${WS}*(${CV})${WS}+-${WS}+(${CV})${WS}*`, 'g');
const isWs = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';
const OP_CHARS = /[=!<>~^]/;
const CV_CHARS = /[0-9A-Za-z|*.+-]/;

export const MAX_RANGE_LENGTH = 1024;

/**
 * Masterminds' `NewConstraint`. The message is its error's text (`improper constraint: <part>`,
 * the part as split, spaces kept), which v1 puts after `desired version range "<range>" is invalid: `.
 */
export function parseMmConstraints(text: string): ConstraintsResult {
  if (text.length > MAX_RANGE_LENGTH)
    return {
      ok: false,
      message: `longer than ${MAX_RANGE_LENGTH} characters (spec.source.catalog.version allows 64)`,
    };
  const rewritten = rewriteRange(text);
  const anyOf: Constraint[][] = [];
  for (const part of rewritten.split('||')) {
    const items = scanItems(part);
    if (!items) return { ok: false, message: `improper constraint: ${part}` };
    const and: Constraint[] = [];
    for (const [op, cv] of items) {
      const c = parseConstraint(op, cv);
      if (!c) return { ok: false, message: 'constraint Parser Error' };
      and.push(c);
    }
    anyOf.push(and);
  }
  return { ok: true, value: { anyOf } };
}

function rewriteRange(text: string): string {
  let out = text;
  for (const m of text.matchAll(hyphenRange)) {
    // strings.Replace(o, match, t, 1): the first occurrence of the matched text.
    const i = out.indexOf(m[0]);
    if (i >= 0) out = `${out.slice(0, i)}>= ${m[1]}, <= ${m[11]} ${out.slice(i + m[0].length)}`;
  }
  return out;
}

/**
 * The items of one `||` part as [op, version], or undefined where Masterminds'
 * validConstraintRegex would not match. Linear: an op is the run of operator characters before
 * the version, a version the run of version characters, which must match Masterminds' pattern in
 * full (a shorter match would leave a version character where a separator must be).
 */
function scanItems(part: string): [string, string][] | undefined {
  const items: [string, string][] = [];
  let i = 0;
  const skipWs = () => {
    const from = i;
    while (isWs(part[i])) i++;
    return i - from;
  };
  skipWs();
  for (;;) {
    const opFrom = i;
    while (i < part.length && OP_CHARS.test(part[i]!)) i++;
    const op = part.slice(opFrom, i);
    if (!OPS.has(op)) return undefined;
    skipWs();
    const cvFrom = i;
    while (i < part.length && CV_CHARS.test(part[i]!)) i++;
    const cv = part.slice(cvFrom, i);
    if (!cvAnchored.test(cv)) return undefined;
    items.push([op, cv]);
    const spaces = skipWs();
    if (i === part.length) return items;
    if (part[i] === ',') {
      i++;
      skipWs();
    } else if (spaces === 0) return undefined;
  }
}

const isX = (s: string | undefined) => s === 'x' || s === 'X' || s === '*';

function parseConstraint(op: string, cv: string): Constraint | undefined {
  const m = cvAnchored.exec(cv)!;
  const major = m[1]!;
  const minor = m[2] ?? '';
  const patch = m[3] ?? '';
  const pre = m[4] ?? '';
  let ver = cv;
  let dirty = false;
  let minorDirty = false;
  let patchDirty = false;
  if (isX(major)) {
    ver = `0.0.0${pre}`;
    dirty = true;
  } else if (isX(minor.slice(1)) || minor === '') {
    minorDirty = dirty = true;
    ver = `${major}.0.0${pre}`;
  } else if (isX(patch.slice(1)) || patch === '') {
    patchDirty = dirty = true;
    ver = `${major}${minor}.0${pre}`;
  }
  const con = parseMmVersion(ver);
  if (!con) return undefined;
  return { op: op as Op, con, dirty, minorDirty, patchDirty };
}

/** Masterminds' `Constraints.Check`. */
export function checkMm(cs: MmConstraints, v: MmVersion): boolean {
  return cs.anyOf.some((and) => and.every((c) => checkOne(c, v)));
}

function checkOne(c: Constraint, v: MmVersion): boolean {
  // A prerelease satisfies only constraints that name one (Masterminds issue 21); `!=` checks
  // this only for a wildcard constraint.
  const preExcluded = v.pre !== '' && c.con.pre === '';
  const cmp = () => compareMm(v, c.con);
  switch (c.op) {
    case '!=':
      return notEqual(c, v);
    case '>':
      if (preExcluded) return false;
      if (!c.dirty) return cmp() === 1;
      if (v.major !== c.con.major) return v.major > c.con.major;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > c.con.minor;
      return cmp() === 1;
    case '<':
      return !preExcluded && cmp() < 0;
    case '>=':
    case '=>':
      return !preExcluded && cmp() >= 0;
    case '<=':
    case '=<':
      if (preExcluded) return false;
      if (!c.dirty) return cmp() <= 0;
      if (v.major > c.con.major) return false;
      return !(v.major === c.con.major && v.minor > c.con.minor && !c.minorDirty);
    case '~':
    case '~>':
      return !preExcluded && tilde(c, v);
    case '':
    case '=':
      if (preExcluded) return false;
      return c.dirty ? tilde(c, v) : cmp() === 0;
    case '^':
      return !preExcluded && caret(c, v);
  }
}

function tilde(c: Constraint, v: MmVersion): boolean {
  if (compareMm(v, c.con) < 0) return false;
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty)
    return true;
  if (v.major !== c.con.major) return false;
  return v.minor === c.con.minor || c.minorDirty;
}

function caret(c: Constraint, v: MmVersion): boolean {
  if (compareMm(v, c.con) < 0) return false;
  if (c.con.major > 0n || c.minorDirty) return v.major === c.con.major;
  if (v.major > 0n) return false;
  if (c.con.minor > 0n || c.patchDirty) return v.minor === c.con.minor;
  if (v.minor > 0n) return false;
  return c.con.patch === v.patch;
}

function notEqual(c: Constraint, v: MmVersion): boolean {
  if (c.dirty) {
    if (v.pre !== '' && c.con.pre === '') return false;
    if (c.con.major !== v.major) return true;
    if (c.con.minor !== v.minor && !c.minorDirty) return true;
    if (c.minorDirty) return false;
    if (c.con.patch !== v.patch && !c.patchDirty) return true;
    if (c.patchDirty) {
      if (v.pre !== '' || c.con.pre !== '') return comparePrerelease(v.pre, c.con.pre) !== 0;
      return false;
    }
  }
  return compareMm(v, c.con) !== 0;
}
