/**
 * Resolver figures:
 * - a generated catalog of 10,000 packages and 100,000 bundles, written as FBC and loaded back
 *   with the real loader: load and index time, per-Subscription resolve time (p50, p99), a
 *   namespace of 50 Subscriptions resolved together, and resident memory;
 * - the OperatorHub 2021 corpus (with BOSUN_CORPUS_DIR): per-Subscription resolve time over every
 *   package's default channel, and 50 Subscriptions in one namespace.
 * - OLM's own resolver beside Bosun's (with BOSUN_OLM_ORACLE_DIR and the olm-oracle built): warm
 *   resolve time of a sample of corpus packages, each alone, in both, on the same catalog.
 * Targets (issue 4): corpus p50 < 5 ms, p99 < 50 ms; generated < 100 ms per Subscription, < 1 GiB RSS.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BundleDoc, ChannelDoc, DeclarativeConfig, PackageDoc, Property } from '../../src/apis/fbc.js';
import { importOperatorsDir } from '../../src/catalog/import.js';
import { loadCatalog } from '../../src/catalog/load.js';
import { writeCatalog } from '../../src/catalog/write.js';
import { type Catalog, indexCatalog, resolve, type SubscriptionInput } from '../../src/resolver/index.js';
import { oracleBinary, run } from '../integration/resolver/oracle.js';
import type { Emit } from './run.js';
import { seededRandom as rng } from '../support/random.js';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Peak and current resident set size of this process, in MiB (Linux /proc). */
function rssMiB(): { current: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { current: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

const subscribe = (pkg: string, namespace: string, source: string): SubscriptionInput => ({
  name: pkg,
  namespace,
  package: pkg,
  channel: '',
  source,
  sourceNamespace: 'olm',
});

// ---- the generated catalog ----

const PACKAGES = 10_000;
const BUNDLES_PER_PACKAGE = 10;
const pkgName = (i: number) => `pkg-${String(i).padStart(5, '0')}`;
const versionOf = (v: number) => `${1 + Math.floor(v / 5)}.${v % 5}.0`;
const gvk = (group: string, kind: string) => ({ group, version: 'v1', kind });

/**
 * 10,000 packages of 10 bundles: a `stable` channel with every version (replaces chain, a
 * skipRange on every third entry) and, for half the packages, a `fast` channel with the newest
 * four. Each package provides two APIs of its own; one in a hundred also provides one of twenty
 * shared APIs (so providers compete). About a third of the bundles require an API of one of the
 * next fifty packages, a tenth require a package range below its head, a few require a shared API,
 * and the last package's head requires an API nobody provides.
 */
function generateCatalog(seed: number): DeclarativeConfig {
  const next = rng(seed);
  const cfg: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (let i = 0; i < PACKAGES; i++) {
    const name = pkgName(i);
    const pkg: PackageDoc = { schema: 'olm.package', name, defaultChannel: 'stable' };
    cfg.packages.push(pkg);
    const sharedKind = next() < 0.01 ? `Shared${Math.floor(next() * 20)}` : null;
    const names: string[] = [];
    for (let v = 0; v < BUNDLES_PER_PACKAGE; v++) {
      const bundle = `${name}.v${versionOf(v)}`;
      names.push(bundle);
      const properties: Property[] = [
        { type: 'olm.package', value: { packageName: name, version: versionOf(v) } },
        { type: 'olm.gvk', value: gvk(`${name}.example.com`, 'KindA') },
        { type: 'olm.gvk', value: gvk(`${name}.example.com`, 'KindB') },
        {
          type: 'olm.csv.metadata',
          value: {
            displayName: `Package ${i}`,
            description: `Operator ${name} version ${versionOf(v)}: manages things. `.repeat(4),
            keywords: ['bench', 'generated'],
            provider: { name: 'Bench' },
          },
        },
      ];
      if (sharedKind) properties.push({ type: 'olm.gvk', value: gvk('shared.example.com', sharedKind) });
      const dep = i + 1 + Math.floor(next() * 50);
      if (dep < PACKAGES && next() < 0.3) {
        properties.push({ type: 'olm.gvk.required', value: gvk(`${pkgName(dep)}.example.com`, 'KindA') });
      }
      const ranged = i + 1 + Math.floor(next() * 50);
      if (ranged < PACKAGES && next() < 0.1) {
        properties.push({
          type: 'olm.package.required',
          value: { packageName: pkgName(ranged), versionRange: '>=1.2.0 <2.0.0' },
        });
      }
      if (i === PACKAGES - 1) {
        // One package nobody can satisfy (a fresh install falls back down the channel, so every
        // bundle of it), to time a failure and its explanation.
        properties.push({ type: 'olm.gvk.required', value: gvk('missing.example.com', 'Nothing') });
      }
      if (next() < 0.005) {
        properties.push({
          type: 'olm.gvk.required',
          value: gvk('shared.example.com', `Shared${Math.floor(next() * 20)}`),
        });
      }
      const doc: BundleDoc = {
        schema: 'olm.bundle',
        package: name,
        name: bundle,
        image: `registry.example.com/${name}:${versionOf(v)}`,
        properties,
      };
      cfg.bundles.push(doc);
    }
    const stable: ChannelDoc = {
      schema: 'olm.channel',
      package: name,
      name: 'stable',
      entries: names.map((n, v) => ({
        name: n,
        ...(v > 0 ? { replaces: names[v - 1] } : {}),
        ...(v > 0 && v % 3 === 0 ? { skipRange: `>=${versionOf(Math.max(0, v - 3))} <${versionOf(v)}` } : {}),
      })),
    };
    cfg.channels.push(stable);
    if (i % 2 === 0) {
      const fast = names.slice(-4);
      cfg.channels.push({
        schema: 'olm.channel',
        package: name,
        name: 'fast',
        entries: fast.map((n, v) => ({ name: n, ...(v > 0 ? { replaces: fast[v - 1] } : {}) })),
      });
    }
  }
  return cfg;
}

/** Resolves each package alone in a namespace and returns the sorted times (ms). */
function timeAlone(
  catalog: Catalog,
  packages: string[],
  rounds: number,
): { times: number[]; resolved: number } {
  const times: number[] = [];
  let resolved = 0;
  for (let round = 0; round < rounds; round++) {
    for (const p of packages) {
      const t = process.hrtime.bigint();
      const r = resolve({
        namespace: 'bench',
        catalogs: [catalog],
        installed: [],
        subscriptions: [subscribe(p, 'bench', catalog.name)],
      });
      times.push(ms(t));
      if (round === 0 && r.ok) resolved++;
    }
  }
  return { times: times.sort((a, b) => a - b), resolved };
}

/** The first 50 packages (in the given order) that resolve together, and the time to resolve them. */
function namespaceOf50(
  catalog: Catalog,
  candidates: string[],
): { packages: string[]; times: number[]; steps: number } {
  const chosen: string[] = [];
  const input = (pkgs: string[]) => ({
    namespace: 'bench',
    catalogs: [catalog],
    installed: [],
    subscriptions: pkgs.map((p) => subscribe(p, 'bench', catalog.name)),
  });
  for (const p of candidates) {
    if (chosen.length === 50) break;
    if (resolve(input([...chosen, p])).ok) chosen.push(p);
  }
  const times: number[] = [];
  let steps = 0;
  for (let i = 0; i < 20; i++) {
    const t = process.hrtime.bigint();
    const r = resolve(input(chosen));
    times.push(ms(t));
    if (r.ok) steps = r.steps.length;
  }
  return { packages: chosen, times: times.sort((a, b) => a - b), steps };
}

async function writeGenerated(dir: string) {
  const written = generateCatalog(42);
  await writeCatalog(dir, written, { format: 'json' });
  return {
    catalog: 'generated',
    packages: written.packages.length,
    bundles: written.bundles.length,
    channels: written.channels.length,
  };
}

async function generated(emit: Emit): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bosun-bench-resolver-'));
  try {
    let t = process.hrtime.bigint();
    // Generated and written in a helper so that the in-memory copy can be collected before loading.
    const inputs = await writeGenerated(dir);
    emit({
      name: 'resolver.generated.write',
      value: ms(t),
      unit: 'ms',
      inputs: { ...inputs, files: PACKAGES },
    });

    t = process.hrtime.bigint();
    const loaded = await loadCatalog(dir);
    if (!loaded.ok) throw new Error(`generated catalog does not load: ${loaded.errors[0]?.message}`);
    emit({
      name: 'resolver.generated.load',
      value: ms(t),
      unit: 'ms',
      inputs: { ...inputs, loader: 'src/catalog/load.ts' },
    });

    const catalog: Catalog = { name: 'generated', namespace: 'olm', priority: 0, config: loaded.value };
    t = process.hrtime.bigint();
    indexCatalog(catalog);
    emit({ name: 'resolver.generated.index', value: ms(t), unit: 'ms', inputs });

    const next = rng(7);
    const sample = Array.from({ length: 200 }, () => pkgName(Math.floor(next() * PACKAGES)));
    const alone = timeAlone(catalog, sample, 3);
    const sampleInputs = { ...inputs, subscriptions: sample.length, rounds: 3, resolved: alone.resolved };
    emit({
      name: 'resolver.generated.resolve.p50',
      value: percentile(alone.times, 0.5),
      unit: 'ms',
      inputs: sampleInputs,
    });
    emit({
      name: 'resolver.generated.resolve.p99',
      value: percentile(alone.times, 0.99),
      unit: 'ms',
      inputs: sampleInputs,
    });
    emit({
      name: 'resolver.generated.resolve.max',
      value: alone.times.at(-1)!,
      unit: 'ms',
      inputs: sampleInputs,
    });

    const ns = namespaceOf50(catalog, sample);
    emit({
      name: 'resolver.generated.namespace50.p50',
      value: percentile(ns.times, 0.5),
      unit: 'ms',
      inputs: { ...inputs, subscriptions: ns.packages.length, steps: ns.steps, runs: ns.times.length },
    });

    const failing = [subscribe(pkgName(PACKAGES - 1), 'bench', 'generated')];
    const failTimes: number[] = [];
    let message = '';
    for (let i = 0; i < 20; i++) {
      t = process.hrtime.bigint();
      const r = resolve({ namespace: 'bench', catalogs: [catalog], installed: [], subscriptions: failing });
      failTimes.push(ms(t));
      if (!r.ok) message = r.message;
    }
    emit({
      name: 'resolver.generated.unsatisfiable.p50',
      value: percentile(
        failTimes.sort((a, b) => a - b),
        0.5,
      ),
      unit: 'ms',
      inputs: { ...inputs, runs: failTimes.length, message },
    });

    // What stays, not what the collector has not got round to yet: without a full collection
    // first this figure swung between about 470 and 920 MiB from one run to the next.
    (globalThis as { gc?: () => void }).gc?.();
    const rss = rssMiB();
    emit({
      name: 'resolver.generated.rss',
      value: rss.current,
      unit: 'MiB',
      inputs: { ...inputs, when: 'after load, index and resolves' },
    });
    emit({
      name: 'resolver.generated.rss.peak',
      value: rss.peak,
      unit: 'MiB',
      inputs: { ...inputs, includes: 'generating and writing the catalog' },
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function corpus(emit: Emit): Promise<void> {
  const dir = process.env.BOSUN_CORPUS_DIR;
  if (!dir || !existsSync(dir)) {
    process.stderr.write(
      'resolver corpus figures skipped: set BOSUN_CORPUS_DIR to the upstream-community-operators folder\n',
    );
    return;
  }
  let t = process.hrtime.bigint();
  const imported = await importOperatorsDir(dir);
  const inputs = { catalog: 'operatorhub-2021', packages: imported.packages, bundles: imported.bundles };
  emit({
    name: 'resolver.corpus.import',
    value: ms(t),
    unit: 'ms',
    inputs: { ...inputs, importer: 'src/catalog/import.ts' },
  });

  const catalog: Catalog = { name: 'community', namespace: 'olm', priority: 0, config: imported.config };
  t = process.hrtime.bigint();
  indexCatalog(catalog);
  emit({ name: 'resolver.corpus.index', value: ms(t), unit: 'ms', inputs });

  const packages = imported.config.packages.map((p) => p.name).sort();
  const alone = timeAlone(catalog, packages, 5);
  const aloneInputs = {
    ...inputs,
    subscriptions: packages.length,
    rounds: 5,
    resolved: alone.resolved,
    channel: 'default',
  };
  emit({
    name: 'resolver.corpus.resolve.p50',
    value: percentile(alone.times, 0.5),
    unit: 'ms',
    inputs: aloneInputs,
  });
  emit({
    name: 'resolver.corpus.resolve.p99',
    value: percentile(alone.times, 0.99),
    unit: 'ms',
    inputs: aloneInputs,
  });
  emit({ name: 'resolver.corpus.resolve.max', value: alone.times.at(-1)!, unit: 'ms', inputs: aloneInputs });

  const ns = namespaceOf50(catalog, packages);
  emit({
    name: 'resolver.corpus.namespace50.p50',
    value: percentile(ns.times, 0.5),
    unit: 'ms',
    inputs: { ...inputs, subscriptions: ns.packages.length, steps: ns.steps, runs: ns.times.length },
  });

  await besideOLM(emit, imported.config, packages);
}

/** Every `SAMPLE_EVERY`th corpus package (by name) is timed in both resolvers. */
const SAMPLE_EVERY = 16;
const WARM_RUNS = 20;

/**
 * The same Subscriptions resolved by OLM v0.46.0's resolver (the olm-oracle) and by Bosun, warm,
 * on the same catalog: the corpus without bundle manifests and CSV metadata (resolution reads
 * neither, nor images), and without the packages opm's loader refuses, which would fail the
 * whole catalog.
 */
async function besideOLM(emit: Emit, config: DeclarativeConfig, packages: string[]): Promise<void> {
  const oracle = await oracleBinary({ build: false });
  if (!oracle.ok) {
    process.stderr.write(`resolver OLM figures skipped: ${oracle.why}\n`);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'bosun-bench-olm-'));
  try {
    const refused: string[] = [];
    const lean = (): DeclarativeConfig => ({
      ...config,
      packages: config.packages.filter((p) => !refused.includes(p.name)),
      channels: config.channels.filter((c) => !refused.includes(c.package)),
      bundles: config.bundles
        .filter((b) => !refused.includes(b.package))
        .map(({ relatedImages: _, ...b }) => ({
          ...b,
          // Bundles imported from package-manifest folders have no image, which opm refuses.
          image: b.image || `registry.example.com/bench/${b.package}-bundle:${b.name}`,
          properties: (b.properties ?? []).filter(
            (p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata',
          ),
        })),
    });
    const subFile = join(dir, 'sub.yaml');
    const timeOLM = async (pkg: string) => {
      await writeFile(
        subFile,
        `apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: ${pkg}, namespace: ops}\n` +
          `spec: {name: ${pkg}, source: community, sourceNamespace: olm}\n`,
      );
      const out = await run(
        oracle.path,
        [
          '--catalog',
          `community=${join(dir, 'catalog')}`,
          '--subscription',
          subFile,
          '--timing',
          String(WARM_RUNS),
        ],
        dir,
      );
      const median = (what: string) =>
        Number(new RegExp(`warm ${what} \\(n=\\d+\\) median ([\\d.]+) ms`).exec(out.out)?.[1] ?? Number.NaN);
      return { out: out.out, resolve: median('Resolve'), steps: median('ResolveSteps') };
    };

    const sample = packages.filter((_, i) => i % SAMPLE_EVERY === 0);
    // Packages opm refuses are left out one by one, until the catalog loads.
    let probe = { out: '', resolve: Number.NaN, steps: Number.NaN };
    for (let tries = 0; tries <= 20; tries++) {
      await rm(join(dir, 'catalog'), { recursive: true, force: true });
      await writeCatalog(join(dir, 'catalog'), lean(), { format: 'json' });
      probe = await timeOLM(sample[0]!);
      const pkg = /catalog does not load: .*?process package \\"([^"\\]+)\\"/.exec(probe.out)?.[1];
      if (!pkg || refused.includes(pkg)) break;
      refused.push(pkg);
    }
    if (Number.isNaN(probe.resolve)) {
      process.stderr.write(
        `resolver OLM figures skipped: the olm-oracle gave no timing: ${probe.out.slice(0, 500)}\n`,
      );
      return;
    }

    const catalog: Catalog = { name: 'community', namespace: 'olm', priority: 0, config: lean() };
    indexCatalog(catalog);
    const olmResolve: number[] = [];
    const olmSteps: number[] = [];
    const bosun: number[] = [];
    for (const pkg of sample.filter((p) => !refused.includes(p))) {
      const t = pkg === sample[0] ? probe : await timeOLM(pkg);
      olmResolve.push(t.resolve);
      olmSteps.push(t.steps);
      const times: number[] = [];
      for (let i = 0; i < WARM_RUNS; i++) {
        const start = process.hrtime.bigint();
        resolve({
          namespace: 'ops',
          catalogs: [catalog],
          installed: [],
          subscriptions: [subscribe(pkg, 'ops', 'community')],
        });
        times.push(ms(start));
      }
      bosun.push(
        percentile(
          times.sort((a, b) => a - b),
          0.5,
        ),
      );
    }
    const inputs = {
      catalog: 'operatorhub-2021 without manifests',
      packages: packages.length - refused.length,
      sample: olmResolve.length,
      warmRuns: WARM_RUNS,
      refusedByOpm: refused,
      statistic: "median over the sample of each package's median warm time",
    };
    const mid = (xs: number[]) =>
      percentile(
        [...xs].sort((a, b) => a - b),
        0.5,
      );
    emit({ name: 'resolver.corpus.sample.bosun.resolve.p50', value: mid(bosun), unit: 'ms', inputs });
    emit({
      name: 'resolver.corpus.sample.olm.resolve.p50',
      value: mid(olmResolve),
      unit: 'ms',
      inputs: { ...inputs, measured: 'OLM v0.46.0 Resolver.Resolve (olm-oracle --timing)' },
    });
    emit({
      name: 'resolver.corpus.sample.olm.resolveSteps.p50',
      value: mid(olmSteps),
      unit: 'ms',
      inputs: { ...inputs, measured: 'OLM v0.46.0 OperatorStepResolver.ResolveSteps (olm-oracle --timing)' },
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export default async function resolverBench(emit: Emit): Promise<void> {
  // The generated catalog first, so that its memory figures are not inflated by the corpus.
  await generated(emit);
  await corpus(emit);
}
