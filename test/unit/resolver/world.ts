/**
 * Small generated worlds for property tests: a few packages in one or two catalogs, with
 * upgrade chains (replaces, skips, skipRange), provided and required APIs, package ranges,
 * installed operators and Subscriptions. Also an independent checker of what a valid plan is,
 * and a brute-force search that says whether any valid plan exists.
 */
import fc from 'fast-check';
import type { Property } from '../../../src/apis/fbc.js';
import type {
  Catalog,
  InstalledOperator,
  InstallStep,
  ResolutionInput,
  SubscriptionInput,
} from '../../../src/resolver/index.js';
import { type BundleSpec, catalog, installed, type PackageSpec } from './build.js';
import { seededRandom as rng } from '../../support/random.js';

export const GVKS = ['g/v1/A', 'g/v1/B', 'g/v1/C'] as const;
export const PACKAGES = ['p0', 'p1', 'p2', 'p3'] as const;
const RANGES = ['>=1.0.0', '>=2.0.0', '<2.0.0', '1.0.0', '>=1.0.0 <3.0.0', '>=1.0.0 !=2.0.0'] as const;

interface VersionSpec {
  provides: string[];
  requires: string[];
  needs: { pkg: string; range: string } | null;
  /** Also skip the entry it replaces. */
  skipPrevious: boolean;
  /** skipRange covering every earlier version. */
  skipRange: boolean;
}

interface PackageGen {
  present: boolean;
  versions: VersionSpec[];
  /** How many of the newest versions the `fast` channel has (0: no fast channel). */
  fast: number;
  defaultFast: boolean;
}

interface CatalogGen {
  priority: number;
  global: boolean;
  packages: PackageGen[];
}

interface InstalledGen {
  version: number;
  subscribed: boolean;
}

interface SubGen {
  channel: '' | 'stable' | 'fast';
  source: number;
  startingCSV: boolean;
  second: boolean;
}

export interface WorldGen {
  catalogs: CatalogGen[];
  installed: (InstalledGen | null)[];
  subs: (SubGen | null)[];
}

const versionArb: fc.Arbitrary<VersionSpec> = fc.record({
  provides: fc.subarray([...GVKS], { maxLength: 2 }),
  requires: fc.subarray([...GVKS], { maxLength: 2 }),
  needs: fc.option(fc.record({ pkg: fc.constantFrom(...PACKAGES), range: fc.constantFrom(...RANGES) }), {
    nil: null,
    freq: 3,
  }),
  skipPrevious: fc.boolean(),
  skipRange: fc.boolean(),
});

const packageArb: fc.Arbitrary<PackageGen> = fc.record({
  present: fc.boolean(),
  versions: fc.array(versionArb, { minLength: 1, maxLength: 3 }),
  fast: fc.integer({ min: 0, max: 2 }),
  defaultFast: fc.boolean(),
});

const catalogArb: fc.Arbitrary<CatalogGen> = fc.record({
  priority: fc.integer({ min: 0, max: 2 }),
  global: fc.boolean(),
  packages: fc.tuple(...PACKAGES.map(() => packageArb)),
});

export const worldArb: fc.Arbitrary<WorldGen> = fc.record({
  catalogs: fc.array(catalogArb, { minLength: 1, maxLength: 2 }),
  installed: fc.tuple(
    ...PACKAGES.map(() =>
      fc.option(fc.record({ version: fc.integer({ min: 1, max: 3 }), subscribed: fc.boolean() }), {
        nil: null,
      }),
    ),
  ),
  subs: fc.tuple(
    ...PACKAGES.map(() =>
      fc.option(
        fc.record({
          channel: fc.constantFrom('' as const, 'stable' as const, 'fast' as const),
          source: fc.integer({ min: 0, max: 1 }),
          startingCSV: fc.boolean(),
          second: fc.boolean(),
        }),
        { nil: null, freq: 2 },
      ),
    ),
  ),
});

const bundleName = (pkg: string, i: number) => `${pkg}.v${i}`;
const catalogName = (i: number) => `c${i}`;

function bundleSpec(pkg: string, i: number, v: VersionSpec): BundleSpec {
  return {
    name: bundleName(pkg, i),
    version: `${i}.0.0`,
    ...(i > 1 ? { replaces: bundleName(pkg, i - 1) } : {}),
    ...(i > 1 && v.skipPrevious ? { skips: [bundleName(pkg, i - 1)] } : {}),
    ...(i > 1 && v.skipRange ? { skipRange: `<${i}.0.0` } : {}),
    provides: v.provides,
    requires: v.requires,
    ...(v.needs && v.needs.pkg !== pkg ? { needs: { [v.needs.pkg]: v.needs.range } } : {}),
  };
}

