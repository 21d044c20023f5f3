import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeManifest } from '../../../src/apis/bundle.js';
import { type DeclarativeConfig, emptyConfig } from '../../../src/apis/fbc.js';
import { type PublishInput, type PublishOptions, publishBundle } from '../../../src/catalog/publish.js';
import {
  Archetypes,
  generateSemverChannels,
  type SemverTemplateSpec,
  type TemplateBundle,
} from '../../../src/catalog/semver-template.js';
import { runs } from '../../support/properties.js';
import { bundleDoc, n } from './docs.js';

/** A CSV with the given edges, as publish sees it. */
function csv(
  version: string,
  edges: { replaces?: string; skips?: string[]; skipRange?: string } = {},
): KubeManifest {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: n('kite', version),
      ...(edges.skipRange ? { annotations: { 'olm.skipRange': edges.skipRange } } : {}),
    },
    spec: {
      version,
      description: `kite ${version}`,
      icon: [{ base64data: 'PHN2Zy8+', mediatype: 'image/svg+xml' }],
      ...(edges.replaces ? { replaces: edges.replaces } : {}),
      ...(edges.skips ? { skips: edges.skips } : {}),
    },
  };
}

const input = (
  version: string,
  channels = ['stable'],
  edges: Parameters<typeof csv>[1] = {},
  def = 'stable',
): PublishInput => ({
  doc: bundleDoc('kite', version),
  csv: csv(version, edges),
  annotationChannels: channels,
  annotationDefaultChannel: def,
});

/** Publishes in order; returns the catalog and the entries of each channel. */
function publishAll(steps: [PublishInput, PublishOptions?][], start: DeclarativeConfig = emptyConfig()) {
  let cfg = start;
  for (const [i, o] of steps) {
    const r = publishBundle(cfg, i, o);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    cfg = r.value.config;
  }
  return { cfg, channels: Object.fromEntries(cfg.channels.map((c) => [c.name, c.entries])) };
}

