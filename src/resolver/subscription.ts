/**
 * A Subscription's candidates, OLM's way: its package in its channel (the package's default
 * channel when none is set) of its catalog. A fresh install gets the channel head, or exactly
 * `startingCSV`. An installed operator gets the successors of its version in that channel,
 * newest first, and then staying where it is; never a downgrade.
 */
import { missingBundle, toEntry } from './catalog-index.js';
import type { ResolveContext } from './context.js';
import type { Entry } from './model.js';
import { and, bundleNamed, newerThan, successorOf } from './predicates.js';
import { type SubscriptionObligation, subscriptionBlame } from './search.js';
import type { SubscriptionInput } from './types.js';
import { compareNewestFirst } from './version.js';

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
  const channelName = sub.channel || pkg.defaultChannel;
  if (!channelName) {
    return none(
      '',
      `package ${sub.package} in catalog ${catalog.name} has no default channel; set spec.channel`,
    );
  }
  const graph = pkg.channels.get(channelName);
  if (!graph) {
    const known = [...pkg.channels.keys()].sort().join(', ');
    return none(
      channelName,
      `package ${sub.package} in catalog ${catalog.name} has no channel ${channelName} (it has: ${known})`,
    );
  }
  if (graph.problem) return none(channelName, `${graph.problem} (catalog ${catalog.name})`);
  const entries = cat.channelEntries.get(pkg.name)?.get(channelName) ?? [];

  if (installed) {
    const successors = entries
      .filter(
        and(
          successorOf({ name: installed.bundle.name, version: installed.bundle.version }),
          newerThan(installed.bundle.version),
        ),
      )
      .sort((a, b) => compareNewestFirst(a.bundle.version, b.bundle.version) || a.rank - b.rank);
    return { ...base, channel: channelName, candidates: [...successors, installed] };
  }

  if (sub.startingCSV) {
    const onChain = entries.find(bundleNamed(sub.startingCSV));
    // startingCSV names a bundle exactly, even one the channel's head skips over.
    const inChannel: Entry | undefined =
      onChain ??
      (graph.entries.has(sub.startingCSV)
        ? toEntry(
            cat.info,
            graph,
            sub.startingCSV,
            entries.length,
            cat.bundles.get(sub.startingCSV) ?? missingBundle(sub.startingCSV, sub.package),
            channelName === pkg.defaultChannel,
          )
        : undefined);
    if (!inChannel) {
      return none(
        channelName,
        `spec.startingCSV ${sub.startingCSV} is not an entry of channel ${channelName} of package ${sub.package} in catalog ${catalog.name}`,
      );
    }
    // A bundle off the chain is in no index: requirements must still see it as a provider.
    if (!onChain) ctx.addChoosable(inChannel);
    return { ...base, channel: channelName, candidates: [inChannel] };
  }

  const head = entries[0];
  if (!head) return none(channelName, `channel ${channelName} of package ${sub.package} has no entries`);
  return { ...base, channel: channelName, candidates: [head] };
}