function packageSpec(pkg: string, g: PackageGen): PackageSpec {
  const all = g.versions.map((v, i) => bundleSpec(pkg, i + 1, v));
  const fast =
    g.fast > 0
      ? all.slice(-g.fast).map((b, i) => (i === 0 ? { ...b, replaces: undefined, skips: undefined } : b))
      : [];
  return {
    name: pkg,
    defaultChannel: g.defaultFast && fast.length ? 'fast' : 'stable',
    channels: fast.length ? { stable: all, fast } : { stable: all },
  };
}

/** The resolver input a generated world stands for. */
export function toInput(w: WorldGen): ResolutionInput {
  const catalogs: Catalog[] = w.catalogs.map((c, ci) =>
    catalog(
      catalogName(ci),
      PACKAGES.flatMap((pkg, pi) => (c.packages[pi]!.present ? [packageSpec(pkg, c.packages[pi]!)] : [])),
      { priority: c.priority, namespace: c.global ? 'global' : 'ns' },
    ),
  );
  const subscriptions: SubscriptionInput[] = [];
  const ops: InstalledOperator[] = [];
  PACKAGES.forEach((pkg, pi) => {
    const s = w.subs[pi];
    const inst = w.installed[pi];
    const sourceIndex = Math.min(s?.source ?? 0, w.catalogs.length - 1);
    const source = w.catalogs[sourceIndex]!;
    if (inst) {
      // An installed bundle carries the properties the first catalog with its package lists.
      const from = w.catalogs.findIndex(
        (c) => c.packages[pi]!.present && c.packages[pi]!.versions.length >= inst.version,
      );
      const spec =
        from >= 0
          ? bundleSpec(pkg, inst.version, w.catalogs[from]!.packages[pi]!.versions[inst.version - 1]!)
          : { name: bundleName(pkg, inst.version), version: `${inst.version}.0.0` };
      ops.push(
        installed(
          pkg,
          spec,
          from >= 0
            ? { name: catalogName(from), namespace: w.catalogs[from]!.global ? 'global' : 'ns' }
            : undefined,
        ),
      );
    }
    if (s && (!inst || inst.subscribed)) {
      const base = { namespace: 'ns', sourceNamespace: source.global ? 'global' : 'ns' };
      subscriptions.push({
        name: `sub-${pkg}`,
        namespace: base.namespace,
        package: pkg,
        channel: s.channel,
        source: catalogName(sourceIndex),
        sourceNamespace: base.sourceNamespace,
        ...(s.startingCSV ? { startingCSV: bundleName(pkg, 1) } : {}),
      });
      if (s.second) {
        subscriptions.push({
          name: `sub-${pkg}-2`,
          namespace: base.namespace,
          package: pkg,
          channel: s.channel === 'fast' ? 'stable' : 'fast',
          source: catalogName(sourceIndex),
          sourceNamespace: base.sourceNamespace,
        });
      }
    }
  });
  return { namespace: 'ns', catalogs, installed: ops, subscriptions };
}

// ---- an independent model of what a valid plan is ----

interface Bundle {
  name: string;
  package: string;
  version: string;
  properties: Property[];
}

interface Offer {
  bundle: Bundle;
  /** Skipped in its channel: only `startingCSV` may name it. */
  skipped: boolean;
  catalog: string;
  catalogNamespace: string;
  channel: string;
  replaces?: string;
  skips: string[];
  skipRange?: string;
}

const gvkOf = (v: unknown) => {
  const g = v as { group: string; version: string; kind: string };
  return `${g.group}/${g.version}/${g.kind}`;
};
const provided = (b: Bundle) => b.properties.filter((p) => p.type === 'olm.gvk').map((p) => gvkOf(p.value));

// Generated versions are `N.0.0`; the oracle reads them, and the ranges generated above, by
// itself, so that it shares no assumption with the resolver's range library.
function major(version: string): number {
  const m = /^(\d+)\.0\.0$/.exec(version);
  if (!m) throw new Error(`the oracle only reads generated versions like 2.0.0, not ${version}`);
  return Number(m[1]);
}

/** Comparators separated by spaces are ANDed; a bare version means exactly that version. */
function inGeneratedRange(version: string, range: string): boolean {
  const v = major(version);
  return range.split(' ').every((c) => {
    const m = /^(>=|<|!=|)(\d+\.0\.0)$/.exec(c);
    if (!m) throw new Error(`the oracle only reads generated ranges, not ${range}`);
    const n = major(m[2]!);
    return m[1] === '>=' ? v >= n : m[1] === '<' ? v < n : m[1] === '!=' ? v !== n : v === n;
  });
}

