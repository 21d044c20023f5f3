/**
 * Publishing a bundle into a catalog (pure): add its `olm.bundle`, place it on channels, give it
 * upgrade edges, and check the catalog still validates.
 *
 * Channels, in order of precedence: the ones asked for (`--channel`), the bundle's
 * `channels.v1` annotation, or with `semver` the semver template's channels for its version in
 * the chosen archetype (`stable-v1.2`, and `stable-v1` too when the package already has major
 * channels; major only when it has only those).
 *
 * Edges, with `semver`: the channels of the archetype and major are linked again as opm's semver
 * template links them (olm/semver-edges.ts), so the package reads as if the template had
 * rendered it with every bundle published so far, in any order. Otherwise, when the CSV declares
 * edges (`spec.replaces`, `spec.skips`, `olm.skipRange`), exactly those, as OLM reads them from
 * the bundle; else the new entry replaces the newest entry of an earlier Y-stream and skips the
 * entries of its own. That rule only appends: a version below a channel's newest is refused
 * unless its CSV says where it goes.
 *
 * A version already in the package is refused unless `replace` is set; then the old bundle and
 * its channel entries are removed first. The default channel: the one asked for; else with
 * `semver` the template's high-water channel; else for a new package the annotation's, or the
 * first channel; later it follows the annotation only when the bundle is the package's newest
 * version. The package's icon and description follow its newest bundle, or with `semver` the
 * default channel's head, as the template takes them.
 */
import type { KubeManifest } from '../apis/bundle.js';
import {
  type BundleDoc,
  type ChannelDoc,
  type ChannelEntry,
  type DeclarativeConfig,
  type PackageDoc,
  PropertyType,
  Schema,
} from '../apis/fbc.js';
import { csvIcon, str } from '../bundle/manifest.js';
import { csvEdges, hasEdges } from '../olm/csv-edges.js';
import { newestEntryEdges, semverTemplateEdges } from '../olm/semver-edges.js';
import { isObject } from '../bundle/yaml.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { originOf, setOrigin } from './origin.js';
import { Archetype, Archetypes, templatePackageInfo } from './semver-template.js';
import { objectName, validateCatalog } from './validate.js';
import { compareVersions, parseVersion, type Version, versionCore } from '../olm/version.js';

export interface PublishInput {
  doc: BundleDoc;
  csv: KubeManifest;
  /** The bundle's `channels.v1` annotation, split. */
  annotationChannels: string[];
  annotationDefaultChannel?: string;
}

export interface PublishOptions {
  channels?: string[];
  defaultChannel?: string;
  replace?: boolean;
  /** Place the bundle on the semver template's minor channel of `archetype` and compute its edges. */
  semver?: boolean;
  archetype?: Archetype;
}

export interface PublishOutcome {
  config: DeclarativeConfig;
  package: string;
  bundle: string;
  version: string;
  channels: { name: string; entry: ChannelEntry; created: boolean }[];
  /** Name of the bundle that `replace` removed. */
  replaced?: string;
  packageCreated: boolean;
  defaultChannel: string;
  warnings: Problem[];
}

export function versionOf(b: BundleDoc): string | undefined {
  const p = Array.isArray(b.properties)
    ? b.properties.find((x) => x.type === PropertyType.Package)
    : undefined;
  return isObject(p?.value) && typeof p.value.version === 'string' ? p.value.version : undefined;
}

