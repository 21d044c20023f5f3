/**
 * The bundle predicates of operator-controller v1.2.0's resolver
 * (internal/operator-controller/catalogmetadata/filter): in one of the asked channels, in the
 * version range, and a successor of the installed bundle. Each reads a bundle's version as v1's
 * bundleutil.GetVersion does: blang's strict parse of its `olm.package` property.
 */
import type { BundleDoc, ChannelDoc, PackageProperty } from '../apis/fbc.js';
import type { BundleMetadata } from '../apis/olmv1.js';
import { parseRange, parseVersion, type Version, versionCore } from '../olm/version.js';
import { checkMm, type MmConstraints, parseMmConstraints, parseMmVersion } from './masterminds-semver.js';

export type BundlePredicate = (b: BundleDoc) => boolean;

/** The bundle's version (its first `olm.package` property's), or undefined when it has none or it does not parse. */
export function bundleVersion(b: BundleDoc): Version | undefined {
  const prop = b.properties?.find((p) => p.type === 'olm.package');
  const version = (prop?.value as Partial<PackageProperty> | undefined)?.version;
  return typeof version === 'string' ? parseVersion(version) : undefined;
}

/** blang's `Version.String()`. */
export function versionString(v: Version): string {
  return v.build.length === 0 ? versionCore(v) : `${versionCore(v)}+${v.build.join('.')}`;
}

export const inAnyChannel =
  (channels: readonly ChannelDoc[]): BundlePredicate =>
  (b) =>
    channels.some((ch) => (ch.entries ?? []).some((e) => e.name === b.name));

export const inMastermindsRange =
  (range: MmConstraints): BundlePredicate =>
  (b) => {
    const v = bundleVersion(b);
    const mm = v && parseMmVersion(versionString(v));
    return mm !== undefined && checkMm(range, mm);
  };

/**
 * v1's SuccessorsOf: a bundle whose entry in one of `channels` replaces or skips the installed
 * bundle, or whose skipRange (read with blang, as v0 reads it) holds the installed version; or
 * the installed version itself. Only direct successors: v1 never walks along the chain.
 */
export function successorsOf(
  installed: BundleMetadata,
  channels: readonly ChannelDoc[],
): { ok: true; value: BundlePredicate } | { ok: false; message: string } {
  const mm = parseMmVersion(installed.version);
  if (!mm)
    return {
      ok: false,
      message: `parsing installed bundle "${installed.name}" version "${installed.version}": Invalid Semantic Version`,
    };
  const sameVersion = parseMmConstraints(mmString(mm));
  const blang = parseVersion(installed.version);
  if (!sameVersion.ok || !blang)
    return { ok: false, message: `getting successorsPredicate: error parsing installed bundle version` };
  const isSuccessor = (e: ChannelDoc['entries'][number]) => {
    if (e.replaces === installed.name) return true;
    if ((e.skips ?? []).includes(installed.name)) return true;
    if (e.skipRange) {
      const r = parseRange(e.skipRange);
      if (r.ok && r.range.test(blang)) return true;
    }
    return false;
  };
  const successor: BundlePredicate = (b) =>
    channels.some((ch) => (ch.entries ?? []).some((e) => e.name === b.name && isSuccessor(e)));
  const same = inMastermindsRange(sameVersion.value);
  return { ok: true, value: (b) => successor(b) || same(b) };
}

function mmString(v: { major: bigint; minor: bigint; patch: bigint; pre: string; metadata: string }): string {
  return `${v.major}.${v.minor}.${v.patch}${v.pre ? `-${v.pre}` : ''}${v.metadata ? `+${v.metadata}` : ''}`;
}
