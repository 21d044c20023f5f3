/**
 * The upgrade edges opm's semver template gives a channel (`opm alpha render-template semver`):
 * entries sorted by version and grouped by Y-stream (major.minor); the last entry of each group,
 * its "Z max", skips every earlier entry of its group and, when an earlier group exists, replaces
 * that group's Z max and skips it too. With `avoidSkipPatch` (an option of earlier opm releases)
 * every entry replaces the one before it and nothing is skipped.
 *
 * The semver template renders whole channels with it; publishing adds one newest version with
 * the same rule, so that a published channel looks as if the template had rendered it.
 */
import type { ChannelEntry } from '../apis/fbc.js';
import { compareVersions, type Version } from './version.js';

export interface VersionedName {
  readonly name: string;
  readonly version: Version;
}

/** The channel's entries with the semver template's edges, lowest version first. */
export function semverChannelEdges(
  members: readonly VersionedName[],
  avoidSkipPatch = false,
): ChannelEntry[] {
  const sorted = [...members].sort((x, y) => compareVersions(x.version, y.version));
  const entries: ChannelEntry[] = sorted.map((m) => ({ name: m.name }));
  if (avoidSkipPatch) {
    for (let i = 1; i < entries.length; i++) entries[i]!.replaces = entries[i - 1]!.name;
    return entries;
  }
  const yStream = (m: VersionedName) => `${m.version.major}.${m.version.minor}`;
  let previousZMax: string | undefined;
  let start = 0;
  while (start < sorted.length) {
    let end = start;
    while (end + 1 < sorted.length && yStream(sorted[end + 1]!) === yStream(sorted[start]!)) end++;
    const zmax = entries[end]!;
    const skips = entries.slice(start, end).map((e) => e.name);
    if (previousZMax) {
      zmax.replaces = previousZMax;
      skips.unshift(previousZMax);
    }
    if (skips.length) zmax.skips = skips;
    previousZMax = zmax.name;
    start = end + 1;
  }
  return entries;
}