/** Does `b` meet requirement property `p`? Written from the spec, not from the resolver. */
function meets(b: Bundle, p: Property): boolean {
  if (p.type === 'olm.gvk.required') return provided(b).includes(gvkOf(p.value));
  if (p.type === 'olm.package.required') {
    const v = p.value as { packageName: string; versionRange: string };
    return b.package === v.packageName && inGeneratedRange(b.version, v.versionRange);
  }
  return true;
}
const requirementsOf = (b: Bundle) =>
  b.properties.filter((p) => p.type === 'olm.gvk.required' || p.type === 'olm.package.required');

/** Every entry of each catalog's channels; generated channels are single replaces chains. */
function offers(input: ResolutionInput): Offer[] {
  const out: Offer[] = [];
  for (const c of input.catalogs) {
    const bundles = new Map(
      c.config.bundles.map((b) => {
        const pkgProp = b.properties.find((p) => p.type === 'olm.package')!.value as { version: string };
        return [
          b.name,
          { name: b.name, package: b.package, version: pkgProp.version, properties: b.properties },
        ];
      }),
    );
    for (const ch of c.config.channels) {
      const skipped = new Set(ch.entries.flatMap((e) => e.skips ?? []));
      for (const e of ch.entries) {
        out.push({
          skipped: skipped.has(e.name),
          bundle: bundles.get(e.name)!,
          catalog: c.name,
          catalogNamespace: c.namespace,
          channel: ch.name,
          ...(e.replaces ? { replaces: e.replaces } : {}),
          skips: e.skips ?? [],
          ...(e.skipRange ? { skipRange: e.skipRange } : {}),
        });
      }
    }
  }
  return out;
}

/**
 * The offers a Subscription may end up on, by OLM's rules: its channel, or any channel when it
 * names none; exactly startingCSV, or any entry on the chain for a fresh install, or a newer
 * successor of the installed bundle.
 */
function allowedFor(input: ResolutionInput, all: Offer[], s: SubscriptionInput): Offer[] {
  const listed = all.filter(
    (o) =>
      o.catalog === s.source &&
      o.catalogNamespace === s.sourceNamespace &&
      (!s.channel || o.channel === s.channel) &&
      o.bundle.package === s.package,
  );
  // startingCSV names a bundle exactly, even a skipped one.
  if (s.startingCSV && !input.installed.some((i) => i.package === s.package)) {
    return listed.filter((o) => o.bundle.name === s.startingCSV);
  }
  const inChannel = listed.filter((o) => !o.skipped);
  const inst = input.installed.find((i) => i.package === s.package);
  if (inst) {
    return inChannel.filter(
      (o) =>
        major(o.bundle.version) > major(inst.version) &&
        (o.replaces === inst.name ||
          o.skips.includes(inst.name) ||
          (o.skipRange !== undefined && inGeneratedRange(inst.version, o.skipRange))),
    );
  }
  return inChannel;
}

/** Why `steps` is not a valid plan for `input`, or null when it is. */
export function planProblem(input: ResolutionInput, steps: InstallStep[]): string | null {
  const all = offers(input);
  const subscribed = new Set(input.subscriptions.map((s) => s.package));
  const final = new Map<string, State & { step?: InstallStep }>();
  for (const i of input.installed) {
    final.set(i.package, {
      bundle: { name: i.name, package: i.package, version: i.version, properties: i.properties },
      fixed: !subscribed.has(i.package),
    });
  }
  const stepPackages = new Set<string>();
  for (const st of steps) {
    if (stepPackages.has(st.package)) return `two steps for package ${st.package}`;
    stepPackages.add(st.package);
    const before = final.get(st.package);
    if (before?.fixed) return `${st.bundle} changes ${before.bundle.name}, which no Subscription references`;
    if ((before?.bundle.name ?? null) !== st.replaces)
      return `${st.bundle}: replaces ${st.replaces}, installed ${before?.bundle.name}`;
    if (before && major(st.version) <= major(before.bundle.version))
      return `${st.bundle} is a downgrade from ${before.bundle.name}`;
    const offer = all.find(
      (o) =>
        o.bundle.name === st.bundle &&
        o.catalog === st.catalog &&
        o.catalogNamespace === st.catalogNamespace &&
        o.channel === st.channel,
    );
    if (!offer) return `${st.bundle} is not an entry of channel ${st.channel} of catalog ${st.catalog}`;
    if (offer.skipped && st.reason !== 'subscription')
      return `${st.bundle} is skipped in channel ${st.channel}`;
    final.set(st.package, { bundle: offer.bundle, fixed: false, offChain: offer.skipped, step: st });
  }
  for (const s of input.subscriptions) {
    const f = final.get(s.package);
    if (!f) return `subscription ${s.name} has no bundle`;
    if (!f.step) continue; // staying put is always allowed
    const ok = allowedFor(input, all, s).some(
      (o) =>
        o.bundle.name === f.step!.bundle && o.channel === f.step!.channel && o.catalog === f.step!.catalog,
    );
    if (!ok)
      return `subscription ${s.name} got ${f.step.bundle} from channel ${f.step.channel}, which it may not`;
  }
  return stateProblem([...final.values()]);
}