describe('publishBundle', () => {
  it('creates the package and channel for the first bundle', () => {
    const r = publishBundle(emptyConfig(), input('1.0.0'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({
      package: 'kite',
      version: '1.0.0',
      packageCreated: true,
      defaultChannel: 'stable',
      channels: [{ name: 'stable', created: true, entry: { name: n('kite', '1.0.0') } }],
    });
    expect(r.value.config.packages).toEqual([
      {
        schema: 'olm.package',
        name: 'kite',
        defaultChannel: 'stable',
        icon: { base64data: 'PHN2Zy8+', mediatype: 'image/svg+xml' },
        description: 'kite 1.0.0',
      },
    ]);
  });

  it('uses the edges the CSV declares', () => {
    const { channels } = publishAll([
      [input('1.0.0')],
      [input('1.1.0', ['stable'], { replaces: n('kite', '1.0.0'), skipRange: '<1.1.0' })],
    ]);
    expect(channels.stable).toEqual([
      { name: n('kite', '1.0.0') },
      { name: n('kite', '1.1.0'), replaces: n('kite', '1.0.0'), skipRange: '<1.1.0' },
    ]);
  });

  it('computes edges when the CSV declares none: skip the own Y-stream, replace the previous one', () => {
    const { channels } = publishAll([[input('0.1.0')], [input('0.1.1')], [input('0.2.0')], [input('0.2.1')]]);
    expect(channels.stable).toEqual([
      { name: n('kite', '0.1.0') },
      { name: n('kite', '0.1.1'), skips: [n('kite', '0.1.0')] },
      { name: n('kite', '0.2.0'), replaces: n('kite', '0.1.1') },
      { name: n('kite', '0.2.1'), replaces: n('kite', '0.1.1'), skips: [n('kite', '0.2.0')] },
    ]);
  });

  it('with --semver places the bundle on the template’s minor channel of its archetype', () => {
    const { cfg, channels } = publishAll([
      [input('1.2.0'), { semver: true }],
      [input('1.2.3'), { semver: true, archetype: 'candidate' }],
      [input('1.3.0'), { semver: true }],
    ]);
    expect(Object.keys(channels).sort()).toEqual(['candidate-v1.2', 'stable-v1.2', 'stable-v1.3']);
    expect(cfg.packages[0]!.defaultChannel).toBe('stable-v1.3');
    // The template's edges: 1.3.0 heads the next minor channel and replaces 1.2.0's.
    expect(channels['stable-v1.3']).toEqual([{ name: n('kite', '1.3.0'), replaces: n('kite', '1.2.0') }]);
  });

  it('with --semver also grows the major channels a package already has', () => {
    const major = emptyConfig();
    major.packages.push({ schema: 'olm.package', name: 'kite', defaultChannel: 'stable-v1' });
    major.channels.push({ schema: 'olm.channel', package: 'kite', name: 'stable-v1', entries: [] });
    const { channels } = publishAll(
      [
        [input('1.0.0'), { semver: true }],
        [input('1.1.0'), { semver: true }],
      ],
      major,
    );
    expect(channels['stable-v1']).toEqual([
      { name: n('kite', '1.0.0') },
      { name: n('kite', '1.1.0'), replaces: n('kite', '1.0.0') },
    ]);
    expect(channels['stable-v1.1']).toBeUndefined();
  });

  it('with --channel ignores the annotations', () => {
    const { channels } = publishAll([
      [input('1.0.0', ['stable']), { channels: ['fast', 'preview'], defaultChannel: 'fast' }],
    ]);
    expect(Object.keys(channels).sort()).toEqual(['fast', 'preview']);
  });

  it('refuses a version that is already published, naming the flag that overrides', () => {
    const { cfg } = publishAll([[input('1.0.0')]]);
    const again = publishBundle(cfg, input('1.0.0'));
    expect(again).toEqual({
      ok: false,
      errors: [
        expect.objectContaining({
          object: 'package kite',
          message: expect.stringContaining('pass --replace'),
        }),
      ],
    });
  });

  it('replaces a published version with --replace', () => {
    const { cfg } = publishAll([
      [input('1.0.0')],
      [input('1.1.0', ['stable'], { replaces: n('kite', '1.0.0') })],
    ]);
    const r = publishBundle(
      cfg,
      input('1.1.0', ['stable'], { replaces: n('kite', '1.0.0'), skips: [n('kite', '0.9.0')] }),
      { replace: true },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.replaced).toBe(n('kite', '1.1.0'));
    expect(r.value.config.bundles.map((b) => b.name)).toEqual([n('kite', '1.0.0'), n('kite', '1.1.0')]);
    expect(r.value.config.channels[0]!.entries.at(-1)).toEqual({
      name: n('kite', '1.1.0'),
      replaces: n('kite', '1.0.0'),
      skips: [n('kite', '0.9.0')],
    });
  });

  it('refuses an older version without declared edges: the semver rule only appends', () => {
    const { cfg } = publishAll([[input('2.0.0')]]);
    const r = publishBundle(cfg, input('1.0.0'));
    expect(r).toEqual({
      ok: false,
      errors: [
        expect.objectContaining({
          object: 'channel kite/stable',
          message: expect.stringContaining('is not newer than kite.v2.0.0'),
        }),
      ],
    });
  });

  it('refuses what would make the package invalid, saying why', () => {
    const { cfg } = publishAll([[input('1.0.0')]]);
    const r = publishBundle(cfg, input('1.1.0', ['stable'], { replaces: n('kite', '0.5.0') }));
    expect(r).toEqual({
      ok: false,
      errors: [
        expect.objectContaining({
          object: 'channel kite/stable',
          message: expect.stringContaining('multiple channel heads'),
        }),
      ],
    });
  });

  it('moves the default channel only for the newest version', () => {
    const { cfg } = publishAll([
      [input('1.0.0', ['stable'], {}, 'stable')],
      [input('2.0.0', ['next'], {}, 'next')],
    ]);
    expect(cfg.packages[0]!.defaultChannel).toBe('next');
    const older = publishBundle(cfg, input('1.5.0', ['legacy'], {}, 'legacy'));
    if (!older.ok) throw new Error(JSON.stringify(older.errors));
    expect(older.value.defaultChannel).toBe('next');
  });

  it('does not change the catalog it is given', () => {
    const { cfg } = publishAll([[input('1.0.0')]]);
    const before = JSON.stringify(cfg);
    publishBundle(cfg, input('1.1.0'));
    expect(JSON.stringify(cfg)).toBe(before);
  });
});

describe('publishBundle --semver is the semver template, one bundle at a time', () => {
  const version = fc
    .tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }))
    .map(([a, b, c]) => `${a}.${b}.${c}`);
  const placed = fc.uniqueArray(fc.tuple(version, fc.constantFrom(...Archetypes)), {
    minLength: 1,
    maxLength: 12,
    selector: ([v]) => v,
  });

  it('in any order, gives the channels, default channel, description and icon the template renders', () => {
    fc.assert(
      fc.property(placed, (bundles) => {
        const { cfg } = publishAll(bundles.map(([v, archetype]) => [input(v), { semver: true, archetype }]));
        const spec: SemverTemplateSpec = {
          generateMajorChannels: false,
          generateMinorChannels: true,
          defaultChannelTypePreference: 'minor',
          bundles: { candidate: [], fast: [], stable: [] },
        };
        const rendered = new Map<string, TemplateBundle>();
        for (const [v, a] of bundles) {
          spec.bundles[a].push(v);
          rendered.set(v, { ref: v, package: 'kite', name: n('kite', v), version: v, csv: csv(v) });
        }
        const template = generateSemverChannels(spec, rendered);
        if (!template.ok) throw new Error(JSON.stringify(template.errors));
        expect(cfg.packages).toEqual([template.value.package]);
        const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
        expect([...cfg.channels].sort(byName)).toEqual(template.value.channels);
      }),
      runs(200),
    );
  });
});
