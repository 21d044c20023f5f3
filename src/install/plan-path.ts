/**
 * The path an upgrade takes through a channel, and why: from the installed CSV to the plan's, each
 * hop the channel entry whose edge reaches the version before it, by `replaces`, by `skips` or by
 * `skipRange` (the installed version is in the range). Pure: channel entries and versions in, the
 * shortest path out (fewest hops; among equally short ones, replaces before skips before
 * skipRange, then the channel's order), or none when the channel does not lead there.
 */
import type { ChannelEntry } from '../apis/fbc.js';
import { parseRange } from '../olm/version.js';

export const EdgeKind = {
  Replaces: 'replaces',
  Skips: 'skips',
  SkipRange: 'skipRange',
} as const;
export type EdgeKind = (typeof EdgeKind)[keyof typeof EdgeKind];

const EDGE_RANK: Record<EdgeKind, number> = { replaces: 0, skips: 1, skipRange: 2 };

/** One hop: the channel entry `to` upgrades `from` by its `via` edge. */
export interface PathHop {
  from: string;
  to: string;
  via: EdgeKind;
  /** For a skipRange hop: the range, as the entry writes it. */
  skipRange?: string;
}

export interface PathChannel {
  name: string;
  entries: readonly ChannelEntry[];
}

export interface UpgradePath {
  channel: string;
  hops: PathHop[];
}

export interface PathInput {
  /** The package's channels that list `to`, in order of preference (the default channel first). */
  channels: readonly PathChannel[];
  /** The installed CSV. It need not be an entry any more. */
  from: string;
  /** The CSV the plan installs. */
  to: string;
  /** A bundle's version (the catalog's, or the installed CSV's), for skipRange. */
  versionOf: (name: string) => string | undefined;
}

/** The edge by which `entry` upgrades the CSV named `name` (of version `version`), if any. */
export function edgeFrom(
  entry: ChannelEntry,
  name: string,
  version: string | undefined,
): Omit<PathHop, 'from' | 'to'> | undefined {
  if (entry.replaces === name) return { via: EdgeKind.Replaces };
  if (entry.skips?.includes(name)) return { via: EdgeKind.Skips };
  if (entry.skipRange !== undefined && version !== undefined) {
    const range = parseRange(entry.skipRange);
    if (range.ok && range.range.test(version)) return { via: EdgeKind.SkipRange, skipRange: entry.skipRange };
  }
  return undefined;
}

/** The shortest path from `from` to `to` in one channel, breadth first; undefined if there is none. */
export function channelPath(
  entries: readonly ChannelEntry[],
  from: string,
  to: string,
  versionOf: (name: string) => string | undefined,
): PathHop[] | undefined {
  if (from === to) return entries.some((e) => e.name === to) ? [] : undefined;
  const reachedBy = new Map<string, PathHop>();
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const at = queue[i]!;
    const version = versionOf(at);
    const next = entries
      .map((entry, order) => ({ entry, order, edge: edgeFrom(entry, at, version) }))
      .filter((n) => n.edge !== undefined && n.entry.name !== from && !reachedBy.has(n.entry.name))
      .sort((a, b) => EDGE_RANK[a.edge!.via] - EDGE_RANK[b.edge!.via] || a.order - b.order);
    for (const { entry, edge } of next) {
      if (reachedBy.has(entry.name)) continue; // an entry listed twice
      reachedBy.set(entry.name, { from: at, to: entry.name, ...edge! });
      if (entry.name === to) return walkBack(reachedBy, from, to);
      queue.push(entry.name);
    }
  }
  return undefined;
}

function walkBack(reachedBy: ReadonlyMap<string, PathHop>, from: string, to: string): PathHop[] {
  const hops: PathHop[] = [];
  for (let at = to; at !== from;) {
    const hop = reachedBy.get(at)!;
    hops.unshift(hop);
    at = hop.from;
  }
  return hops;
}

/** The shortest path over the channels given; of equally short ones, the earlier channel's. */
export function upgradePath(input: PathInput): UpgradePath | undefined {
  let best: UpgradePath | undefined;
  for (const channel of input.channels) {
    const hops = channelPath(channel.entries, input.from, input.to, input.versionOf);
    if (hops !== undefined && (best === undefined || hops.length < best.hops.length))
      best = { channel: channel.name, hops };
  }
  return best;
}

/** A hop in one line: `a.v1 -> a.v2 (replaces)`, `a.v1 -> a.v3 (skipRange >=1.0.0 <3.0.0)`. */
export function describeHop(hop: PathHop): string {
  const why = hop.via === EdgeKind.SkipRange ? `skipRange ${hop.skipRange ?? ''}` : hop.via;
  return `${hop.from} -> ${hop.to} (${why})`;
}
