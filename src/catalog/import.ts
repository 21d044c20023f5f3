/**
 * Importing a directory of operator packages into one file-based catalog, like the OperatorHub
 * community-operators tree: each child directory is a package, either in the legacy
 * package-manifest layout (`<pkg>.package.yaml` + version folders) or in the bundle layout
 * (`<version>/manifests` + `<version>/metadata`).
 *
 * - Legacy packages: each channel starts at its `currentCSV` and holds every CSV reachable from
 *   it through `replaces` and `skips`; entry edges are the CSV's `spec.replaces`, `spec.skips` and
 *   `olm.skipRange`. A channel whose head names a CSV the package lacks is reported and left out.
 * - Bundle packages: channels come from each bundle's annotations; the default channel from the
 *   highest version that names one.
 * - Package icon and description come from the head of the default channel, as opm's migration
 *   from the old registry database does.
 * - `ci.yaml`'s `updateGraph` is honoured as community-operators' pipeline did: in `semver-mode`
 *   each entry replaces the next lower version of its channel, whatever the CSV says.
 * - The old registry database did not need a channel to have one head (it stored the head), but a
 *   file-based catalog does. When a channel has several, every head but the highest version is
 *   joined to the graph by the next higher entry: as its `replaces` if that is unset, else as a
 *   `skips`. Each such edge is reported as a warning; nothing an author declared is removed.
 * - Published manifests are read as OLM read them (repeated YAML keys keep their last value,
 *   files that are not Kubernetes objects are skipped), with a warning for each.
 * - With `convertRemovedApis`, manifests of API versions Kubernetes no longer serves (v1beta1
 *   CRDs above all) are converted to their successors before they are rendered, with a warning
 *   for each conversion (bundle/upgrade). Off by default, so an import writes what opm would.
 *
 * Importing keeps going past a bad package: its problems are reported with the package's files,
 * and what could be imported of it stays in the result. Each package is validated on its own
 * (validate.ts), so every error belongs to exactly one package.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { type Bundle, BundleAnnotation } from '../apis/bundle.js';
import {
  type BundleDoc,
  type ChannelDoc,
  type ChannelEntry,
  type DeclarativeConfig,
  emptyConfig,
  type PackageDoc,
  Schema,
} from '../apis/fbc.js';
import { csvIcon, describe, isCSV, str } from '../bundle/manifest.js';
import { isPackageManifestDir, readPackageManifestDir } from '../bundle/package-manifest.js';
import { readBundleDir } from '../bundle/read.js';
import { bundleToDoc, labelOf } from '../bundle/render.js';
import { upgradeBundle } from '../bundle/upgrade/bundle.js';
import { validateBundle } from '../bundle/validate.js';
import { isObject, parseYamlStream } from '../bundle/yaml.js';
import type { Problem } from '../util/result.js';
import { runInWorkers, workerStarter } from '../util/workers.js';
import { channelHeads } from '../olm/channel-graph.js';
import { csvEdges } from '../olm/csv-edges.js';
import type { WorkRequest, WorkResponse } from './import-worker.js';
import { mapConcurrently } from './load.js';
import { setOrigin } from './origin.js';
import { objectName, validateCatalog } from './validate.js';
import { compareVersions, parseVersion } from '../olm/version.js';

export interface ImportOptions {
  onProgress?: (done: number, total: number) => void;
  /**
   * Worker threads to parse packages in (0: all in this thread). Used only where the worker
   * module can run: from the built JavaScript, or from TypeScript under tsx.
   */
  workers?: number;
  /** Also run bundle validation (validate.ts in bundle/) on every bundle; its findings become warnings. */
  validateBundles?: boolean;
  /**
   * Convert manifests of removed API versions (v1beta1 CRDs, ...) to their served successors
   * before rendering; each conversion is a warning, a manifest that cannot be converted an error.
   */
  convertRemovedApis?: boolean;
}

export interface PackageImportResult {
  /** The package's directory. */
  dir: string;
  /** The package name, once known. */
  name?: string;
  errors: Problem[];
  warnings: Problem[];
}

export interface ImportResult {
  config: DeclarativeConfig;
  errors: Problem[];
  warnings: Problem[];
  packages: number;
  bundles: number;
  /** Per package, in directory order: what was imported and what was wrong with it. */
  results: PackageImportResult[];
}

