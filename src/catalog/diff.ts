/**
 * Comparing two catalogs, old and new, from the point of view of someone who has an operator
 * installed from the old one. Each change says whether it is breaking for them:
 *
 * - a removed package, channel or bundle;
 * - a stranded version: a version that was in a channel and, in the new catalog, has no upgrade
 *   path (replaces, skips, skipRange, step by step) to that channel's head: an install of it
 *   will never upgrade again (breaking);
 * - changed edges of an entry (breaking when an upgrade path from the old graph is gone, which
 *   the stranded check then names);
 * - a changed default channel or channel head, added packages, channels and bundles (not
 *   breaking).
 *
 * A removed bundle is breaking only when it is stranded: OLM can still upgrade an installed
 * version that is no longer in the catalog if some entry replaces, skips or covers it.
 * Pure: two DeclarativeConfigs in, a list of changes out.
 */
import type { BundleDoc, ChannelEntry, DeclarativeConfig } from '../apis/fbc.js';
import { canReach, channelHeads } from '../olm/channel-graph.js';
import { versionOf } from './publish.js';
import { parseRange } from '../olm/version.js';

export const ChangeKind = {
  PackageAdded: 'PackageAdded',
  PackageRemoved: 'PackageRemoved',
  DefaultChannelChanged: 'DefaultChannelChanged',
  ChannelAdded: 'ChannelAdded',
  ChannelRemoved: 'ChannelRemoved',
  HeadChanged: 'HeadChanged',
  BundleAdded: 'BundleAdded',
  BundleRemoved: 'BundleRemoved',
  EdgesChanged: 'EdgesChanged',
  Stranded: 'Stranded',
} as const;
export type ChangeKind = (typeof ChangeKind)[keyof typeof ChangeKind];

export interface Change {
  kind: ChangeKind;
  package: string;
  channel?: string;
  bundle?: string;
  breaking: boolean;
  message: string;
}

interface PkgView {
  defaultChannel?: string;
  channels: Map<string, ChannelEntry[]>;
  bundles: Map<string, BundleDoc>;
}

function view(cfg: DeclarativeConfig): Map<string, PkgView> {
  const out = new Map<string, PkgView>();
  const get = (name: string) => {
    let v = out.get(name);
    if (!v) {
      v = { channels: new Map(), bundles: new Map() };
      out.set(name, v);
    }
    return v;
  };
  for (const p of cfg.packages) {
    const v = get(p.name);
    if (p.defaultChannel) v.defaultChannel = p.defaultChannel;
  }
  for (const c of cfg.channels)
    get(c.package).channels.set(c.name, Array.isArray(c.entries) ? c.entries : []);
  for (const b of cfg.bundles) get(b.package).bundles.set(b.name, b);
  return out;
}

const sorted = <T>(xs: Iterable<T>) => [...xs].sort();

