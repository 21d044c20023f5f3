/**
 * The semver template (`schema: olm.semver`), generating channels exactly as opm v1.73's
 * `opm alpha render-template semver` does:
 *
 * - Bundles are listed under three channel archetypes, `candidate` < `fast` < `stable` in
 *   stability. Each archetype becomes channels per major version (`stable-v1`) and/or per minor
 *   version (`stable-v1.2`); minor channels only when neither is asked for.
 * - Edges come from `semverTemplateEdges` (olm/semver-edges.ts), per archetype: each Y-stream's
 *   newest entry replaces the previous Y-stream's newest and skips every other earlier entry of
 *   its major, in major and minor channels alike.
 * - The default channel is the "high-water" one: the most stable archetype that has bundles; in
 *   it, the channel whose first (lowest) bundle has the highest version; on a tie, the channel
 *   kind named by `defaultChannelTypePreference` (default: minor when minor channels are
 *   generated, else major).
 * - The package's description and icon are those of the default channel's head bundle's CSV.
 * - Versions that differ only in build metadata cannot be ordered and are refused, as are bundles
 *   of different packages and unknown template fields (so is `avoidSkipPatch`, which opm dropped).
 *   Keys match case-insensitively, as Go's JSON decoding does (opm's own examples write
 *   `GenerateMajorChannels`, `Stable`, `Image`).
 *
 * Pure: the template and each bundle's name and version in, channels and default channel out.
 */
import type { KubeManifest } from '../apis/bundle.js';
import { type ChannelDoc, type PackageDoc, Schema } from '../apis/fbc.js';
import { isGoBase64 } from '../bundle/manifest.js';
import { isObject } from '../bundle/yaml.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { semverTemplateEdges } from '../olm/semver-edges.js';
import { compareVersions, parseVersion, type Version, versionCore } from '../olm/version.js';

export const Archetype = {
  Candidate: 'candidate',
  Fast: 'fast',
  Stable: 'stable',
} as const;
export type Archetype = (typeof Archetype)[keyof typeof Archetype];
/** In increasing stability. */
export const Archetypes: readonly Archetype[] = [Archetype.Candidate, Archetype.Fast, Archetype.Stable];

export const StreamKind = {
  Major: 'major',
  Minor: 'minor',
} as const;
export type StreamKind = (typeof StreamKind)[keyof typeof StreamKind];

export interface SemverTemplateSpec {
  generateMajorChannels: boolean;
  generateMinorChannels: boolean;
  defaultChannelTypePreference: StreamKind;
  /** Bundle references (opm: images; Bosun: also bundle directories and archives) per archetype. */
  bundles: Record<Archetype, string[]>;
}

const TOP_KEYS = [
  'schema',
  'generateMajorChannels',
  'generateMinorChannels',
  'defaultChannelTypePreference',
  ...Archetypes,
];