/** How many packages are read at once: enough to overlap file reads with parsing. */
const PACKAGE_CONCURRENCY = 4;

export async function importOperatorsDir(dir: string, opts: ImportOptions = {}): Promise<ImportResult> {
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  let done = 0;
  opts.onProgress?.(0, entries.length);
  const progress = () => opts.onProgress?.(++done, entries.length);
  const dirs = entries.map((name) => join(dir, name));
  const entry =
    opts.workers && opts.workers > 1 && dirs.length > 1
      ? workerStarter(import.meta.url, 'import-worker')
      : undefined;
  const imported = entry
    ? await importInWorkers(dirs, Math.min(opts.workers!, dirs.length), entry, opts, progress)
    : await mapConcurrently(dirs, PACKAGE_CONCURRENCY, async (d) => {
        const r = await importPackageDir(d, opts);
        progress();
        return r;
      });

  const config = emptyConfig();
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  const owners = new Map<string, string>();
  for (const { cfg, result } of imported) {
    const name = result.name;
    if (name && owners.has(name)) {
      result.errors.push({
        file: result.dir,
        object: objectName.package(name),
        message: `package ${name} is also imported from ${owners.get(name)}; it was left out here`,
      });
    } else {
      if (name) owners.set(name, result.dir);
      mergeInto(config, cfg);
    }
    errors.push(...result.errors);
    warnings.push(...result.warnings);
  }
  return {
    config,
    errors,
    warnings,
    packages: config.packages.length,
    bundles: config.bundles.length,
    results: imported.map((i) => i.result),
  };
}

export function mergeInto(into: DeclarativeConfig, from: DeclarativeConfig): void {
  into.packages.push(...from.packages);
  into.channels.push(...from.channels);
  into.bundles.push(...from.bundles);
  into.deprecations.push(...from.deprecations);
  into.others.push(...from.others);
}

/** Imports one package directory (either layout) and validates what it produced. */
export async function importPackageDir(
  dir: string,
  opts: ImportOptions = {},
): Promise<{ cfg: DeclarativeConfig; result: PackageImportResult }> {
  const result: PackageImportResult = { dir, errors: [], warnings: [] };
  let cfg: DeclarativeConfig;
  try {
    cfg = (await isPackageManifestDir(dir))
      ? await importLegacyPackage(dir, result, opts)
      : await importBundlePackage(dir, result, opts);
  } catch (err) {
    result.errors.push({ file: dir, message: `cannot import package: ${(err as Error).message}` });
    return { cfg: emptyConfig(), result };
  }
  if (cfg.packages.length) {
    const v = validateCatalog(cfg);
    result.errors.push(...v.errors);
    result.warnings.push(...v.warnings);
  }
  return { cfg, result };
}

interface Rendered {
  doc: BundleDoc;
  bundle: Bundle;
  entry: ChannelEntry;
  version: string;
}

/** Renders the bundles of one package; bundles that cannot be rendered are reported and left out. */
function renderBundles(
  bundles: Bundle[],
  packageName: string | undefined,
  result: PackageImportResult,
  opts: ImportOptions,
  legacy: boolean,
): Map<string, Rendered> {
  const out = new Map<string, Rendered>();
  for (const read of bundles) {
    let bundle = read;
    if (opts.convertRemovedApis) {
      const upgraded = upgradeBundle(read);
      result.warnings.push(...upgraded.warnings);
      if (upgraded.errors.length > 0) {
        result.errors.push(...upgraded.errors);
        continue;
      }
      bundle = upgraded.bundle;
    }
    const csvs = bundle.manifests.filter((m) => isCSV(m.object));
    if (csvs.length !== 1) {
      result.errors.push({
        file: bundle.source,
        message: `a bundle has exactly one ClusterServiceVersion, found ${csvs.length}; the folder was left out`,
      });
      continue;
    }
    const csvManifest = csvs[0]!;
    const csv = csvManifest.object;
    const file = labelOf(bundle, csvManifest.file);
    const version = str(csv, 'spec', 'version');
    if (version === undefined || !parseVersion(version)) {
      result.errors.push({
        file,
        object: describe(csv),
        field: 'spec.version',
        message:
          version === undefined
            ? 'is required; the bundle was left out'
            : `"${version}" is not a semver version; the bundle was left out`,
      });
      continue;
    }
    if (opts.validateBundles) {
      const v = validateBundle(bundle, { legacy });
      // Reading's own warnings were reported when the bundle was read.
      const fromReading = new Set(bundle.warnings);
      result.warnings.push(...v.errors, ...v.warnings.filter((w) => !fromReading.has(w)));
    }
    const doc = bundleToDoc(bundle, packageName ? { packageName } : {});
    if (!doc.ok) {
      result.errors.push(...doc.errors);
      continue;
    }
    const name = doc.value.name;
    const prior = out.get(name);
    if (prior) {
      result.errors.push({
        file,
        object: describe(csv),
        field: 'metadata.name',
        message: `CSV name ${name} is also used in ${prior.bundle.source}; this copy was left out`,
      });
      continue;
    }
    out.set(name, { doc: doc.value, bundle, entry: csvEdges(name, csv), version });
  }
  return out;
}

