/**
 * Random resolution scenarios for a ClusterExtension, from a seed: one to four ClusterCatalogs
 * (priorities, labels, some Unavailable, rarely one not served), each with its own bundles of the
 * package (versions with prereleases and build metadata), channels with replaces, skips and
 * skipRange edges, and deprecations; a spec with a version range (valid and invalid ones),
 * channels, a label selector and an upgrade policy; installed or fresh.
 *
 * Within one catalog no two bundles share a version: v1 loads a package's files concurrently, so
 * which of two equal versions it picks is not fixed (see src/olmv1/package-content.ts).
 */
import type { LabelSelector, LabelSelectorRequirement } from '../../../src/apis/meta.js';

export interface ScenarioCatalog {
  name: string;
  priority: number;
  labels: Record<string, string>;
  availabilityMode: 'Available' | 'Unavailable';
  unserved: boolean;
  docs: Record<string, unknown>[];
}

export interface Scenario {
  catalogs: ScenarioCatalog[];
  source: {
    packageName: string;
    version?: string;
    channels?: string[];
    selector?: LabelSelector;
    upgradeConstraintPolicy?: 'CatalogProvided' | 'SelfCertified';
  };
  installed?: { name: string; version: string };
}

const PKG = 'pkg';
const CATALOG_NAMES = ['alpha', 'beta', 'gamma', 'delta'];
const CHANNELS = ['stable', 'fast', 'candidate'];
const PRERELEASES = ['alpha.1', 'alpha.2', 'beta', 'rc.1', '0', '1'];

/** Version ranges as users write them, and some v1 refuses. */
const RANGES = [
  '1.2.0',
  '=1.1.0',
  'v1.0.0',
  '^1',
  '^1.1',
  '^0.2',
  '^0.0.1',
  '^0',
  '~1',
  '~1.2',
  '~0',
  '~>1.1',
  '1.x',
  '1.2.x',
  '1.*',
  '*',
  'x',
  '>=1.0.0',
  '>1.1',
  '>1',
  '<2',
  '<=1.1',
  '<=1.x',
  '=<1.2.0',
  '=>1.0.0',
  '!=1.1.0',
  '!=1.x',
  '!=1.1',
  '>=1.0.0 <2.0.0',
  '>=1.0.0, <2.0.0',
  '>= 1.0.0 , < 2.0.0',
  '1.0 - 1.2',
  '0.1 - 1.1.0',
  '>=1.0.0-0',
  '>=1.1.0-alpha.1 <1.2.0',
  '^1.1.0-rc.1',
  '~1.2.0-beta',
  '1.2.0-alpha.1',
  '<1.2 || >=2',
  '^0.1 || ^2',
  '>1.0.0 <1.2.0 || 2.x',
  '1.1.0+build',
  ' ^1 ',
  '\t~1.1,\t>1.1.0',
  // refused by Masterminds
  '>>1',
  '1.0.0 ||',
  '|| 1.0.0',
  'abc',
  '1.2.3.4',
  '01.2',
  '1.0.0,',
  '>=1.0.0 <',
  '~1.2-',
  '1.0 -2.0',
  '^1 ~',
  '1||2||',
  'v',
  '=',
  '1 . 2',
  '1.2.3-',
  '1.2.3-01',
  '1|2',
  '>=1.0.0,,<2.0.0',
  '1.0.0 - 1.x - 2',
];

