/**
 * The upgrade graph of one channel, with opm's rules (operator-registry `model.Channel.Head` and
 * `validateReplacesChain`, which `opm validate` and `opm serve` apply):
 *
 * - The head is the one entry that no entry replaces or skips. An entry's edges to itself count:
 *   an entry that replaces or skips itself is never a head.
 * - From the head, the replaces chain is walked until it reaches a name some entry skips (that
 *   edge is disregarded), a name outside the channel (the tail may replace an entry that is not
 *   there), or a name already on the chain (a cycle).
 * - Every entry is on that chain or skipped by some entry; the others are stranded.
 * - `skipRange` is not an edge for heads and stranding; it is one for upgrades (`canReach`).
 *
 * The candidates a channel offers, head first, are its chain without the skipped entries.
 * Validation reports the graph's problems; the resolver uses its head and order.
 */

/** What the graph needs of a channel entry (`olm.channel` `entries[]`). */
export interface GraphEntry {
  readonly name: string;
  readonly replaces?: string | undefined;
  readonly skips?: readonly string[] | undefined;
  readonly skipRange?: string | undefined;
}

export interface ChannelGraph<E extends GraphEntry = GraphEntry> {
  /** Entries by name; of two entries with one name, the first. */
  readonly entries: ReadonlyMap<string, E>;
  /** Entries that nothing replaces or skips, sorted by name. */
  readonly heads: readonly string[];
  /** The single head, or null when there is none or more than one. */
  readonly head: string | null;
  /** The replaces chain from the head, as opm walks it (empty without a single head). */
  readonly chain: readonly string[];
  /** The chain's cycle as opm reports it, names along it with the repeated name last; or null. */
  readonly chainCycle: readonly string[] | null;
  /** Candidates, head first: the chain without skipped entries (empty when the chain has a cycle). */
  readonly order: readonly string[];
  /** For each skipped entry of the channel, one entry that skips it (the smallest name). */
  readonly skippedBy: ReadonlyMap<string, string>;
  /** Entries neither on the chain nor skipped, sorted (computed only with a single head and no cycle). */
  readonly stranded: readonly string[];
}

/** Entries that no entry replaces or skips, sorted (opm's `Head`, before it counts them). */
export function channelHeads(entries: Iterable<GraphEntry>): string[] {
  const list = [...entries];
  const incoming = new Set<string>();
  for (const e of list) {
    if (e.replaces) incoming.add(e.replaces);
    for (const s of e.skips ?? []) incoming.add(s);
  }
  return [...new Set(list.map((e) => e.name).filter((n) => !incoming.has(n)))].sort();
}

export function channelGraph<E extends GraphEntry>(list: Iterable<E>): ChannelGraph<E> {
  const entries = new Map<string, E>();
  for (const e of list) if (!entries.has(e.name)) entries.set(e.name, e);

  const skippedBy = new Map<string, string>();
  for (const e of entries.values()) {
    for (const s of e.skips ?? []) {
      if (!entries.has(s)) continue;
      // Name one skipper, the same one whatever the order of the entries.
      const known = skippedBy.get(s);
      if (known === undefined || e.name < known) skippedBy.set(s, e.name);
    }
  }
  const skippedAnywhere = new Set([...entries.values()].flatMap((e) => e.skips ?? []));

  const heads = channelHeads(entries.values());
  const head = heads.length === 1 ? heads[0]! : null;
  const chain: string[] = [];
  let chainCycle: string[] | null = null;
  if (head !== null) {
    const onChain = new Set<string>();
    for (let at: E | undefined = entries.get(head); at;) {
      chain.push(at.name);
      onChain.add(at.name);
      const next = at.replaces;
      if (!next || skippedAnywhere.has(next)) break;
      if (onChain.has(next)) {
        chainCycle = [...chain.slice(chain.indexOf(next)), next];
        break;
      }
      at = entries.get(next);
    }
  }
  const order = chainCycle ? [] : chain.filter((n) => !skippedBy.has(n));
  const stranded =
    head !== null && chainCycle === null
      ? [...entries.keys()].filter((n) => !chain.includes(n) && !skippedAnywhere.has(n)).sort()
      : [];
  return { entries, heads, head, chain, chainCycle, order, skippedBy, stranded };
}

/** Every cycle of replaces edges among the entries, each once, starting at its smallest name. */
export function replacesCycles(entries: ReadonlyMap<string, GraphEntry>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  for (const start of [...entries.keys()].sort()) {
    if (done.has(start)) continue;
    const path: string[] = [];
    const onPath = new Map<string, number>();
    let cur: string | undefined = start;
    while (cur !== undefined && entries.has(cur) && !done.has(cur)) {
      if (onPath.has(cur)) {
        const loop = path.slice(onPath.get(cur));
        const min = loop.indexOf([...loop].sort()[0]!);
        const rotated = [...loop.slice(min), ...loop.slice(0, min)];
        cycles.push([...rotated, rotated[0]!]);
        break;
      }
      onPath.set(cur, path.length);
      path.push(cur);
      cur = entries.get(cur)!.replaces;
    }
    for (const n of path) done.add(n);
  }
  return cycles;
}

/** Why a channel's graph is not one opm accepts: one message per rule broken. */
export function channelGraphProblems(graph: ChannelGraph): string[] {
  const out: string[] = [];
  if (graph.entries.size === 0) return ['a channel needs at least one entry'];
  if (graph.heads.length === 0) {
    out.push('no channel head: every entry is replaced or skipped by another, so there is no latest version');
  } else if (graph.heads.length > 1) {
    out.push(
      `multiple channel heads: ${graph.heads.join(', ')}; exactly one entry may be left un-replaced and un-skipped`,
    );
  }
  const cycles = replacesCycles(graph.entries);
  for (const cycle of cycles) out.push(`replaces cycle: ${cycle.join(' -> ')}`);
  // Entries behind a cycle are stranded only because of it: the cycle is the thing to fix.
  if (cycles.length === 0 && graph.stranded.length > 0) {
    out.push(
      `stranded entries (not on the replaces chain from the head and not skipped): ${graph.stranded.join(', ')}`,
    );
  }
  return out;
}

/**
 * Entries from which `target` can be reached by following upgrade edges forwards: replaces,
 * skips, and skipRange where `inRange(entry, candidate)` says the candidate's version is in the
 * entry's range. Names outside `entries` may be reached (an installed version no longer listed).
 */
export function canReach<E extends GraphEntry>(
  entries: readonly E[],
  target: string,
  inRange: (entry: E, candidate: string) => boolean = () => false,
): Set<string> {
  // Backwards from the target, following "who can upgrade to me".
  const byName = new Map(entries.map((e) => [e.name, e]));
  const reached = new Set<string>([target]);
  const queue = [target];
  while (queue.length) {
    const cur = byName.get(queue.pop()!);
    if (!cur) continue;
    const sources = [cur.replaces, ...(cur.skips ?? [])].filter((s): s is string => !!s);
    if (cur.skipRange) for (const e of entries) if (inRange(cur, e.name)) sources.push(e.name);
    for (const s of sources) {
      if (!reached.has(s)) {
        reached.add(s);
        queue.push(s);
      }
    }
  }
  return reached;
}