const byVersion = (rendered: Map<string, Rendered>) => (a: string, b: string) =>
  compareVersions(rendered.get(a)!.version, rendered.get(b)!.version) || (a < b ? -1 : a > b ? 1 : 0);

async function importLegacyPackage(
  dir: string,
  result: PackageImportResult,
  opts: ImportOptions,
): Promise<DeclarativeConfig> {
  const pkg = await readPackageManifestDir(dir);
  result.errors.push(...pkg.problems);
  for (const b of pkg.bundles) result.warnings.push(...(b.warnings ?? []));
  const cfg = emptyConfig();
  const manifest = pkg.manifest;
  if (!manifest) return cfg;
  const name = manifest.packageName;
  result.name = name;
  const rendered = renderBundles(pkg.bundles, name, result, opts, true);

  const channels: ChannelDoc[] = [];
  for (const ch of manifest.channels) {
    if (!rendered.has(ch.currentCSV)) {
      result.errors.push({
        file: manifest.file,
        object: objectName.package(name),
        field: `channels[${ch.index}].currentCSV`,
        message: `${ch.currentCSV} is not a CSV of package ${name}; channel ${ch.name} was left out`,
      });
      continue;
    }
    const members = reachableFrom(ch.currentCSV, rendered);
    channels.push({
      schema: Schema.Channel,
      package: name,
      name: ch.name,
      entries: [...members].sort(byVersion(rendered)).map((n) => rendered.get(n)!.entry),
    });
  }
  // An empty defaultChannel with a single channel means that channel, as OLM read package files.
  const defaultChannel =
    manifest.defaultChannel || (manifest.channels.length === 1 ? manifest.channels[0]!.name : undefined);
  await applyUpdateGraph(dir, channels, rendered, result);
  return assemble(name, defaultChannel, channels, rendered, result, manifest.file);
}

