/**
 * The semver template (`schema: olm.semver`), generating channels the way
 * `opm alpha render-template semver` does:
 *
 * - Bundles are listed under three channel archetypes, `candidate` < `fast` < `stable` in
 *   stability. Each archetype becomes channels per major version (`stable-v1`) and/or per minor
 *   version (`stable-v1.2`); minor channels only when neither is asked for.
 * - In a channel, entries are sorted by version and grouped by Y-stream (major.minor). The last
 *   entry of each group (its "Z max") skips every earlier entry of its group and, when there is an
 *   earlier group in the same channel, replaces that group's Z max and skips it too. So minor
 *   channels never have replaces; major channels step from Y-stream to Y-stream.
 * - The default channel is the "high-water" one: the most stable archetype that has bundles; in
 *   it, the channel whose first (lowest) bundle has the highest version; on a tie, the channel
 *   kind named by `defaultChannelTypePreference` (default: minor when minor channels are
 *   generated, else major).
 * - `avoidSkipPatch` (an option of earlier opm releases, kept for templates that set it) links
 *   every entry to the one before it with `replaces` and uses no skips.
 * - Versions that differ only in build metadata cannot be ordered and are refused, as are bundles
 *   of different packages and unknown template fields. Keys match case-insensitively, as Go's
 *   JSON decoding does (opm's own examples write `GenerateMajorChannels`, `Stable`, `Image`).
 *
 * Pure: the template and each bundle's name and version in, channels and default channel out.
 */
import { type ChannelDoc, Schema } from '../apis/fbc.js';
import { isObject } from '../bundle/yaml.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { semverChannelEdges } from '../olm/semver-edges.js';
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
  avoidSkipPatch: boolean;
  /** Bundle references (opm: images; Bosun: also bundle directories and archives) per archetype. */
  bundles: Record<Archetype, string[]>;
}

const TOP_KEYS = [
  'schema',
  'generateMajorChannels',
  'generateMinorChannels',
  'defaultChannelTypePreference',
  'avoidSkipPatch',
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
  const avoidSkipPatch = flag('avoidSkipPatch');
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
    avoidSkipPatch,
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
}

export interface SemverResult {
  package: string;
  defaultChannel: string;
  channels: ChannelDoc[];
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

  const unlinked = new Map<string, { archetype: Archetype; kind: StreamKind; members: Member[] }>();
  let hw: { archetype: number; kind: StreamKind | undefined; version: Version | undefined; name: string } = {
    archetype: 0,
    kind: undefined,
    version: undefined,
    name: '',
  };
  Archetypes.forEach((a, rank) => {
    const sorted = [...members[a]].sort((x, y) => compareVersions(x.version, y.version));
    for (const m of sorted) {
      const kinds: [StreamKind, string][] = [];
      if (spec.generateMajorChannels) kinds.push([StreamKind.Major, `${a}-v${m.version.major}`]);
      if (spec.generateMinorChannels)
        kinds.push([StreamKind.Minor, `${a}-v${m.version.major}.${m.version.minor}`]);
      for (const [kind, name] of kinds) {
        let ch = unlinked.get(name);
        if (!ch) {
          ch = { archetype: a, kind, members: [] };
          unlinked.set(name, ch);
          const candidate = { archetype: rank, kind, version: m.version, name };
          if (higherWater(candidate, hw, spec.defaultChannelTypePreference)) hw = candidate;
        }
        ch.members.push(m);
      }
    }
  });

  const channels: ChannelDoc[] = [...unlinked.keys()].sort().map((name) => ({
    schema: Schema.Channel,
    package: pkg!,
    name,
    entries: semverChannelEdges(unlinked.get(name)!.members, spec.avoidSkipPatch),
  }));
  return ok({ package: pkg, defaultChannel: hw.name, channels });
}

/** opm's order of preference: more stable archetype, then higher version, then the preferred kind, then minor over major. */
function higherWater(
  a: { archetype: number; kind: StreamKind | undefined; version: Version | undefined },
  b: { archetype: number; kind: StreamKind | undefined; version: Version | undefined },
  pref: StreamKind,
): boolean {
  if (a.archetype !== b.archetype) return a.archetype > b.archetype;
  const cmp =
    a.version && b.version ? compareVersions(a.version, b.version) : a.version ? 1 : b.version ? -1 : 0;
  if (cmp !== 0) return cmp > 0;
  if (a.kind !== b.kind) {
    if (a.kind === pref) return true;
    if (b.kind === pref) return false;
    return kindRank(a.kind) > kindRank(b.kind);
  }
  return false;
}

const kindRank = (k: StreamKind | undefined) => (k === StreamKind.Minor ? 2 : k === StreamKind.Major ? 1 : 0);
