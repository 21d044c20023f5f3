/**
 * One catalog, indexed for resolution: its packages and channel graphs, its bundles read once,
 * and its candidate entries by provided API, package and label. Building the index is the
 * expensive part for a large catalog, so it is cached per catalog object: resolving again
 * against the same catalog content reuses it.
 */
import type { ChannelDoc, ChannelEntry, DeclarativeConfig } from '../apis/fbc.js';
import { channelGraph, type ChannelGraph as Graph } from '../olm/channel-graph.js';
import type { Problem } from '../util/result.js';
import { readBundle } from './bundle.js';
import { type BundleInfo, type CatalogInfo, type Entry, entryId, type LookupHint } from './model.js';
import type { Catalog } from './types.js';
import { parseRange } from '../olm/version.js';

/** A channel's upgrade graph (the kernel's), named, and why the resolver cannot use it if it cannot. */
export interface ChannelGraph extends Graph<ChannelEntry> {
  package: string;
  name: string;
  problem: string | null;
}

/**
 * A channel as the resolver reads it. Without exactly one head, or with a cycle on the replaces
 * chain from the head, it offers nothing; stranded entries are simply not offered (validation
 * and loading refuse such channels, as opm does).
 */
export function analyzeChannel(doc: Pick<ChannelDoc, 'package' | 'name' | 'entries'>): ChannelGraph {
  const graph = channelGraph(doc.entries ?? []);
  const where = `channel ${doc.name} of package ${doc.package}`;
  let problem: string | null = null;
  if (graph.entries.size === 0) problem = `${where} has no entries`;
  else if (graph.heads.length === 0)
    problem = `${where} has no head: every entry is replaced or skipped by another, so the upgrade graph has a cycle`;
  else if (graph.heads.length > 1)
    problem = `${where} has ${graph.heads.length} heads (${graph.heads.join(', ')}): its entries must form one replaces chain`;
  else if (graph.chainCycle)
    problem = `${where} has a replaces cycle: ${[...graph.chain, graph.chainCycle.at(-1)].join(' -> ')}`;
  return { ...graph, package: doc.package, name: doc.name, problem };
}

export interface PackageInfo {
  name: string;
  defaultChannel: string | undefined;
  channels: ReadonlyMap<string, ChannelGraph>;
}

export interface CatalogIndex {
  info: CatalogInfo;
  packages: ReadonlyMap<string, PackageInfo>;
  bundles: ReadonlyMap<string, BundleInfo>;
  /** Candidate entries of each channel, head first, by package and channel. */
  channelEntries: ReadonlyMap<string, ReadonlyMap<string, Entry[]>>;
  byGVK: ReadonlyMap<string, Entry[]>;
  byPackage: ReadonlyMap<string, Entry[]>;
  byLabel: ReadonlyMap<string, Entry[]>;
  entries: Entry[];
  /** What is wrong in the catalog content that the resolver noticed (it works around it). */
  problems: Problem[];
}

const cache = new WeakMap<DeclarativeConfig, Map<string, CatalogIndex>>();

export function indexCatalog(catalog: Catalog): CatalogIndex {
  const k = `${catalog.namespace}/${catalog.name}/${catalog.priority}`;
  let perConfig = cache.get(catalog.config);
  if (!perConfig) {
    perConfig = new Map();
    cache.set(catalog.config, perConfig);
  }
  const hit = perConfig.get(k);
  if (hit) return hit;
  const built = build(catalog);
  perConfig.set(k, built);
  return built;
}