/** CSVs reachable from `head` through replaces and skips, among those the package has. */
function reachableFrom(head: string, rendered: Map<string, Rendered>): Set<string> {
  const seen = new Set<string>([head]);
  const queue = [head];
  while (queue.length) {
    const e = rendered.get(queue.pop()!)!.entry;
    for (const next of [e.replaces, ...(e.skips ?? [])]) {
      if (next && rendered.has(next) && !seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

async function importBundlePackage(
  dir: string,
  result: PackageImportResult,
  opts: ImportOptions,
): Promise<DeclarativeConfig> {
  const subdirs = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const bundles: Bundle[] = [];
  for (const sub of subdirs) {
    const path = join(dir, sub);
    const inner = await readdir(path).catch(() => [] as string[]);
    if (!inner.includes('manifests')) continue;
    const read = await readBundleDir(path, { lenient: true });
    if (!read.ok) result.errors.push(...read.errors);
    else {
      bundles.push(read.value);
      result.warnings.push(...(read.value.warnings ?? []));
    }
  }
  const cfg = emptyConfig();
  if (bundles.length === 0) {
    if (result.errors.length === 0) {
      result.errors.push({
        file: dir,
        message:
          'neither a package-manifest directory (<pkg>.package.yaml) nor bundle folders (<version>/manifests)',
      });
    }
    return cfg;
  }
  const names = new Set(
    bundles.map((b) => b.annotations[BundleAnnotation.Package]).filter((n): n is string => !!n),
  );
  if (names.size !== 1) {
    result.errors.push({
      file: dir,
      field: `annotations.${BundleAnnotation.Package}`,
      message:
        names.size === 0
          ? 'no bundle names its package'
          : `the bundles name different packages: ${[...names].sort().join(', ')}`,
    });
    return cfg;
  }
  const name = [...names][0]!;
  result.name = name;
  const rendered = renderBundles(bundles, undefined, result, opts, false);

  const members = new Map<string, string[]>();
  let defaultChannel: { channel: string; version: string } | undefined;
  for (const [bname, r] of rendered) {
    const a = r.bundle.annotations;
    for (const ch of (a[BundleAnnotation.Channels] ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)) {
      members.set(ch, [...(members.get(ch) ?? []), bname]);
    }
    const def = a[BundleAnnotation.DefaultChannel];
    if (def && (!defaultChannel || compareVersions(r.version, defaultChannel.version) > 0))
      defaultChannel = { channel: def, version: r.version };
  }
  const channels: ChannelDoc[] = [...members.keys()].sort().map((ch) => ({
    schema: Schema.Channel,
    package: name,
    name: ch,
    entries: members
      .get(ch)!
      .sort(byVersion(rendered))
      .map((n) => rendered.get(n)!.entry),
  }));
  const fallback = channels.length === 1 ? channels[0]!.name : undefined;
  await applyUpdateGraph(dir, channels, rendered, result);
  return assemble(name, defaultChannel?.channel ?? fallback, channels, rendered, result, dir);
}

/** Builds the package's config; bundles no channel holds are reported and left out. */
function assemble(
  name: string,
  defaultChannel: string | undefined,
  channels: ChannelDoc[],
  rendered: Map<string, Rendered>,
  result: PackageImportResult,
  packageFile: string,
): DeclarativeConfig {
  const inChannel = new Set(channels.flatMap((c) => c.entries.map((e) => e.name)));
  for (const [bname, r] of rendered) {
    if (!inChannel.has(bname)) {
      result.errors.push({
        file: r.bundle.source,
        object: objectName.bundle(bname),
        message: `no channel of package ${name} reaches ${bname}; it was left out`,
      });
      rendered.delete(bname);
    }
  }
  const pkg: PackageDoc = { schema: Schema.Package, name };
  if (defaultChannel) pkg.defaultChannel = defaultChannel;
  const defaultEntries = channels.find((c) => c.name === defaultChannel)?.entries ?? [];
  const heads = channelHeads(defaultEntries);
  const headCSV =
    heads.length === 1
      ? rendered.get(heads[0]!)?.bundle.manifests.find((m) => isCSV(m.object))?.object
      : undefined;
  if (headCSV) {
    const { icon, problem } = csvIcon(headCSV);
    if (icon) pkg.icon = icon;
    if (problem)
      result.warnings.push({
        file: packageFile,
        object: objectName.package(name),
        message: `${describe(headCSV)}: ${problem}`,
      });
    const description = str(headCSV, 'spec', 'description');
    if (description) pkg.description = description;
  }
  // Generated documents point at the files they came from, so validation names them.
  setOrigin(pkg, { file: packageFile, doc: 0 });
  for (const c of channels) setOrigin(c, { file: packageFile, doc: 0 });
  for (const r of rendered.values()) {
    const csv = r.bundle.manifests.find((m) => isCSV(m.object));
    setOrigin(r.doc, { file: csv ? labelOf(r.bundle, csv.file) : r.bundle.source, doc: 0 });
  }
  const cfg = emptyConfig();
  cfg.packages.push(pkg);
  cfg.channels.push(...channels);
  cfg.bundles.push(
    ...[...rendered.values()]
      .map((r) => r.doc)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  );
  return cfg;
}

/** community-operators' `ci.yaml` `updateGraph` values. */
export const UpdateGraphMode = {
  Replaces: 'replaces-mode',
  Semver: 'semver-mode',
  SemverSkipPatch: 'semver-skippatch-mode',
} as const;
export type UpdateGraphMode = (typeof UpdateGraphMode)[keyof typeof UpdateGraphMode];

async function readUpdateGraphMode(dir: string, result: PackageImportResult): Promise<UpdateGraphMode> {
  const file = join(dir, 'ci.yaml');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return UpdateGraphMode.Replaces;
  }
  const parsed = parseYamlStream(text, file);
  const value = parsed.ok
    ? parsed.docs
        .map((d) => (isObject(d.value) ? d.value.updateGraph : undefined))
        .find((v) => v !== undefined)
    : undefined;
  if (value === undefined) return UpdateGraphMode.Replaces;
  if (value === UpdateGraphMode.Replaces || value === UpdateGraphMode.Semver) return value;
  if (value === UpdateGraphMode.SemverSkipPatch) {
    result.warnings.push({
      file,
      field: 'updateGraph',
      message: `${value} is read as semver-mode (each entry replaces the next lower version)`,
    });
    return UpdateGraphMode.Semver;
  }
  result.warnings.push({
    file,
    field: 'updateGraph',
    message: `"${String(value)}" is not replaces-mode or semver-mode; replaces-mode is used`,
  });
  return UpdateGraphMode.Replaces;
}

/** Applies the package's update-graph mode to its channels, then joins extra heads (see the module comment). */
async function applyUpdateGraph(
  dir: string,
  channels: ChannelDoc[],
  rendered: Map<string, Rendered>,
  result: PackageImportResult,
): Promise<void> {
  const mode = await readUpdateGraphMode(dir, result);
  for (const ch of channels) {
    if (mode === UpdateGraphMode.Semver) {
      ch.entries = ch.entries.map((e, i) => {
        const next: ChannelEntry = { ...e };
        delete next.replaces;
        if (i > 0) next.replaces = ch.entries[i - 1]!.name;
        return next;
      });
    }
    joinExtraHeads(ch, rendered, result);
  }
}

/** Entries must be sorted by version. Gives every head but the highest an incoming edge. */
function joinExtraHeads(ch: ChannelDoc, rendered: Map<string, Rendered>, result: PackageImportResult): void {
  const heads = new Set(channelHeads(ch.entries));
  if (heads.size <= 1) return;
  const entries = ch.entries.map((e) => ({ ...e }));
  const top = entries.findLastIndex((e) => heads.has(e.name));
  for (let i = 0; i < entries.length - 1; i++) {
    const head = entries[i]!;
    if (i === top || !heads.has(head.name)) continue;
    const next = entries[i + 1]!;
    const r = rendered.get(next.name)!;
    const csv = r.bundle.manifests.find((m) => isCSV(m.object));
    const where = {
      file: csv ? labelOf(r.bundle, csv.file) : r.bundle.source,
      object: objectName.bundle(next.name),
    };
    if (!next.replaces) {
      next.replaces = head.name;
      result.warnings.push({
        ...where,
        field: 'spec.replaces',
        message: `not set; in channel ${ch.name} it now replaces ${head.name}, the next lower version, so the channel has one head`,
      });
    } else {
      next.skips = [...(next.skips ?? []), head.name];
      result.warnings.push({
        ...where,
        field: 'spec.skips',
        message: `in channel ${ch.name} it now also skips ${head.name}, the next lower version, so the channel has one head`,
      });
    }
  }
  ch.entries = entries;
}

async function importInWorkers(
  dirs: string[],
  n: number,
  start: () => Worker,
  opts: ImportOptions,
  progress: () => void,
): Promise<{ cfg: DeclarativeConfig; result: PackageImportResult }[]> {
  const requests = dirs.map((dir) => ({
    dir,
    opts: {
      validateBundles: opts.validateBundles ?? false,
      convertRemovedApis: opts.convertRemovedApis ?? false,
    },
  }));
  const answers = await runInWorkers<WorkRequest, WorkResponse>(
    requests,
    n,
    start,
    (r) => `importing ${r.dir}`,
    progress,
  );
  return answers.map((res) => {
    res.cfg.packages.forEach((d, i) => {
      restoreOrigin(d, res.origins.packages[i]);
    });
    res.cfg.channels.forEach((d, i) => {
      restoreOrigin(d, res.origins.channels[i]);
    });
    res.cfg.bundles.forEach((d, i) => {
      restoreOrigin(d, res.origins.bundles[i]);
    });
    return { cfg: res.cfg, result: res.result };
  });
}

function restoreOrigin(doc: object, file: string | undefined): void {
  if (file) setOrigin(doc, { file, doc: 0 });
}
