import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DeclarativeConfig, emptyConfig } from '../../../src/apis/fbc.js';
import { addDocuments } from '../../../src/catalog/load.js';
import { validateCatalog } from '../../../src/catalog/validate.js';
import type { Problem } from '../../../src/util/result.js';
import { bundleDoc, channelDoc, n, packageWith, pkgDoc } from './docs.js';

const fixtures = join(import.meta.dirname, '../../fixtures');

async function loadFile(path: string): Promise<{ cfg: DeclarativeConfig; problems: Problem[] }> {
  const cfg = emptyConfig();
  const problems: Problem[] = [];
  addDocuments(cfg, await readFile(path, 'utf8'), path, problems);
  return { cfg, problems };
}

const valid = () =>
  packageWith('etcd', [
    { name: n('etcd', '1.0.0') },
    { name: n('etcd', '1.1.0'), replaces: n('etcd', '1.0.0') },
  ]);

describe('validateCatalog: the rules opm validate applies', () => {
  it('accepts a well-formed package', () => {
    expect(validateCatalog(valid())).toEqual({ errors: [], warnings: [] });
  });

  it.each<[string, (c: DeclarativeConfig) => void, Partial<Problem>]>([
    [
      'a package name that is not DNS-1123',
      (c) => (c.packages[0]!.name = 'Etcd_Operator'),
      { object: 'package Etcd_Operator', field: 'name' },
    ],
    [
      'a package declared twice',
      (c) => c.packages.push(pkgDoc('etcd', 'stable')),
      { field: 'name', message: 'package etcd is declared twice' },
    ],
    [
      'no default channel',
      (c) => delete c.packages[0]!.defaultChannel,
      { object: 'package etcd', field: 'defaultChannel' },
    ],
    [
      'an unknown default channel',
      (c) => (c.packages[0]!.defaultChannel = 'fast'),
      { field: 'defaultChannel', message: '"fast" is not a channel of package etcd (it has stable)' },
    ],
    [
      'a channel of an unknown package',
      (c) => c.channels.push(channelDoc('nope', 'x', [])),
      { object: 'channel nope/x', field: 'package' },
    ],
    [
      'a channel declared twice',
      (c) => c.channels.push(channelDoc('etcd', 'stable', [{ name: n('etcd', '1.0.0') }])),
      { message: 'channel stable is declared twice in package etcd' },
    ],
    [
      'an empty channel',
      (c) => c.channels.push(channelDoc('etcd', 'empty', [])),
      { object: 'channel etcd/empty', field: 'entries', message: 'a channel needs at least one entry' },
    ],
    [
      'an entry without a bundle',
      (c) => c.channels[0]!.entries.push({ name: 'etcd.v9.9.9', replaces: n('etcd', '1.1.0') }),
      { field: 'entries[2].name', message: 'no olm.bundle named etcd.v9.9.9 in package etcd' },
    ],
    [
      'an entry listed twice',
      (c) => c.channels[0]!.entries.push({ name: n('etcd', '1.0.0') }),
      { field: 'entries[2].name' },
    ],
    [
      'a bad skipRange',
      (c) => (c.channels[0]!.entries[1]!.skipRange = '>=1.0'),
      { field: 'entries[1].skipRange' },
    ],
    [
      'a bundle in no channel',
      (c) => c.bundles.push(bundleDoc('etcd', '2.0.0')),
      { object: 'bundle etcd.v2.0.0', message: 'bundle etcd.v2.0.0 is in no channel of package etcd' },
    ],
    [
      'a bundle declared twice',
      (c) => c.bundles.push(bundleDoc('etcd', '1.0.0')),
      { object: 'bundle etcd.v1.0.0', field: 'name' },
    ],
    [
      'two olm.package properties',
      (c) =>
        c.bundles[0]!.properties.push({
          type: 'olm.package',
          value: { packageName: 'etcd', version: '1.0.0' },
        }),
      { field: 'properties', message: 'a bundle has exactly one olm.package property, found 2' },
    ],
    [
      'no olm.package property',
      (c) => (c.bundles[0]!.properties = []),
      { field: 'properties', message: 'a bundle has exactly one olm.package property, found 0' },
    ],
    [
      'an olm.package of another package',
      (c) => (c.bundles[0]!.properties[0]!.value = { packageName: 'etcd2', version: '1.0.0' }),
      { field: 'properties[0].value.packageName' },
    ],
    [
      'a non-semver version',
      (c) => (c.bundles[0]!.properties[0]!.value = { packageName: 'etcd', version: 'v1' }),
      { field: 'properties[0].value.version' },
    ],
    [
      'two bundles with one version',
      (c) => (c.bundles[1]!.properties[0]!.value = { packageName: 'etcd', version: '1.0.0' }),
      { message: 'bundles etcd.v1.0.0 and etcd.v1.1.0 of package etcd have the same version 1.0.0' },
    ],
    ['no image and no objects', (c) => (c.bundles[0]!.image = ''), { field: 'image' }],
    [
      'a constraint with two kinds',
      (c) =>
        c.bundles[0]!.properties.push({
          type: 'olm.constraint',
          value: { gvk: { group: 'g', version: 'v1', kind: 'K' }, cel: { rule: 'true' } },
        }),
      { field: 'properties[1].value' },
    ],
    [
      'a deprecation of an unknown bundle',
      (c) =>
        c.deprecations.push({
          schema: 'olm.deprecations',
          package: 'etcd',
          entries: [{ reference: { schema: 'olm.bundle', name: 'etcd.v0.0.1' }, message: 'gone' }],
        }),
      { object: 'deprecations etcd', field: 'entries[0].reference.name' },
    ],
    [
      'a deprecation without a message',
      (c) =>
        c.deprecations.push({
          schema: 'olm.deprecations',
          package: 'etcd',
          entries: [{ reference: { schema: 'olm.package' }, message: '' }],
        }),
      { field: 'entries[0].message' },
    ],
    [
      'two deprecations documents',
      (c) =>
        c.deprecations.push(
          { schema: 'olm.deprecations', package: 'etcd', entries: [] },
          { schema: 'olm.deprecations', package: 'etcd', entries: [] },
        ),
      { message: 'package etcd has more than one olm.deprecations document' },
    ],
    [
      'a bundle image that is not a valid reference',
      (c) => (c.bundles[0]!.image = 'quay.io/Org/etcd:v1'),
      {
        object: 'bundle etcd.v1.0.0',
        field: 'image',
        message: expect.stringContaining('repository name (Org/etcd) must be lowercase'),
      },
    ],
    [
      'a related image that is not a valid reference (the corpus strimzi 0.20.0 has this one)',
      (c) =>
        (c.bundles[1]!.relatedImages = [
          { name: 'ok', image: 'quay.io/etcd/etcd:v1' },
          { name: '', image: `docker.io/strimzi/operator@@sha256:${'a'.repeat(64)}` },
        ]),
      {
        object: 'bundle etcd.v1.1.0',
        field: 'relatedImages[1].image',
        message: expect.stringContaining('invalid reference format'),
      },
    ],
  ])('reports %s', (_, mutate, want) => {
    const cfg = valid();
    mutate(cfg);
    const { errors } = validateCatalog(cfg);
    expect(errors).toContainEqual(expect.objectContaining(want));
  });

  it('collects every problem in one pass', () => {
    const cfg = valid();
    cfg.packages[0]!.defaultChannel = 'fast';
    cfg.bundles.push(bundleDoc('etcd', '2.0.0'));
    cfg.channels[0]!.entries[1]!.skipRange = 'soon';
    const { errors } = validateCatalog(cfg);
    expect(errors.map((e) => e.field ?? e.object)).toEqual(
      expect.arrayContaining(['defaultChannel', 'bundle etcd.v2.0.0', 'entries[1].skipRange']),
    );
  });

  it.each([
    [
      'replaces-cycle.yaml',
      {
        object: 'channel cycle/stable',
        field: 'entries',
        message: 'replaces cycle: cycle.v1.0.0 -> cycle.v1.1.0 -> cycle.v1.0.0',
      },
    ],
    [
      'two-heads.yaml',
      {
        object: 'channel twoheads/stable',
        message: expect.stringContaining('multiple channel heads: twoheads.v1.1.0, twoheads.v2.0.0'),
      },
    ],
    [
      'stranded-bundle.yaml',
      { object: 'channel stranded/stable', message: expect.stringContaining('stranded entries') },
    ],
    ['unknown-default-channel.yaml', { object: 'package nodefault', field: 'defaultChannel' }],
  ])('names file, object and field for the bad fixture %s', async (file, want) => {
    const path = join(fixtures, 'bad', file);
    const { cfg, problems } = await loadFile(path);
    expect(problems).toEqual([]);
    const { errors } = validateCatalog(cfg);
    expect(errors).toEqual([expect.objectContaining({ file: path, ...want })]);
  });
});

describe('package icons', () => {
  it.each([
    ['PHN2Zy8+', true],
    ['PHN2\nZy8+', true],
    ['PHN2 Zy8+', false],
    ['PHN2Zy8', false],
    ['PHN2*y8+', false],
    ['PHN2Zy==', true],
    ['PHN2\r\nZy==\n', true],
    ['PHN2Z===', false],
    ['PH=2Zy8+', false],
    ['PHN2Zy8é', false],
  ])('%j is base64 opm can read: %s', (data, ok) => {
    const cfg = valid();
    cfg.packages[0]!.icon = { base64data: data, mediatype: 'image/svg+xml' };
    const errors = validateCatalog(cfg).errors;
    expect(errors.some((e) => e.field === 'icon.base64data')).toBe(!ok);
  });
});
