/**
 * A Subscription's candidates, OLM's way: its package in its channel of its catalog, or in every
 * channel of the package when `spec.channel` is empty (the default channel first, then the others
 * by name). Within a channel, candidates follow the replaces chain from the head, entries that
 * another entry skips left out, so a fresh install prefers the head and falls back down the chain
 * when the head cannot be installed. `startingCSV` asks for exactly one bundle. An installed
 * operator gets the entries that upgrade it, in the same order, and then staying where it is;
 * never a downgrade (where Bosun departs from OLM on purpose).
 */
import type { CatalogIndex, PackageInfo } from './catalog-index.js';
import { missingBundle, toEntry } from './catalog-index.js';
import type { ChannelGraph } from './catalog-index.js';
import type { ResolveContext } from './context.js';
import type { Entry } from './model.js';
import { and, bundleNamed, newerThan, successorOf } from './predicates.js';
import { type SubscriptionObligation, subscriptionBlame } from './search.js';
import type { SubscriptionInput } from './types.js';

export function subscriptionObligation(ctx: ResolveContext, sub: SubscriptionInput): SubscriptionObligation {
  const catalog = { name: sub.source, namespace: sub.sourceNamespace };
  const installed = ctx.installed.get(sub.package) ?? null;
  const base = {
    kind: 'subscription' as const,
    sub,
    catalog,
    installed,
    origin: subscriptionBlame(sub.name),
  };
  // Whatever else is wrong, an installed operator may always stay where it is.
  const none = (channel: string, note: string): SubscriptionObligation => ({
    ...base,
    channel,
    candidates: installed ? [installed] : [],
    note,
  });

  const cat = ctx.findCatalog(catalog);
  if (!cat) {
    const known = ctx.catalogs.map((c) => `${c.info.key.namespace}/${c.info.key.name}`).join(', ') || 'none';
    return none(
      sub.channel ?? '',
      `catalog ${catalog.namespace}/${catalog.name} (spec.source, spec.sourceNamespace) is not one the namespace can use (it can use: ${known})`,
    );
  }
  const pkg = cat.packages.get(sub.package);
  if (!pkg)
    return none(sub.channel ?? '', `catalog ${catalog.name} has no package ${sub.package} (spec.name)`);

  const graphs = channelsOf(pkg, sub.channel);
  // The channel reports name: the one asked for, else the one tried first.
  const channelName = sub.channel || graphs[0]?.name || '';
  if (graphs.length === 0) {
    if (!sub.channel) return none('', `package ${sub.package} in catalog ${catalog.name} has no channels`);
    const known = [...pkg.channels.keys()].sort().join(', ');
    return none(
      channelName,
      `package ${sub.package} in catalog ${catalog.name} has no channel ${channelName} (it has: ${known})`,
    );
  }
  const broken = graphs.find((g) => g.problem);
  if (broken) return none(channelName, `${broken.problem} (catalog ${catalog.name})`);
  const entries = graphs.flatMap((g) => cat.channelEntries.get(pkg.name)?.get(g.name) ?? []);

  if (installed) {
    const successors = entries.filter(
      and(
        successorOf({ name: installed.bundle.name, version: installed.bundle.version }),
        newerThan(installed.bundle.version),
      ),
    );
    return { ...base, channel: channelName, candidates: [...successors, installed] };
  }

  if (sub.startingCSV) {
    const named = startingEntries(cat, pkg, graphs, entries, sub.startingCSV);
    if (named.length === 0) {
      const where = sub.channel ? `channel ${channelName}` : 'any channel';
      return none(
        channelName,
        `spec.startingCSV ${sub.startingCSV} is not an entry of ${where} of package ${sub.package} in catalog ${catalog.name}`,
      );
    }
    return { ...base, channel: channelName, candidates: named };
  }

  if (entries.length === 0) {
    return none(channelName, `channel ${channelName} of package ${sub.package} has no entries`);
  }
  return { ...base, channel: channelName, candidates: entries };
}

/** The channels a Subscription draws from: the one it names, or all, the default first. */
function channelsOf(pkg: PackageInfo, channel: string | undefined): ChannelGraph[] {
  if (channel) {
    const g = pkg.channels.get(channel);
    return g ? [g] : [];
  }
  return [...pkg.channels.values()].sort(
    (a, b) =>
      Number(b.name === pkg.defaultChannel) - Number(a.name === pkg.defaultChannel) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}

/**
 * The entries named `startingCSV`, one per channel that lists it. startingCSV names a bundle
 * exactly, even one its channel's head skips over; such an entry is off the chain, and like OLM
 * Bosun installs it but never counts it as a provider for another bundle's requirement.
 */
function startingEntries(
  cat: CatalogIndex,
  pkg: PackageInfo,
  graphs: ChannelGraph[],
  entries: Entry[],
  name: string,
): Entry[] {
  const out: Entry[] = [];
  for (const graph of graphs) {
    const onChain = entries.find(and(bundleNamed(name), (e) => e.channel === graph.name));
    if (onChain) out.push(onChain);
    else if (graph.entries.has(name)) {
      const bundle = cat.bundles.get(name) ?? missingBundle(name, pkg.name);
      const rank = graph.order.length;
      out.push({
        ...toEntry(cat.info, graph, name, rank, bundle, graph.name === pkg.defaultChannel),
        offChain: true,
      });
    }
  }
  return out;
}
