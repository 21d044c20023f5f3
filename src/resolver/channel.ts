/**
 * A channel's upgrade graph. Entries are ordered by the replaces chain from the head (the one
 * entry no other entry replaces or skips); entries that another entry skips are not candidates.
 * Two heads, no head, or a replaces cycle make the channel unusable, with a message naming it.
 */
import type { ChannelDoc, ChannelEntry } from '../apis/fbc.js';

export interface ChannelGraph {
  package: string;
  name: string;
  entries: ReadonlyMap<string, ChannelEntry>;
  head: string | null;
  /** Candidate bundle names, head first: the replaces chain without skipped entries. */
  order: string[];
  /** For each skipped entry, the entry that skips it. */
  skippedBy: ReadonlyMap<string, string>;
  /** Why the channel cannot be used, if it cannot. */
  problem: string | null;
}

export function analyzeChannel(doc: Pick<ChannelDoc, 'package' | 'name' | 'entries'>): ChannelGraph {
  const entries = new Map<string, ChannelEntry>();
  for (const e of doc.entries ?? []) if (!entries.has(e.name)) entries.set(e.name, e);

  const skippedBy = new Map<string, string>();
  const pointedAt = new Set<string>();
  for (const e of entries.values()) {
    if (e.replaces && e.replaces !== e.name && entries.has(e.replaces)) pointedAt.add(e.replaces);
    for (const s of e.skips ?? []) {
      if (s === e.name || !entries.has(s)) continue;
      pointedAt.add(s);
      // Name one skipper, the same one whatever the order of the entries.
      const known = skippedBy.get(s);
      if (known === undefined || e.name < known) skippedBy.set(s, e.name);
    }
  }
  const where = `channel ${doc.name} of package ${doc.package}`;
  const base = { package: doc.package, name: doc.name, entries, skippedBy };
  if (entries.size === 0) return { ...base, head: null, order: [], problem: `${where} has no entries` };

  const heads = [...entries.keys()].filter((n) => !pointedAt.has(n)).sort();
  if (heads.length === 0) {
    return {
      ...base,
      head: null,
      order: [],
      problem: `${where} has no head: every entry is replaced or skipped by another, so the upgrade graph has a cycle`,
    };
  }
  if (heads.length > 1) {
    return {
      ...base,
      head: null,
      order: [],
      problem: `${where} has ${heads.length} heads (${heads.join(', ')}): its entries must form one replaces chain`,
    };
  }

  const head = heads[0]!;
  const chain: string[] = [];
  const seen = new Set<string>();
  for (
    let at: string | undefined = head;
    at !== undefined && entries.has(at);
    at = entries.get(at)?.replaces
  ) {
    if (seen.has(at)) {
      return {
        ...base,
        head,
        order: [],
        problem: `${where} has a replaces cycle: ${[...chain, at].join(' -> ')}`,
      };
    }
    seen.add(at);
    chain.push(at);
  }
  return { ...base, head, order: chain.filter((n) => !skippedBy.has(n)), problem: null };
}
