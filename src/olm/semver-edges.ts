/**
 * Upgrade edges by version alone, for channels whose bundles declare none.
 *
 * `semverTemplateEdges` is the rule of opm v1.73's semver template (`opm alpha render-template
 * semver`, since v1.57 and v1.61): one archetype's bundles are sorted by version and walked
 * major by major; in a major, the newest entry of each Y-stream (major.minor), its "Z max",
 * replaces the Z max of the Y-stream before it and skips every other earlier entry of the major.
 * Other entries get no edges, and nothing links one major to the next. A bundle has the same
 * edges in the major channel (`stable-v1`) and in its minor channel (`stable-v1.2`), so a minor
 * channel's head replaces the previous minor channel's head, which is not in its channel.
 *
 * `newestEntryEdges` is Bosun's rule for a channel of any other name when a newest version is
 * published into it: it replaces the Z max of the previous Y-stream of the channel and skips
 * the earlier entries of its own Y-stream.
 */
import type { ChannelEntry } from '../apis/fbc.js';
import { compareVersions, type Version } from './version.js';

export interface VersionedName {
  readonly name: string;
  readonly version: Version;
}

export type Edges = Pick<ChannelEntry, 'replaces' | 'skips'>;

/** opm's edges for each bundle of one archetype; bundles with none are left out of the map. */
export function semverTemplateEdges(members: readonly VersionedName[]): Map<string, Edges> {
  const sorted = [...members].sort((x, y) => compareVersions(x.version, y.version));
  const edges = new Map<string, Edges>();
  let earlier: string[] = [];
  let previousZMax: string | undefined;
  for (let i = 0; i < sorted.length; i++) {
    const m = sorted[i]!;
    const next = sorted[i + 1];
    const before = sorted[i - 1];
    if (before && before.version.major !== m.version.major) {
      earlier = [];
      previousZMax = undefined;
    }
    const zMax = !next || next.version.major !== m.version.major || next.version.minor !== m.version.minor;
    if (zMax) {
      // opm writes skips as a sorted set, without the entry it replaces.
      const skips = earlier.filter((n) => n !== previousZMax).sort();
      const e: Edges = {
        ...(previousZMax ? { replaces: previousZMax } : {}),
        ...(skips.length ? { skips } : {}),
      };
      if (e.replaces || e.skips) edges.set(m.name, e);
      previousZMax = m.name;
    }
    earlier.push(m.name);
  }
  return edges;
}

/** The edges of `newest` published after `members` into a channel (see the module comment). */
export function newestEntryEdges(members: readonly VersionedName[], newest: VersionedName): Edges {
  const sameY = (m: VersionedName) =>
    m.version.major === newest.version.major && m.version.minor === newest.version.minor;
  const sorted = [...members].sort((x, y) => compareVersions(x.version, y.version));
  const skips = sorted.filter(sameY).map((m) => m.name);
  const replaces = sorted.filter((m) => !sameY(m) && compareVersions(m.version, newest.version) < 0).at(-1);
  return {
    ...(replaces ? { replaces: replaces.name } : {}),
    ...(skips.length ? { skips } : {}),
  };
}
