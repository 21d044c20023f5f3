import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ChannelEntry, emptyConfig } from '../../../src/apis/fbc.js';
import {
  type Archetype,
  generateSemverChannels,
  parseSemverTemplate,
  type SemverTemplateSpec,
  type TemplateBundle,
} from '../../../src/catalog/semver-template.js';
import { validateCatalog } from '../../../src/catalog/validate.js';
import { bundleDoc, pkgDoc } from './docs.js';
import { runs } from '../../support/properties.js';

const k = (v: string) => `kite.v${v}`;

/** Templates here name bundles by version; the "rendered" bundle of `v` is kite.v<v>. */
function run(bundles: Partial<Record<Archetype, string[]>>, flags: Partial<SemverTemplateSpec> = {}) {
  const spec: SemverTemplateSpec = {
    generateMajorChannels: false,
    generateMinorChannels: true,
    defaultChannelTypePreference: 'minor',
    bundles: { candidate: [], fast: [], stable: [], ...bundles },
    ...flags,
  };
  const rendered = new Map<string, TemplateBundle>();
  for (const v of Object.values(spec.bundles).flat())
    rendered.set(v, { ref: v, package: 'kite', name: k(v), version: v });
  const r = generateSemverChannels(spec, rendered);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return {
    defaultChannel: r.value.package.defaultChannel,
    channels: Object.fromEntries(r.value.channels.map((c) => [c.name, c.entries])),
  };
}

const e = (v: string, replaces?: string, skips?: string[]): ChannelEntry => ({
  name: k(v),
  ...(replaces ? { replaces: k(replaces) } : {}),
  ...(skips ? { skips: skips.map(k) } : {}),
});

// The version set of opm's published semver-template walkthrough: eleven candidate versions,
// five of them also fast, one stable.
const walkthrough = {
  candidate: [
    '0.1.0',
    '0.1.1',
    '0.1.2',
    '0.1.3',
    '0.2.0',
    '0.2.1',
    '0.2.2',
    '0.3.0',
    '1.0.0',
    '1.0.1',
    '1.1.0',
  ],
  fast: ['0.2.1', '0.2.2', '0.3.0', '1.0.1', '1.1.0'],
  stable: ['1.0.1'],
};

describe('semver template: the walkthrough, restated', () => {
  // Each Y-stream's newest replaces the previous Y-stream's newest and skips every other earlier
  // entry of its major; the edges are the archetype's, whichever channel an entry is in.
  const skips0 = ['0.1.0', '0.1.1', '0.1.2'];
  const candidate = {
    '0.1.3': e('0.1.3', undefined, skips0),
    '0.2.2': e('0.2.2', '0.1.3', [...skips0, '0.2.0', '0.2.1']),
    '0.3.0': e('0.3.0', '0.2.2', [...skips0, '0.1.3', '0.2.0', '0.2.1']),
    '1.0.1': e('1.0.1', undefined, ['1.0.0']),
    '1.1.0': e('1.1.0', '1.0.1', ['1.0.0']),
  };

  it('minor channels: a Y-stream per channel, its head linked to the previous Y-stream’s head', () => {
    expect(run(walkthrough)).toEqual({
      defaultChannel: 'stable-v1.0',
      channels: {
        'candidate-v0.1': [e('0.1.0'), e('0.1.1'), e('0.1.2'), candidate['0.1.3']],
        'candidate-v0.2': [e('0.2.0'), e('0.2.1'), candidate['0.2.2']],
        'candidate-v0.3': [candidate['0.3.0']],
        'candidate-v1.0': [e('1.0.0'), candidate['1.0.1']],
        'candidate-v1.1': [candidate['1.1.0']],
        'fast-v0.2': [e('0.2.1'), e('0.2.2', undefined, ['0.2.1'])],
        'fast-v0.3': [e('0.3.0', '0.2.2', ['0.2.1'])],
        'fast-v1.0': [e('1.0.1')],
        'fast-v1.1': [e('1.1.0', '1.0.1')],
        'stable-v1.0': [e('1.0.1')],
      },
    });
  });

  it('major channels: the same edges, never across majors', () => {
    expect(
      run(walkthrough, {
        generateMajorChannels: true,
        generateMinorChannels: false,
        defaultChannelTypePreference: 'major',
      }),
    ).toEqual({
      defaultChannel: 'stable-v1',
      channels: {
        'candidate-v0': [
          e('0.1.0'),
          e('0.1.1'),
          e('0.1.2'),
          candidate['0.1.3'],
          e('0.2.0'),
          e('0.2.1'),
          candidate['0.2.2'],
          candidate['0.3.0'],
        ],
        'candidate-v1': [e('1.0.0'), candidate['1.0.1'], candidate['1.1.0']],
        'fast-v0': [e('0.2.1'), e('0.2.2', undefined, ['0.2.1']), e('0.3.0', '0.2.2', ['0.2.1'])],
        'fast-v1': [e('1.0.1'), e('1.1.0', '1.0.1')],
        'stable-v1': [e('1.0.1')],
      },
    });
  });

  it('the issue’s template: a subscriber at 0.1.0 on candidate-v0 moves to 0.2.1', () => {
    const r = run(
      {
        candidate: ['0.1.0', '0.1.1', '0.2.0', '0.2.1'],
        fast: ['0.1.1', '0.2.1'],
        stable: ['0.1.1', '0.2.1'],
      },
      { generateMajorChannels: true, generateMinorChannels: true },
    );
    const head = e('0.2.1', '0.1.1', ['0.1.0', '0.2.0']);
    expect(r.defaultChannel).toBe('stable-v0.2');
    expect(r.channels['candidate-v0']).toEqual([
      e('0.1.0'),
      e('0.1.1', undefined, ['0.1.0']),
      e('0.2.0'),
      head,
    ]);
    expect(r.channels['candidate-v0.2']).toEqual([e('0.2.0'), head]);
    expect(r.channels['stable-v0.2']).toEqual([e('0.2.1', '0.1.1')]);
  });

  it.each([
    ['minor', 'stable-v1.0'],
    ['major', 'stable-v1'],
  ] as const)('both kinds: the preference (%s) picks between equally new channels', (pref, want) => {
    const r = run(walkthrough, {
      generateMajorChannels: true,
      generateMinorChannels: true,
      defaultChannelTypePreference: pref,
    });
    expect(r.defaultChannel).toBe(want);
    expect(Object.keys(r.channels)).toHaveLength(15); // ten minor channels and five major ones
  });
});