export function scenario(rnd: () => number): Scenario {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const chance = (p: number) => rnd() < p;
  const versionText = () => {
    let v = `${pick([0, 1, 1, 1, 2])}.${pick([0, 1, 1, 2, 3])}.${pick([0, 0, 1, 2])}`;
    if (chance(0.15)) v += `-${pick(PRERELEASES)}`;
    if (chance(0.05)) v += '+b1';
    return v;
  };

  const names = CATALOG_NAMES.filter(() => chance(0.6));
  if (names.length === 0) names.push(pick(CATALOG_NAMES));
  const catalogs = names.map((name): ScenarioCatalog => {
    const docs: Record<string, unknown>[] = [];
    const versions = new Map<string, string>(); // by version without build metadata
    const count = Math.floor(rnd() * 7);
    for (let i = 0; i < count; i++) {
      const v = versionText();
      versions.set(v.split('+')[0]!, v);
    }
    const bundles = [...versions.values()].map((v) => ({ name: `${PKG}.v${v}`, version: v }));
    if (!chance(0.05)) {
      docs.push({ schema: 'olm.package', name: PKG, defaultChannel: 'stable' });
      for (const ch of CHANNELS.filter(() => chance(0.6))) {
        const inChannel = bundles.filter(() => chance(0.75)).sort((a, b) => cmp(a.version, b.version));
        const entries = inChannel.map((b, i) => {
          const e: Record<string, unknown> = { name: b.name };
          if (i > 0 && chance(0.8)) e.replaces = inChannel[i - 1]!.name;
          if (i > 1 && chance(0.2)) e.skips = [inChannel[Math.floor(rnd() * (i - 1))]!.name];
          if (chance(0.15))
            e.skipRange = pick([
              `<${b.version.split(/[-+]/)[0]}`,
              `>=1.0.0 <${b.version.split(/[-+]/)[0]}`,
              '>=0.1.0 <1.1.0',
              'not a range',
            ]);
          if (chance(0.03)) e.replaces = `${PKG}.v9.9.9`; // installed elsewhere
          return e;
        });
        docs.push({ schema: 'olm.channel', package: PKG, name: ch, entries });
      }
      for (const b of bundles) {
        docs.push({
          schema: 'olm.bundle',
          package: PKG,
          name: b.name,
          image: `registry.test/${PKG}-bundle:v${b.version.replace('+', '_')}`,
          properties: [{ type: 'olm.package', value: { packageName: PKG, version: b.version } }],
        });
      }
      if (chance(0.3)) {
        const entries: Record<string, unknown>[] = bundles
          .filter(() => chance(0.4))
          .map((b) => ({
            reference: { schema: 'olm.bundle', name: b.name },
            message: `${b.name} is deprecated`,
          }));
        if (chance(0.2))
          entries.push({ reference: { schema: 'olm.package' }, message: 'the package is deprecated' });
        if (chance(0.2))
          entries.push({ reference: { schema: 'olm.channel', name: 'fast' }, message: 'fast is deprecated' });
        docs.push({ schema: 'olm.deprecations', package: PKG, entries });
      }
    }
    // Another package beside it, which resolution must not see.
    docs.push({ schema: 'olm.package', name: 'other' });
    docs.push({
      schema: 'olm.bundle',
      package: 'other',
      name: 'other.v9.0.0',
      image: 'registry.test/other:v9',
      properties: [{ type: 'olm.package', value: { packageName: 'other', version: '9.0.0' } }],
    });
    docs.push({
      schema: 'olm.channel',
      package: 'other',
      name: 'stable',
      entries: [{ name: 'other.v9.0.0' }],
    });
    return {
      name,
      priority: pick([-5, 0, 0, 0, 10, 10]),
      labels: chance(0.8) ? { tier: pick(['a', 'b']) } : {},
      availabilityMode: chance(0.1) ? 'Unavailable' : 'Available',
      unserved: chance(0.02),
      docs,
    };
  });

  const source: Scenario['source'] = { packageName: chance(0.03) ? 'missing' : PKG };
  if (chance(0.6)) source.version = pick(RANGES);
  if (chance(0.35))
    source.channels = CHANNELS.filter(() => chance(0.5)).concat(chance(0.1) ? ['nowhere'] : []);
  if (chance(0.35))
    source.selector = pick<LabelSelector>([
      { matchLabels: { tier: 'a' } },
      { matchLabels: { tier: 'b' } },
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] },
      { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
      { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
      {},
      // Refused by apimachinery, as v1 reads the selector.
      { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] },
      { matchExpressions: [{ key: 'tier', operator: 'NotIn' } as LabelSelectorRequirement] },
      { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['a', 'b"c'] }] },
      { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist', values: ['a'] }] },
      {
        matchExpressions: [
          { key: 'tier', operator: 'Equals', values: ['a'] } as unknown as LabelSelectorRequirement,
        ],
      },
      {
        matchLabels: { tier: 'a' },
        matchExpressions: [
          { key: 'tier', operator: 'Exists' },
          { key: 'x', operator: 'In', values: [] },
        ],
      },
      { matchLabels: { tier: '-a' } },
      { matchLabels: { 'bad key': 'a' } },
      { matchExpressions: [{ key: 'Example.com/tier', operator: 'Exists' }] },
      { matchExpressions: [{ key: 'a/b/c', operator: 'In', values: [] }] },
      { matchExpressions: [{ key: '/tier', operator: 'DoesNotExist' }] },
      { matchExpressions: [{ key: `${'p'.repeat(254)}/${'n'.repeat(64)}`, operator: 'Exists' }] },
      { matchExpressions: [{ key: 'example.com/', operator: 'Exists' }] },
      { matchExpressions: [{ key: 'olm.example-1.io/tier_2', operator: 'NotIn', values: ['x'] }] },
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'é', 'x'.repeat(64), ''] }] },
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['b_', 'b_'] }] },
    ]);
  if (chance(0.5)) source.upgradeConstraintPolicy = chance(0.5) ? 'SelfCertified' : 'CatalogProvided';

  const out: Scenario = { catalogs, source };
  if (chance(0.55)) {
    const all = catalogs.flatMap((c) => c.docs.filter((d) => d.schema === 'olm.bundle' && d.package === PKG));
    if (all.length > 0 && chance(0.9)) {
      const b = pick(all);
      const version = (b.properties as { value: { version: string } }[])[0]!.value.version;
      out.installed = { name: b.name as string, version };
    } else out.installed = { name: `${PKG}.v1.1.5`, version: '1.1.5' };
  }
  return out;
}

/** Orders versions for channel entries only (no prerelease subtleties needed here). */
function cmp(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map((x) => Number(x));
  const pb = b.split(/[.+-]/).map((x) => Number(x));
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return a < b ? -1 : 1;
}
