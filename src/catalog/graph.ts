/**
 * The upgrade graph of one channel, from its entries' replaces/skips edges, with opm's rules:
 * the head is the one entry nothing replaces or skips; from the head the replaces chain must
 * reach every entry that no entry skips (otherwise it is stranded); the chain has no cycle; its
 * tail may replace an entry that is not in the channel. `skipRange` edges do not count here: opm
 * ignores them for heads and stranding.
 */
import type { ChannelEntry } from '../apis/fbc.js';

export interface ChannelGraphCheck {
  heads: string[];
  /** Replaces cycles, each as the names along it, first name repeated at the end. */
  cycles: string[][];
  /** Entries the replaces chain from the single head does not reach and nothing skips. */
  stranded: string[];
}

/** Entries of a channel that no other entry replaces or skips, sorted. */
export function channelHeads(entries: readonly ChannelEntry[]): string[] {
  const incoming = new Set<string>();
  for (const e of entries) {
    if (e.replaces) incoming.add(e.replaces);
    for (const s of e.skips ?? []) incoming.add(s);
  }
  return [...new Set(entries.map((e) => e.name).filter((n) => !incoming.has(n)))].sort();
}

export function checkChannelGraph(entries: readonly ChannelEntry[]): ChannelGraphCheck {
  const byName = new Map(entries.map((e) => [e.name, e]));
  const heads = channelHeads(entries);
  const cycles = replacesCycles(byName);
  let stranded: string[] = [];
  if (heads.length === 1 && cycles.length === 0) {
    const reached = new Set<string>();
    for (
      let cur = byName.get(heads[0]!);
      cur && !reached.has(cur.name);
      cur = cur.replaces ? byName.get(cur.replaces) : undefined
    ) {
      reached.add(cur.name);
    }
    const skipped = new Set(entries.flatMap((e) => e.skips ?? []));
    stranded = [...byName.keys()].filter((n) => !reached.has(n) && !skipped.has(n)).sort();
  }
  return { heads, cycles, stranded };
}

/** Every cycle of replaces edges among the entries, each reported once, starting at its smallest name. */
export function replacesCycles(byName: ReadonlyMap<string, ChannelEntry>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  for (const start of [...byName.keys()].sort()) {
    if (done.has(start)) continue;
    const path: string[] = [];
    const onPath = new Map<string, number>();
    let cur: string | undefined = start;
    while (cur !== undefined && byName.has(cur) && !done.has(cur)) {
      if (onPath.has(cur)) {
        const loop = path.slice(onPath.get(cur));
        const min = loop.indexOf([...loop].sort()[0]!);
        const rotated = [...loop.slice(min), ...loop.slice(0, min)];
        cycles.push([...rotated, rotated[0]!]);
        break;
      }
      onPath.set(cur, path.length);
      path.push(cur);
      cur = byName.get(cur)!.replaces;
    }
    for (const n of path) done.add(n);
  }
  return cycles;
}

/**
 * Entries from which `target` can be reached by following upgrade edges forwards (replaces,
 * skips, and skipRange when `inRange` says a version matches). Used by diff to find versions left
 * with no way to the head.
 */
export function canReach(
  entries: readonly ChannelEntry[],
  target: string,
  inRange: (entry: ChannelEntry, candidate: string) => boolean = () => false,
): Set<string> {
  // Reverse search: from the target, follow "who can upgrade to me" edges backwards.
  const byName = new Map(entries.map((e) => [e.name, e]));
  const reached = new Set<string>([target]);
  const queue = [target];
  while (queue.length) {
    const cur = byName.get(queue.pop()!);
    if (!cur) continue;
    const sources = [cur.replaces, ...(cur.skips ?? [])].filter((s): s is string => !!s);
    for (const e of entries) if (cur.skipRange && inRange(cur, e.name)) sources.push(e.name);
    for (const s of sources) {
      if (!reached.has(s)) {
        reached.add(s);
        queue.push(s);
      }
    }
  }
  return reached;
}