describe('semver template: edges and the default channel', () => {
  it('prereleases belong to their Y-stream and are skipped by its release', () => {
    const versions = [
      '0.1.0',
      '0.1.1',
      '1.1.0',
      '1.2.1',
      '1.3.1-alpha',
      '1.3.1-beta',
      '1.3.1',
      '1.4.1-beta1',
      '1.4.1-beta2',
      '1.4.1',
      '2.1.0',
      '2.1.1',
      '2.3.1',
      '2.3.2',
      '3.1.0',
      '3.1.1',
    ];
    const r = run(
      { stable: versions },
      { generateMajorChannels: true, generateMinorChannels: false, defaultChannelTypePreference: 'major' },
    );
    expect(r.defaultChannel).toBe('stable-v3');
    expect(r.channels['stable-v1']).toEqual([
      e('1.1.0'),
      e('1.2.1', '1.1.0'),
      e('1.3.1-alpha'),
      e('1.3.1-beta'),
      e('1.3.1', '1.2.1', ['1.1.0', '1.3.1-alpha', '1.3.1-beta']),
      e('1.4.1-beta1'),
      e('1.4.1-beta2'),
      e('1.4.1', '1.3.1', ['1.1.0', '1.2.1', '1.3.1-alpha', '1.3.1-beta', '1.4.1-beta1', '1.4.1-beta2']),
    ]);
    expect(r.channels['stable-v2']).toEqual([
      e('2.1.0'),
      e('2.1.1', undefined, ['2.1.0']),
      e('2.3.1'),
      e('2.3.2', '2.1.1', ['2.1.0', '2.3.1']),
    ]);
  });

  it('the default is the channel whose first bundle is newest, before the kind preference', () => {
    const r = run(
      { stable: ['1.0.0', '1.5.0'] },
      { generateMajorChannels: true, generateMinorChannels: true, defaultChannelTypePreference: 'major' },
    );
    expect(r.defaultChannel).toBe('stable-v1.5');
  });

  it('a more stable archetype wins over newer versions', () => {
    expect(run({ candidate: ['2.0.0'], fast: ['1.0.0'] }).defaultChannel).toBe('fast-v1.0');
  });

  it('the template order of bundles does not matter', () => {
    expect(run({ stable: ['0.2.0', '0.1.0', '0.1.1'] })).toEqual(
      run({ stable: ['0.1.0', '0.1.1', '0.2.0'] }),
    );
  });

  it('refuses versions that differ only in build metadata', () => {
    const spec: SemverTemplateSpec = {
      generateMajorChannels: false,
      generateMinorChannels: true,
      defaultChannelTypePreference: 'minor',
      bundles: { candidate: [], fast: [], stable: ['a', 'b'] },
    };
    const rendered = new Map([
      ['a', { ref: 'a', package: 'kite', name: 'kite.a', version: '1.0.0+one' }],
      ['b', { ref: 'b', package: 'kite', name: 'kite.b', version: '1.0.0+two' }],
    ]);
    const r = generateSemverChannels(spec, rendered, 't.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toEqual([
        expect.objectContaining({
          file: 't.yaml',
          field: 'stable.bundles[1].image',
          message: expect.stringContaining('differ only in build metadata'),
        }),
      ]);
  });

  it('refuses bundles of two packages', () => {
    const spec: SemverTemplateSpec = {
      generateMajorChannels: false,
      generateMinorChannels: true,
      defaultChannelTypePreference: 'minor',
      bundles: { candidate: [], fast: [], stable: ['a', 'b'] },
    };
    const rendered = new Map([
      ['a', { ref: 'a', package: 'kite', name: 'kite.v1.0.0', version: '1.0.0' }],
      ['b', { ref: 'b', package: 'kestrel', name: 'kestrel.v1.0.1', version: '1.0.1' }],
    ]);
    expect(generateSemverChannels(spec, rendered).ok).toBe(false);
  });
});