/** A bundle in the final state; one its channel skips (a startingCSV) meets no requirement. */
interface State {
  bundle: Bundle;
  fixed: boolean;
  offChain?: boolean;
}

function stateProblem(state: State[]): string | null {
  const owner = new Map<string, State>();
  for (const s of state) {
    for (const g of provided(s.bundle)) {
      const o = owner.get(g);
      if (o && o.bundle.package !== s.bundle.package && !(o.fixed && s.fixed)) {
        return `${o.bundle.name} and ${s.bundle.name} both provide ${g}`;
      }
      if (!o) owner.set(g, s);
    }
  }
  for (const s of state) {
    for (const r of requirementsOf(s.bundle)) {
      if (!state.some((t) => !t.offChain && meets(t.bundle, r)))
        return `${s.bundle.name}: ${r.type} ${JSON.stringify(r.value)} is not met`;
    }
  }
  return null;
}

/** Whether any valid final state exists, by trying every combination (small worlds only). */
export function satisfiable(input: ResolutionInput): boolean {
  const all = offers(input);
  const subsByPackage = new Map<string, SubscriptionInput[]>();
  for (const s of input.subscriptions)
    subsByPackage.set(s.package, [...(subsByPackage.get(s.package) ?? []), s]);
  const packages = [...new Set([...PACKAGES, ...input.installed.map((i) => i.package)])];
  type Choice = (State & { offer?: Offer }) | null;
  const options = packages.map((pkg): Choice[] => {
    const inst = input.installed.find((i) => i.package === pkg);
    const instChoice = inst
      ? {
          bundle: { name: inst.name, package: pkg, version: inst.version, properties: inst.properties },
          fixed: false,
        }
      : null;
    const subs = subsByPackage.get(pkg);
    if (!subs) {
      if (instChoice) return [{ ...instChoice, fixed: true }];
      return [
        null,
        ...all
          .filter((o) => o.bundle.package === pkg && !o.skipped)
          .map((o) => ({ bundle: o.bundle, fixed: false, offer: o })),
      ];
    }
    // Every Subscription of the package must accept the one choice.
    const sets = subs.map((s) => allowedFor(input, all, s));
    const shared = sets[0]!.filter((o) => sets.every((set) => set.includes(o)));
    return [
      ...(instChoice ? [instChoice] : []),
      ...shared.map((o) => ({ bundle: o.bundle, fixed: false, offChain: o.skipped, offer: o })),
    ];
  });
  const picked: Choice[] = [];
  const go = (i: number): boolean => {
    if (i === packages.length) {
      return stateProblem(picked.filter((c): c is NonNullable<Choice> => c !== null)) === null;
    }
    for (const o of options[i]!) {
      picked.push(o);
      if (go(i + 1)) return true;
      picked.pop();
    }
    return false;
  };
  return go(0);
}

// ---- reordering, for order-independence ----

function shuffled<T>(xs: readonly T[], next: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The same input with every list in another order (fresh objects, so no cache is shared). */
export function reorder(input: ResolutionInput, seed: number): ResolutionInput {
  const next = rng(seed);
  const copy = structuredClone(input) as ResolutionInput;
  return {
    namespace: copy.namespace,
    catalogs: shuffled(copy.catalogs, next).map((c) => ({
      ...c,
      config: {
        ...c.config,
        packages: shuffled(c.config.packages, next),
        channels: shuffled(c.config.channels, next).map((ch) => ({
          ...ch,
          entries: shuffled(ch.entries, next),
        })),
        bundles: shuffled(c.config.bundles, next).map((b) => ({
          ...b,
          properties: shuffled(b.properties, next),
        })),
      },
    })),
    installed: shuffled(copy.installed, next).map((i) => ({
      ...i,
      properties: shuffled(i.properties, next),
    })),
    subscriptions: shuffled(copy.subscriptions, next),
  };
}