function build(catalog: Catalog): CatalogIndex {
  const info: CatalogInfo = {
    key: { name: catalog.name, namespace: catalog.namespace },
    priority: catalog.priority,
  };
  const cfg = catalog.config;
  const problems: Problem[] = [];
  const where = `catalog ${catalog.namespace}/${catalog.name}`;

  const bundles = new Map<string, BundleInfo>();
  for (const b of cfg.bundles) {
    if (bundles.has(b.name)) {
      problems.push({
        object: `olm.bundle ${b.name}`,
        message: `${where} lists bundle ${b.name} twice; using the first`,
      });
      continue;
    }
    bundles.set(
      b.name,
      readBundle({ name: b.name, package: b.package, image: b.image, properties: b.properties ?? [] }),
    );
  }

  const channelDocs = new Map<string, typeof cfg.channels>();
  for (const ch of cfg.channels) {
    const list = channelDocs.get(ch.package) ?? [];
    list.push(ch);
    channelDocs.set(ch.package, list);
  }

  const packages = new Map<string, PackageInfo>();
  const channelEntries = new Map<string, Map<string, Entry[]>>();
  const entries: Entry[] = [];
  for (const p of cfg.packages) {
    const channels = new Map<string, ChannelGraph>();
    for (const doc of channelDocs.get(p.name) ?? []) {
      if (channels.has(doc.name)) {
        problems.push({
          object: `olm.channel ${doc.name}`,
          message: `package ${p.name} has channel ${doc.name} twice`,
        });
        continue;
      }
      channels.set(doc.name, analyzeChannel(doc));
    }
    packages.set(p.name, { name: p.name, defaultChannel: p.defaultChannel, channels });

    const perChannel = new Map<string, Entry[]>();
    for (const graph of channels.values()) {
      if (graph.problem) {
        problems.push({ object: `olm.channel ${graph.name}`, message: graph.problem });
        perChannel.set(graph.name, []);
        continue;
      }
      const list = graph.order.map((name, rank) => {
        const bundle = bundles.get(name) ?? missingBundle(name, p.name);
        const e = toEntry(info, graph, name, rank, bundle, graph.name === p.defaultChannel);
        const skipRange = graph.entries.get(name)?.skipRange;
        const refused = skipRange && !e.skipRange ? parseRange(skipRange) : undefined;
        if (refused && !refused.ok) {
          problems.push({
            object: `olm.channel ${graph.name}`,
            field: `entries[${name}].skipRange`,
            message: `${refused.message}; ignoring it`,
          });
        }
        entries.push(e);
        return e;
      });
      perChannel.set(graph.name, list);
    }
    channelEntries.set(p.name, perChannel);
  }

  const byGVK = new Map<string, Entry[]>();
  const byPackage = new Map<string, Entry[]>();
  const byLabel = new Map<string, Entry[]>();
  const add = (m: Map<string, Entry[]>, k: string, e: Entry) => {
    const list = m.get(k);
    if (list) list.push(e);
    else m.set(k, [e]);
  };
  for (const e of entries) {
    add(byPackage, e.bundle.package, e);
    for (const k of e.bundle.providesKeys) add(byGVK, k, e);
    for (const l of e.bundle.labels) add(byLabel, l, e);
  }
  return { info, packages, bundles, channelEntries, byGVK, byPackage, byLabel, entries, problems };
}

const NO_SKIPS: string[] = [];

/** A channel entry as a candidate; `bundle` may be a stand-in when the catalog lacks its olm.bundle. */
export function toEntry(
  info: CatalogInfo,
  graph: ChannelGraph,
  name: string,
  rank: number,
  bundle: BundleInfo,
  isDefaultChannel: boolean,
): Entry {
  const ce = graph.entries.get(name);
  const parsed = ce?.skipRange ? parseRange(ce.skipRange) : undefined;
  const skipRange = parsed?.ok ? parsed.range : null;
  return {
    id: entryId(info.key, graph.name, name),
    bundle,
    catalog: info,
    channel: graph.name,
    isDefaultChannel,
    rank,
    replaces: ce?.replaces ?? null,
    skips: ce?.skips ?? NO_SKIPS,
    skipRange,
    installed: false,
  };
}

/** Stands in for a channel entry whose olm.bundle document is missing, so that it explains itself. */
export function missingBundle(name: string, pkg: string): BundleInfo {
  return {
    name,
    package: pkg,
    versionText: '',
    version: null,
    image: '',
    properties: [],
    provides: [],
    providesKeys: [],
    labels: [],
    requirements: [],
    problems: [{ field: 'olm.bundle', message: `the catalog has no olm.bundle named ${name}` }],
    deprecated: null,
  };
}

interface BundleLookup {
  byGVK: Map<string, BundleInfo[]>;
  byPackage: Map<string, BundleInfo[]>;
  byLabel: Map<string, BundleInfo[]>;
}
const bundleLookups = new WeakMap<CatalogIndex, BundleLookup>();

/**
 * Every bundle of the catalog that may match `hint`, candidate or not (skipped, off the chain,
 * in no channel). Only explanations need this, so its maps are built on first use.
 */
export function bundlesMatching(cat: CatalogIndex, hint: LookupHint): Iterable<BundleInfo> {
  let lookup = bundleLookups.get(cat);
  if (!lookup) {
    lookup = { byGVK: new Map(), byPackage: new Map(), byLabel: new Map() };
    const add = (m: Map<string, BundleInfo[]>, k: string, b: BundleInfo) => {
      const list = m.get(k);
      if (list) list.push(b);
      else m.set(k, [b]);
    };
    for (const b of cat.bundles.values()) {
      add(lookup.byPackage, b.package, b);
      for (const k of b.providesKeys) add(lookup.byGVK, k, b);
      for (const l of b.labels) add(lookup.byLabel, l, b);
    }
    bundleLookups.set(cat, lookup);
  }
  switch (hint.kind) {
    case 'gvk':
      return lookup.byGVK.get(hint.key) ?? [];
    case 'package':
      return lookup.byPackage.get(hint.name) ?? [];
    case 'label':
      return lookup.byLabel.get(hint.label) ?? [];
    case 'union':
      return [...new Set(hint.hints.flatMap((h) => [...bundlesMatching(cat, h)]))];
    case 'all':
      return cat.bundles.values();
  }
}