/** Reads and checks a parsed template document; every problem is reported. */
export function parseSemverTemplate(doc: unknown, file: string): Result<SemverTemplateSpec> {
  const problems: Problem[] = [];
  const err = (field: string | undefined, message: string) =>
    problems.push({ file, ...(field ? { field } : {}), message });
  if (!isObject(doc)) return fail([{ file, message: 'a semver template is a map with schema: olm.semver' }]);
  const top = caseInsensitive(doc, TOP_KEYS, '', err);
  if (top.schema !== Schema.SemverTemplate)
    err('schema', `must be ${Schema.SemverTemplate}, found ${JSON.stringify(top.schema)}`);
  const flag = (key: string): boolean => {
    const v = top[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') err(key, 'must be true or false');
    return v === true;
  };
  const generateMajorChannels = flag('generateMajorChannels');
  let generateMinorChannels = flag('generateMinorChannels');
  if (!generateMajorChannels && !generateMinorChannels) generateMinorChannels = true;
  let pref = top.defaultChannelTypePreference;
  if (pref === undefined || pref === null || pref === '')
    pref = generateMinorChannels ? StreamKind.Minor : StreamKind.Major;
  if (pref !== StreamKind.Minor && pref !== StreamKind.Major) {
    err('defaultChannelTypePreference', `"${String(pref)}" is not major or minor`);
    pref = StreamKind.Minor;
  } else if (pref === StreamKind.Minor && !generateMinorChannels) {
    err('defaultChannelTypePreference', 'is minor, but minor channels are not generated');
  } else if (pref === StreamKind.Major && !generateMajorChannels) {
    err('defaultChannelTypePreference', 'is major, but major channels are not generated');
  }
  const bundles = { candidate: [], fast: [], stable: [] } as Record<Archetype, string[]>;
  for (const a of Archetypes) {
    const section = top[a];
    if (section === undefined || section === null) continue;
    if (!isObject(section)) {
      err(a, 'must be a map with a list of bundles');
      continue;
    }
    const list = caseInsensitive(section, ['bundles'], `${a}.`, err).bundles;
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      err(`${a}.bundles`, 'must be a list of {image}');
      continue;
    }
    list.forEach((b, i) => {
      const image = isObject(b) ? caseInsensitive(b, ['image'], `${a}.bundles[${i}].`, err).image : undefined;
      if (typeof image !== 'string' || image === '')
        err(`${a}.bundles[${i}].image`, 'is required: a bundle reference');
      else bundles[a].push(image);
    });
  }
  if (Archetypes.every((a) => bundles[a].length === 0)) err(undefined, 'the template lists no bundles');
  if (problems.length) return fail(problems);
  return ok({
    generateMajorChannels,
    generateMinorChannels,
    defaultChannelTypePreference: pref as StreamKind,
    bundles,
  });
}

/** Picks `keys` out of `obj` ignoring case; any other key is reported (opm decodes strictly). */
function caseInsensitive(
  obj: Record<string, unknown>,
  keys: readonly string[],
  prefix: string,
  err: (f: string, m: string) => void,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    const key = keys.find((want) => want.toLowerCase() === k.toLowerCase());
    if (key === undefined) err(`${prefix}${k}`, `unknown field; the template knows ${keys.join(', ')}`);
    else out[key] = v;
  }
  return out;
}

/** A rendered bundle as the template needs it. */
export interface TemplateBundle {
  ref: string;
  package: string;
  name: string;
  version: string;
  /** Its CSV, for the package's description and icon when it heads the default channel. */
  csv?: KubeManifest;
}

export interface SemverResult {
  package: PackageDoc & { defaultChannel: string };
  channels: ChannelDoc[];
}

/**
 * The package's description and icon as opm's template takes them from the CSV of the default
 * channel's head: `spec.description` when it is a non-empty string; the first of `spec.icon`
 * when the whole list decodes (base64 as Go reads it), its data re-encoded as Go writes it.
 */
export function templatePackageInfo(csv: KubeManifest): Pick<PackageDoc, 'description' | 'icon'> {
  const spec = isObject(csv.spec) ? csv.spec : {};
  const out: Pick<PackageDoc, 'description' | 'icon'> = {};
  if (typeof spec.description === 'string' && spec.description !== '') out.description = spec.description;
  const icons = spec.icon;
  if (Array.isArray(icons) && icons.length > 0 && icons.every(decodesAsGoIcon)) {
    const first = (icons[0] ?? {}) as { base64data?: string | null; mediatype?: string | null };
    const data = first.base64data ? Buffer.from(first.base64data, 'base64').toString('base64') : '';
    // A first icon without data is left out: opm would write `base64data: null`.
    if (data) out.icon = { base64data: data, mediatype: first.mediatype ?? '' };
  }
  return out;
}

/** Whether Go's JSON decoding of a registry Icon accepts `v` (null decodes to an empty icon). */
function decodesAsGoIcon(v: unknown): boolean {
  if (v === null) return true;
  if (!isObject(v)) return false;
  const { base64data, mediatype } = v;
  const okData =
    base64data === undefined ||
    base64data === null ||
    (typeof base64data === 'string' && isGoBase64(base64data));
  const okType = mediatype === undefined || mediatype === null || typeof mediatype === 'string';
  return okData && okType;
}

interface Member {
  name: string;
  version: Version;
}

