/**
 * Versions and version ranges as the resolver reads them.
 *
 * Bundle versions are semver (`olm.package` `version`). Ranges in `olm.package.required` use npm
 * `semver` syntax, which covers what OLM's blang ranges are used for in practice (`>=1.0.0 <2.0.0`,
 * `||`, and a bare version meaning exactly that version). Prereleases are compared plainly, like
 * blang does, rather than npm's "only when the comparator names the same x.y.z" rule.
 */
import semver, { type SemVer } from 'semver';

// The same version and range strings recur across a catalog's packages (1.0.0, >=1.0.0 <2.0.0);
// parsed values are immutable here, so each string is parsed once. Bounded so that a long-running
// manager that sees many catalogs does not grow without limit.
const CACHE_LIMIT = 50_000;
const versions = new Map<string, SemVer | null>();
const ranges = new Map<string, VersionRange | null>();

function cached<T>(cache: Map<string, T>, text: string, parse: (t: string) => T): T {
  const hit = cache.get(text);
  if (hit !== undefined || cache.has(text)) return hit as T;
  if (cache.size >= CACHE_LIMIT) cache.clear();
  const value = parse(text);
  cache.set(text, value);
  return value;
}

/** Parses a bundle version; `null` when it is not semver. */
export function parseVersion(text: string | undefined): SemVer | null {
  if (text === undefined || text === '') return null;
  return cached(versions, text, (t) => semver.parse(t, { loose: true }));
}

export type VersionRange = semver.Range;

/** Parses a version range; `null` when it does not parse. */
export function parseRange(text: string): VersionRange | null {
  return cached(ranges, text, (t) => {
    try {
      return new semver.Range(t, { loose: true, includePrerelease: true });
    } catch {
      return null;
    }
  });
}

export function inRange(version: SemVer, range: VersionRange): boolean {
  return range.test(version);
}

/** Orders versions newest first; unparsable versions sort after every real one. */
export function compareNewestFirst(a: SemVer | null, b: SemVer | null): number {
  if (a && b) return semver.compareBuild(b, a);
  if (a) return -1;
  if (b) return 1;
  return 0;
}

/**
 * Normalises a version the way OLM's `semver_compare` CEL function does before comparing
 * (blang/semver `ParseTolerant`): trim spaces, drop one leading `v`, pad `1` and `1.2` to three
 * parts, and drop leading zeros from the numeric parts.
 */
export function parseTolerant(text: string): SemVer | null {
  let s = text.trim();
  if (s.startsWith('v')) s = s.slice(1);
  const cut = s.search(/[-+]/);
  const core = cut === -1 ? s : s.slice(0, cut);
  const rest = cut === -1 ? '' : s.slice(cut);
  const parts = core.split('.');
  if (parts.length === 0 || parts.length > 3 || parts.some((p) => !/^\d+$/.test(p))) return null;
  while (parts.length < 3) parts.push('0');
  const normalised = parts.map((p) => p.replace(/^0+(?=\d)/, '')).join('.') + rest;
  return semver.parse(normalised);
}