export function publishBundle(
  cfg: DeclarativeConfig,
  input: PublishInput,
  opts: PublishOptions = {},
): Result<PublishOutcome> {
  const { doc } = input;
  const pkg = doc.package;
  const problems: Problem[] = [];
  const version = versionOf(doc);
  const parsed = version ? parseVersion(version) : undefined;
  if (!version || !parsed)
    return fail([
      {
        object: objectName.bundle(doc.name),
        field: 'spec.version',
        message: 'the bundle has no semver version',
      },
    ]);

  const out: DeclarativeConfig = {
    packages: cfg.packages.map((p) => copied(p, { ...p })),
    channels: cfg.channels.map((c) =>
      copied(c, { ...c, entries: Array.isArray(c.entries) ? [...c.entries] : c.entries }),
    ),
    bundles: [...cfg.bundles],
    deprecations: cfg.deprecations,
    others: cfg.others,
  };

  // Same name or same version already published?
  let replaced: string | undefined;
  const slots = new Map<string, number>();
  const clash = out.bundles.find(
    (b) => b.package === pkg && (b.name === doc.name || versionOf(b) === versionCore(parsed)),
  );
  if (clash) {
    if (!opts.replace) {
      const what =
        clash.name === doc.name
          ? `bundle ${doc.name}`
          : `version ${versionCore(parsed)} (as bundle ${clash.name})`;
      return fail([
        {
          object: objectName.package(pkg),
          message: `${what} is already published in package ${pkg}; pass --replace to overwrite it`,
        },
      ]);
    }
    replaced = clash.name;
    out.bundles = out.bundles.filter((b) => b !== clash);
    for (const c of out.channels) {
      if (c.package !== pkg) continue;
      // The new entry takes the old one's place, so a republished catalog reads the same.
      const at = c.entries.findIndex((e) => e.name === clash.name);
      if (at >= 0) slots.set(c.name, at);
      c.entries = c.entries.filter((e) => e.name !== clash.name);
    }
    out.channels = out.channels.filter((c) => c.package !== pkg || c.entries.length > 0);
  }

  const archetype = opts.archetype ?? Archetype.Stable;
  const channelNames = opts.semver
    ? templateKinds(out, pkg).map((minor) => templateChannel(archetype, parsed, minor))
    : opts.channels?.length
      ? opts.channels
      : input.annotationChannels;
  if (channelNames.length === 0) {
    return fail([
      {
        object: objectName.bundle(doc.name),
        message:
          'no channel to publish to: the bundle names none in its annotations; pass --channel or --semver',
      },
    ]);
  }

  const declared = declaredEdges(doc.name, input.csv);
  const placed: PublishOutcome['channels'] = [];
  for (const name of [...new Set(channelNames)]) {
    let ch = out.channels.find((c) => c.package === pkg && c.name === name);
    const created = !ch;
    if (!ch) {
      ch = { schema: Schema.Channel, package: pkg, name, entries: [] };
      out.channels.push(ch);
    }
    const entry = opts.semver
      ? { name: doc.name } // linked below, with the rest of its archetype's major
      : (declared ?? appendedEntry(doc.name, parsed, ch, out.bundles, problems));
    if (!entry) continue;
    const slot = slots.get(name);
    ch.entries =
      slot === undefined
        ? [...ch.entries, entry]
        : [...ch.entries.slice(0, slot), entry, ...ch.entries.slice(slot)];
    placed.push({ name, entry, created });
  }
  if (problems.length) return fail(problems);

  out.bundles.push(doc);
  if (opts.semver) {
    relinkTemplateChannels(out, pkg, archetype, parsed.major);
    for (const p of placed) {
      const ch = out.channels.find((c) => c.package === pkg && c.name === p.name);
      p.entry = ch?.entries.find((e) => e.name === doc.name) ?? p.entry;
    }
  }
  const newest = out.bundles
    .filter((b) => b.package === pkg)
    .every((b) => b === doc || compareVersions(versionOf(b) ?? '0.0.0', parsed) < 0);

  let pkgDoc = out.packages.find((p) => p.name === pkg);
  const packageCreated = !pkgDoc;
  if (!pkgDoc) {
    pkgDoc = { schema: Schema.Package, name: pkg };
    out.packages.push(pkgDoc);
  }
  const fromBundle = opts.semver ? highWaterChannel(out, pkg) : input.annotationDefaultChannel;
  const wanted =
    opts.defaultChannel ??
    (opts.semver || packageCreated || newest || !pkgDoc.defaultChannel ? fromBundle : undefined);
  if (wanted) pkgDoc.defaultChannel = wanted;
  else if (!pkgDoc.defaultChannel) pkgDoc.defaultChannel = placed[0]?.name ?? channelNames[0]!;
  const infoWarnings: Problem[] = [];
  if (opts.semver) {
    const head = out.channels
      .find((c) => c.package === pkg && c.name === pkgDoc.defaultChannel)
      ?.entries.at(-1)?.name;
    // Only a new head changes them: a default channel moves only to a channel the bundle opens.
    if (head === doc.name) {
      delete pkgDoc.description;
      delete pkgDoc.icon;
      Object.assign(pkgDoc, templatePackageInfo(input.csv));
    }
  } else if (newest) refreshPackageInfo(pkgDoc, input.csv, infoWarnings);

  // The whole catalog must stay valid: a write never leaves it broken, whichever package is.
  const v = validateCatalog(out);
  if (v.errors.length) return fail(v.errors);
  return ok({
    config: out,
    package: pkg,
    bundle: doc.name,
    version: versionCore(parsed),
    channels: placed,
    ...(replaced ? { replaced } : {}),
    packageCreated,
    defaultChannel: pkgDoc.defaultChannel,
    warnings: [...infoWarnings, ...v.warnings],
  });
}

/** A copy that keeps the original's origin, so problems still name the file. */
function copied<T extends object>(original: T, copy: T): T {
  const origin = originOf(original);
  if (origin) setOrigin(copy, origin);
  return copy;
}

/** The CSV's own edges, or undefined when it declares none. */
function declaredEdges(name: string, csv: KubeManifest): ChannelEntry | undefined {
  const e = csvEdges(name, csv);
  return hasEdges(e) ? e : undefined;
}