describe('parseSemverTemplate', () => {
  it('reads keys in any case, as opm’s Go decoder does, and defaults to minor channels', () => {
    const r = parseSemverTemplate(
      { Schema: 'olm.semver', Stable: { Bundles: [{ Image: 'quay.example/kite:v1' }] } },
      't.yaml',
    );
    expect(r).toEqual({
      ok: true,
      value: {
        generateMajorChannels: false,
        generateMinorChannels: true,
        defaultChannelTypePreference: 'minor',
        bundles: { candidate: [], fast: [], stable: ['quay.example/kite:v1'] },
      },
    });
  });

  it.each([
    ['a wrong schema', { schema: 'olm.template', stable: { bundles: [{ image: 'x' }] } }, 'schema'],
    [
      'an unknown field',
      { schema: 'olm.semver', invalid: {}, stable: { bundles: [{ image: 'x' }] } },
      'invalid',
    ],
    [
      'a preference for channels not generated',
      {
        schema: 'olm.semver',
        generateMinorChannels: true,
        defaultChannelTypePreference: 'major',
        stable: { bundles: [{ image: 'x' }] },
      },
      'defaultChannelTypePreference',
    ],
    [
      'an unknown preference',
      { schema: 'olm.semver', defaultChannelTypePreference: 'patch', stable: { bundles: [{ image: 'x' }] } },
      'defaultChannelTypePreference',
    ],
    [
      'a bundle without image',
      { schema: 'olm.semver', stable: { bundles: [{}] } },
      'stable.bundles[0].image',
    ],
    ['no bundles at all', { schema: 'olm.semver' }, undefined],
    [
      'avoidSkipPatch, which opm v1.73 no longer knows',
      { schema: 'olm.semver', avoidSkipPatch: true, stable: { bundles: [{ image: 'x' }] } },
      'avoidSkipPatch',
    ],
  ])('reports %s', (_, doc, field) => {
    const r = parseSemverTemplate(doc, 't.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toContainEqual(
        expect.objectContaining({ file: 't.yaml', ...(field ? { field } : {}) }),
      );
  });
});

describe('semver template: properties', () => {
  const version = fc
    .tuple(
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      fc.option(fc.constantFrom('alpha', 'beta.1', 'rc.2'), { nil: undefined }),
    )
    .map(([a, b, c, pre]) => `${a}.${b}.${c}${pre ? `-${pre}` : ''}`);
  const versions = fc.uniqueArray(version, { minLength: 1, maxLength: 12 });

  it('every channel is a valid graph whose newest version upgrades every other entry directly', () => {
    fc.assert(
      fc.property(versions, versions, fc.boolean(), fc.boolean(), (stable, candidate, major, minor) => {
        const spec = {
          generateMajorChannels: major,
          generateMinorChannels: minor || !major,
          defaultChannelTypePreference: (minor || !major ? 'minor' : 'major') as 'minor' | 'major',
        };
        const r = run({ stable, candidate }, spec);
        const cfg = emptyConfig();
        cfg.packages.push(pkgDoc('kite', r.defaultChannel));
        for (const [name, entries] of Object.entries(r.channels))
          cfg.channels.push({ schema: 'olm.channel', package: 'kite', name, entries });
        for (const v of new Set([...stable, ...candidate])) cfg.bundles.push(bundleDoc('kite', v));
        expect(validateCatalog(cfg).errors).toEqual([]);
        expect(r.defaultChannel.startsWith('stable-')).toBe(true);
        for (const entries of Object.values(r.channels)) {
          const names = entries.map((x) => x.name);
          const incoming = new Set(entries.flatMap((x) => [x.replaces, ...(x.skips ?? [])]));
          expect(names.filter((x) => !incoming.has(x))).toEqual([names.at(-1)]);
          const head = entries.at(-1)!;
          const reached = new Set([head.name, head.replaces, ...(head.skips ?? [])]);
          expect(names.filter((x) => !reached.has(x))).toEqual([]);
        }
      }),
      runs(200),
    );
  });
});