export function diffCatalogs(oldCfg: DeclarativeConfig, newCfg: DeclarativeConfig): Change[] {
  const before = view(oldCfg);
  const after = view(newCfg);
  const changes: Change[] = [];
  const add = (c: Change) => changes.push(c);

  for (const pkg of sorted(new Set([...before.keys(), ...after.keys()]))) {
    const o = before.get(pkg);
    const n = after.get(pkg);
    if (!o) {
      add({
        kind: ChangeKind.PackageAdded,
        package: pkg,
        breaking: false,
        message: `package ${pkg} was added`,
      });
      continue;
    }
    if (!n) {
      add({
        kind: ChangeKind.PackageRemoved,
        package: pkg,
        breaking: true,
        message: `package ${pkg} was removed: installs of it get no more upgrades`,
      });
      continue;
    }
    if (o.defaultChannel !== n.defaultChannel) {
      add({
        kind: ChangeKind.DefaultChannelChanged,
        package: pkg,
        breaking: false,
        message: `default channel of ${pkg} changed from ${o.defaultChannel ?? '(none)'} to ${n.defaultChannel ?? '(none)'}; existing subscriptions keep their channel`,
      });
    }
    for (const b of sorted(n.bundles.keys())) {
      if (!o.bundles.has(b))
        add({
          kind: ChangeKind.BundleAdded,
          package: pkg,
          bundle: b,
          breaking: false,
          message: `bundle ${b} was added`,
        });
    }
    const versions = new Map<string, string>();
    for (const [name, b] of [...o.bundles, ...n.bundles]) {
      const v = versionOf(b);
      if (v) versions.set(name, v);
    }
    const strandedBundles = new Set<string>();
    for (const ch of sorted(new Set([...o.channels.keys(), ...n.channels.keys()]))) {
      const oe = o.channels.get(ch);
      const ne = n.channels.get(ch);
      if (!oe) {
        add({
          kind: ChangeKind.ChannelAdded,
          package: pkg,
          channel: ch,
          breaking: false,
          message: `channel ${ch} was added`,
        });
        continue;
      }
      if (!ne) {
        add({
          kind: ChangeKind.ChannelRemoved,
          package: pkg,
          channel: ch,
          breaking: true,
          message: `channel ${ch} was removed: subscriptions to it get no more upgrades`,
        });
        continue;
      }
      diffChannel(pkg, ch, oe, ne, versions, add, strandedBundles);
    }
    for (const b of sorted(o.bundles.keys())) {
      if (n.bundles.has(b)) continue;
      const stranded = strandedBundles.has(b);
      add({
        kind: ChangeKind.BundleRemoved,
        package: pkg,
        bundle: b,
        breaking: stranded,
        message: stranded
          ? `bundle ${b} was removed and nothing in the new catalog upgrades from it`
          : `bundle ${b} was removed; installs of it can still upgrade`,
      });
    }
  }
  return changes;
}

function diffChannel(
  pkg: string,
  ch: string,
  oe: ChannelEntry[],
  ne: ChannelEntry[],
  versions: Map<string, string>,
  add: (c: Change) => void,
  strandedBundles: Set<string>,
): void {
  const oldHeads = channelHeads(oe);
  const newHeads = channelHeads(ne);
  if (oldHeads.join() !== newHeads.join()) {
    add({
      kind: ChangeKind.HeadChanged,
      package: pkg,
      channel: ch,
      breaking: false,
      message: `head of ${ch} changed from ${oldHeads.join(', ') || '(none)'} to ${newHeads.join(', ') || '(none)'}`,
    });
  }
  const newByName = new Map(ne.map((e) => [e.name, e]));
  for (const e of oe) {
    const now = newByName.get(e.name);
    if (!now) continue;
    const was = edgeText(e);
    const is = edgeText(now);
    if (was !== is) {
      add({
        kind: ChangeKind.EdgesChanged,
        package: pkg,
        channel: ch,
        bundle: e.name,
        breaking: false,
        message: `edges of ${e.name} in ${ch} changed from ${was || '(none)'} to ${is || '(none)'}`,
      });
    }
  }
  if (newHeads.length !== 1) return; // an invalid new channel: validation says why
  const head = newHeads[0]!;
  const inRange = (entry: ChannelEntry, candidate: string) => {
    const r = entry.skipRange ? parseRange(entry.skipRange) : undefined;
    const v = versions.get(candidate);
    return !!(r?.ok && v && r.range.test(v));
  };
  // Installed versions may be outside the new channel too: give the range check every old name.
  const universe = [...ne, ...oe.filter((e) => !newByName.has(e.name)).map((e) => ({ name: e.name }))];
  const upgradable = canReach(universe, head, inRange);
  for (const e of oe) {
    if (upgradable.has(e.name)) continue;
    strandedBundles.add(e.name);
    add({
      kind: ChangeKind.Stranded,
      package: pkg,
      channel: ch,
      bundle: e.name,
      breaking: true,
      message: `${e.name} was in ${ch} but has no upgrade path to its head ${head} any more`,
    });
  }
}

function edgeText(e: ChannelEntry): string {
  const parts: string[] = [];
  if (e.replaces) parts.push(`replaces ${e.replaces}`);
  if (e.skips?.length) parts.push(`skips ${[...e.skips].sort().join(', ')}`);
  if (e.skipRange) parts.push(`skipRange ${e.skipRange}`);
  return parts.join('; ');
}
