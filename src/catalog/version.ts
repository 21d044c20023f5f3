/**
 * Versions and ranges with the semantics OLM uses (Go's blang/semver): strict SemVer 2.0 versions
 * (no leading `v`, no missing parts), build metadata ignored when ordering, and ranges like
 * `>=1.2.0 <1.4.0 || 2.x` in which prereleases are ordinary versions. node-semver's own range
 * syntax differs (it excludes prereleases, knows `^`/`~`), so ranges are parsed here.
 */
import semver from 'semver';

export type Version = semver.SemVer;

/** Parses a strict SemVer 2.0 version; `undefined` when it is not one (e.g. `v1.0.0`, `1.0`). */
export function parseVersion(s: string): Version | undefined {
  if (typeof s !== 'string' || s === '' || s !== s.trim() || s.startsWith('v') || s.startsWith('='))
    return undefined;
  return semver.parse(s) ?? undefined;
}

export function isVersion(s: unknown): s is string {
  return typeof s === 'string' && parseVersion(s) !== undefined;
}

/** Orders versions by SemVer precedence (build metadata does not count). */
export function compareVersions(a: Version | string, b: Version | string): number {
  return semver.compare(a, b);
}

/** `major.minor` of a version, the Y-stream it belongs to. */
export function yStream(v: Version): string {
  return `${v.major}.${v.minor}`;
}

export type Comparator = { op: '=' | '!=' | '>' | '>=' | '<' | '<='; version: Version };

/** A parsed range: OR of AND-groups of comparators. */
export interface Range {
  source: string;
  anyOf: Comparator[][];
  /** True when `v` satisfies the range. Prereleases are compared like any other version. */
  test(v: Version | string): boolean;
}

/**
 * Parses a range as blang/semver's ParseRange does: comparators separated by spaces are ANDed,
 * `||` separates alternatives, an operator may be followed by spaces (`>= 1.0.0`), and `x` in
 * the minor or patch place is a wildcard (`1.x`, `>=1.2.x`).
 */
export function parseRange(source: string): { ok: true; range: Range } | { ok: false; message: string } {
  if (typeof source !== 'string' || source.trim() === '') return { ok: false, message: 'the range is empty' };
  const groups: Comparator[][] = [];
  for (const alt of source.split('||')) {
    const tokens = tokenize(alt);
    if (tokens.length === 0) return { ok: false, message: `empty alternative in range "${source}"` };
    const group: Comparator[] = [];
    for (const token of tokens) {
      const parsed = parseComparator(token);
      if (typeof parsed === 'string') return { ok: false, message: `${parsed} in range "${source}"` };
      group.push(...parsed);
    }
    groups.push(group);
  }
  const range: Range = {
    source,
    anyOf: groups,
    test: (v) => {
      const version = typeof v === 'string' ? parseVersion(v) : v;
      if (!version) return false;
      return groups.some((g) => g.every((c) => holds(c, version)));
    },
  };
  return { ok: true, range };
}

/** Splits on spaces, but keeps an operator together with the version after it. */
function tokenize(s: string): string[] {
  const raw = s.trim().split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (const t of raw) {
    const prev = out[out.length - 1];
    if (prev !== undefined && /^[<>=!]+$/.test(prev)) out[out.length - 1] = prev + t;
    else out.push(t);
  }
  return out;
}

const OPS = ['>=', '<=', '!=', '==', '>', '<', '=', '!'] as const;

function parseComparator(token: string): Comparator[] | string {
  const op = OPS.find((o) => token.startsWith(o)) ?? '';
  const text = token.slice(op.length);
  const norm = op === '==' || op === '' ? '=' : op === '!' ? '!=' : op;
  const wildcard = /^(\d+)\.(?:x|X|\*)(?:\.(?:x|X|\*))?$|^(\d+)\.(\d+)\.(?:x|X|\*)$/.exec(text);
  if (wildcard) {
    const major = Number(wildcard[1] ?? wildcard[2]);
    const minor = wildcard[3] !== undefined ? Number(wildcard[3]) : undefined;
    const low = parseVersion(`${major}.${minor ?? 0}.0`)!;
    const high = parseVersion(minor === undefined ? `${major + 1}.0.0` : `${major}.${minor + 1}.0`)!;
    switch (norm) {
      case '=':
        return [
          { op: '>=', version: low },
          { op: '<', version: high },
        ];
      case '>':
        return [{ op: '>=', version: high }];
      case '>=':
        return [{ op: '>=', version: low }];
      case '<':
        return [{ op: '<', version: low }];
      case '<=':
        return [{ op: '<', version: high }];
      default:
        // "not in [low, high)" cannot be one AND-group; it is rare enough to refuse.
        return `"${token}": a wildcard cannot be negated`;
    }
  }
  const version = parseVersion(text);
  if (!version) return `"${token}" is not a comparator with a full semver version (like >=1.2.0)`;
  return [{ op: norm as Comparator['op'], version }];
}

function holds(c: Comparator, v: Version): boolean {
  const cmp = semver.compare(v, c.version);
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