/** Generates channels and the default channel from the template and its rendered bundles. */
export function generateSemverChannels(
  spec: SemverTemplateSpec,
  bundles: ReadonlyMap<string, TemplateBundle>,
  file = '',
): Result<SemverResult> {
  const problems: Problem[] = [];
  const err = (field: string, message: string) =>
    problems.push({ ...(file ? { file } : {}), field, message });
  let pkg: string | undefined;
  const members: Record<Archetype, Member[]> = { candidate: [], fast: [], stable: [] };
  for (const a of Archetypes) {
    const names = new Set<string>();
    const withoutBuild = new Map<string, string>();
    for (const [i, ref] of spec.bundles[a].entries()) {
      const field = `${a}.bundles[${i}].image`;
      const b = bundles.get(ref);
      if (!b) {
        err(field, `${ref} could not be rendered`);
        continue;
      }
      const v = parseVersion(b.version);
      if (!v) {
        err(field, `bundle ${b.name} has version "${b.version}", which is not semver`);
        continue;
      }
      if (pkg === undefined) pkg = b.package;
      else if (b.package !== pkg) {
        err(field, `bundle ${b.name} is in package ${b.package}, not ${pkg}`);
        continue;
      }
      if (names.has(b.name)) {
        err(field, `bundle ${b.name} is listed twice`);
        continue;
      }
      names.add(b.name);
      const core = versionCore(v);
      const clash = withoutBuild.get(core);
      if (clash) {
        err(
          field,
          `bundles ${clash} and ${b.name} differ only in build metadata (${b.version}), which cannot be ordered`,
        );
        continue;
      }
      withoutBuild.set(core, b.name);
      members[a].push({ name: b.name, version: v });
    }
  }
  if (problems.length) return fail(problems);
  if (pkg === undefined)
    return fail([{ ...(file ? { file } : {}), message: 'the template lists no bundles' }]);

  const channels = new Map<string, ChannelDoc>();
  // opm's marker starts at the least stable archetype and version 0.0.0, with no kind.
  let hw: HighWater = { archetype: 0, kind: undefined, version: parseVersion('0.0.0')!, name: '' };
  Archetypes.forEach((a, rank) => {
    const edges = semverTemplateEdges(members[a]);
    const sorted = [...members[a]].sort((x, y) => compareVersions(x.version, y.version));
    for (const m of sorted) {
      const kinds: [StreamKind, string][] = [];
      if (spec.generateMajorChannels) kinds.push([StreamKind.Major, `${a}-v${m.version.major}`]);
      if (spec.generateMinorChannels)
        kinds.push([StreamKind.Minor, `${a}-v${m.version.major}.${m.version.minor}`]);
      for (const [kind, name] of kinds) {
        let ch = channels.get(name);
        if (!ch) {
          ch = { schema: Schema.Channel, package: pkg, name, entries: [] };
          channels.set(name, ch);
          const candidate = { archetype: rank, kind, version: m.version, name };
          if (higherWater(candidate, hw, spec.defaultChannelTypePreference)) hw = candidate;
        }
        ch.entries.push({ name: m.name, ...edges.get(m.name) });
      }
    }
  });
  const sorted = [...channels.keys()].sort().map((name) => channels.get(name)!);
  const head = channels.get(hw.name)?.entries.at(-1)?.name;
  const csv = [...bundles.values()].find((b) => b.name === head)?.csv;
  return ok({
    package: {
      schema: Schema.Package,
      name: pkg,
      defaultChannel: hw.name,
      ...(csv ? templatePackageInfo(csv) : {}),
    },
    channels: sorted,
  });
}

interface HighWater {
  archetype: number;
  kind: StreamKind | undefined;
  version: Version;
  name: string;
}

/** opm's order of preference: more stable archetype, then higher version, then the preferred kind, then minor over major. */
function higherWater(a: Omit<HighWater, 'name'>, b: Omit<HighWater, 'name'>, pref: StreamKind): boolean {
  if (a.archetype !== b.archetype) return a.archetype > b.archetype;
  const cmp = compareVersions(a.version, b.version);
  if (cmp !== 0) return cmp > 0;
  if (a.kind !== b.kind) {
    if (a.kind === pref) return true;
    if (b.kind === pref) return false;
    return kindRank(a.kind) > kindRank(b.kind);
  }
  return false;
}

const kindRank = (k: StreamKind | undefined) => (k === StreamKind.Minor ? 2 : k === StreamKind.Major ? 1 : 0);
