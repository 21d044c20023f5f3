/**
 * Versions and version ranges as the resolver reads them.
 *
 * Bundle versions are semver (`olm.package` `version`). Ranges in `olm.package.required` use npm
 * `semver` syntax, which covers what OLM's blang ranges are used for in practice (`>=1.0.0 <2.0.0`,
 * `||`, and a bare version meaning exactly that version). Prereleases are compared plainly, like
 * blang does, rather than npm's "only when the comparator names the same x.y.z" rule.
 */
import semver, { type SemVer } from 'semver';

/** Parses a bundle version; `null` when it is not semver. */
export function parseVersion(text: string | undefined): SemVer | null {
  if (text === undefined || text === '') return null;
  return semver.parse(text, { loose: true });
}

export type VersionRange = semver.Range;

/** Parses a version range; `null` when it does not parse. */
export function parseRange(text: string): VersionRange | null {
  try {
    return new semver.Range(text, { loose: true, includePrerelease: true });
  } catch {
    return null;
  }
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