/** The entry of a new newest version of `ch` whose CSV declares no edges (see the module comment). */
function appendedEntry(
  name: string,
  v: Version,
  ch: ChannelDoc,
  bundles: BundleDoc[],
  problems: Problem[],
): ChannelEntry | undefined {
  const members = versionedEntries(ch, bundles);
  const newest = members.at(-1);
  if (newest && compareVersions(newest.version, v) >= 0) {
    problems.push({
      object: objectName.channel(ch.package, ch.name),
      message: `${name} (${versionCore(v)}) is not newer than ${newest.name} (${versionCore(newest.version)}); without spec.replaces or spec.skips in its CSV it can only be added as the newest version of a channel`,
    });
    return undefined;
  }
  return { name, ...newestEntryEdges(members, { name, version: v }) };
}

/** The channel's entries whose bundles have versions, lowest first. */
function versionedEntries(ch: ChannelDoc, bundles: BundleDoc[]): { name: string; version: Version }[] {
  const versions = packageVersions(bundles, ch.package);
  return ch.entries
    .map((e) => ({ name: e.name, version: versions.get(e.name) }))
    .filter((m): m is { name: string; version: Version } => m.version !== undefined)
    .sort((a, b) => compareVersions(a.version, b.version));
}

function packageVersions(bundles: BundleDoc[], pkg: string): Map<string, Version | undefined> {
  return new Map(
    bundles.filter((b) => b.package === pkg).map((b) => [b.name, parseVersion(versionOf(b) ?? '')]),
  );
}

const TEMPLATE_CHANNEL = /^(candidate|fast|stable)-v(\d+)(\.\d+)?$/;

/**
 * Which kinds of template channel the package uses (true: minor, false: major), as the
 * template's generate flags would have made them; minor alone for a package that has none.
 */
function templateKinds(cfg: DeclarativeConfig, pkg: string): boolean[] {
  const kinds = new Set<boolean>();
  for (const c of cfg.channels) {
    const m = c.package === pkg ? TEMPLATE_CHANNEL.exec(c.name) : null;
    if (m) kinds.add(m[3] !== undefined);
  }
  return kinds.size === 0 ? [true] : [...kinds].sort().reverse();
}

function templateChannel(archetype: Archetype, v: Version, minor: boolean): string {
  return minor ? `${archetype}-v${v.major}.${v.minor}` : `${archetype}-v${v.major}`;
}

/**
 * Links the package's template channels of `archetype` and `major` as opm's semver template
 * does: entries in version order, edges from all of the archetype's bundles of that major.
 */
function relinkTemplateChannels(
  cfg: DeclarativeConfig,
  pkg: string,
  archetype: Archetype,
  major: Version['major'],
): void {
  const channels = cfg.channels.filter((c) => {
    const m = c.package === pkg ? TEMPLATE_CHANNEL.exec(c.name) : null;
    return m !== null && m[1] === archetype && m[2] === String(major);
  });
  const members = new Map(channels.flatMap((c) => versionedEntries(c, cfg.bundles)).map((m) => [m.name, m]));
  const edges = semverTemplateEdges([...members.values()]);
  for (const c of channels) {
    const unversioned = c.entries.filter((e) => !members.has(e.name));
    const linked = versionedEntries(c, cfg.bundles).map((m) => ({ name: m.name, ...edges.get(m.name) }));
    c.entries = [...unversioned, ...linked];
  }
}

/**
 * The semver template's default among the package's template-named channels (`stable-v1.2`,
 * `fast-v2`): the most stable archetype, then the channel whose lowest version is highest, then
 * minor over major channels.
 */
function highWaterChannel(cfg: DeclarativeConfig, pkg: string): string | undefined {
  const versions = new Map(
    cfg.bundles.filter((b) => b.package === pkg).map((b) => [b.name, parseVersion(versionOf(b) ?? '')]),
  );
  let best: { rank: number; low: Version; minor: boolean; name: string } | undefined;
  for (const c of cfg.channels) {
    const m = /^(candidate|fast|stable)-v\d+(\.\d+)?$/.exec(c.name);
    if (c.package !== pkg || !m) continue;
    const lows = c.entries.map((e) => versions.get(e.name)).filter((v): v is Version => v !== undefined);
    if (lows.length === 0) continue;
    const low = lows.sort(compareVersions)[0]!;
    const cand = {
      rank: Archetypes.indexOf(m[1] as Archetype),
      low,
      minor: m[2] !== undefined,
      name: c.name,
    };
    const cmp = best
      ? cand.rank - best.rank ||
        compareVersions(cand.low, best.low) ||
        Number(cand.minor) - Number(best.minor)
      : 1;
    if (cmp > 0) best = cand;
  }
  return best?.name;
}

function refreshPackageInfo(pkg: PackageDoc, csv: KubeManifest, warnings: Problem[]): void {
  const { icon, problem } = csvIcon(csv);
  if (icon) pkg.icon = icon;
  if (problem) warnings.push({ object: objectName.package(pkg.name), message: problem });
  const description = str(csv, 'spec', 'description');
  if (description) pkg.description = description;
}
