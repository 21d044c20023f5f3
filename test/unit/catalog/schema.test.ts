import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../src/apis/fbc.js';
import { addDocuments } from '../../../src/catalog/load.js';
import { fieldOf } from '../../../src/catalog/schema.js';
import { validateCatalog } from '../../../src/catalog/validate.js';
import type { Problem } from '../../../src/util/result.js';

const FILE = 'catalog/etcd/catalog.yaml';

function load(text: string) {
  const cfg = emptyConfig();
  const problems: Problem[] = [];
  addDocuments(cfg, text, FILE, problems);
  return { cfg, problems };
}

const pkg = 'schema: olm.package\nname: etcd\ndefaultChannel: stable\n';
const channel = 'schema: olm.channel\npackage: etcd\nname: stable\nentries:\n- name: etcd.v1.0.0\n';
const bundle = (extra = '') =>
  'schema: olm.bundle\npackage: etcd\nname: etcd.v1.0.0\nimage: quay.io/etcd/bundle:v1\nproperties:\n' +
  '- type: olm.package\n  value:\n    packageName: etcd\n    version: 1.0.0\n' +
  extra;

describe('catalog documents are checked against their schema when loaded', () => {
  it('keeps a well-formed catalog, typed, with unknown fields', () => {
    const { cfg, problems } = load(`${pkg}x-note: kept\n---\n${channel}---\n${bundle()}`);
    expect(problems).toEqual([]);
    expect(cfg.packages).toEqual([
      { schema: 'olm.package', name: 'etcd', defaultChannel: 'stable', 'x-note': 'kept' },
    ]);
    expect(cfg.channels[0]!.entries).toEqual([{ name: 'etcd.v1.0.0' }]);
    expect(validateCatalog(cfg).errors).toEqual([]);
  });

  it.each<[string, string, Partial<Problem>[]]>([
    [
      'a malformed olm.gvk',
      bundle('- type: olm.gvk\n  value:\n    kind: X\n'),
      [
        { object: 'bundle etcd.v1.0.0', field: 'properties[1].value.group', message: 'is required' },
        { object: 'bundle etcd.v1.0.0', field: 'properties[1].value.version', message: 'is required' },
      ],
    ],
    [
      'an olm.package.required without a range',
      bundle('- type: olm.package.required\n  value:\n    packageName: x\n'),
      [{ field: 'properties[1].value.versionRange', message: 'is required' }],
    ],
    [
      'an olm.package version that is a number',
      bundle().replace('version: 1.0.0', 'version: 1.0'),
      [{ field: 'properties[0].value.version', message: 'must be a string' }],
    ],
    [
      'a property without a value',
      bundle('- type: olm.label\n'),
      [{ field: 'properties[1].value', message: 'is required' }],
    ],
    [
      'properties that are not a list',
      'schema: olm.bundle\nname: b\nproperties: {}\n',
      [{ object: 'bundle b', field: 'properties', message: 'must be a list' }],
    ],
    [
      'an image that is a number',
      bundle().replace('image: quay.io/etcd/bundle:v1', 'image: 7'),
      [{ field: 'image', message: 'must be a string' }],
    ],
    [
      'entries that are not a list',
      'schema: olm.channel\npackage: etcd\nname: s\nentries: x\n',
      [{ object: 'channel etcd/s', field: 'entries', message: 'must be a list' }],
    ],
    [
      'an entry whose skips is not a list',
      `${channel}  skips: etcd.v0.9.0\n`,
      [{ object: 'channel etcd/stable', field: 'entries[0].skips', message: 'must be a list' }],
    ],
    [
      'an entry that replaces a number',
      `${channel}  replaces: 1\n`,
      [{ field: 'entries[0].replaces', message: 'must be a string' }],
    ],
    [
      'an icon without a media type',
      `${pkg}icon:\n  base64data: PHN2Zy8+\n`,
      [{ object: 'package etcd', field: 'icon.mediatype', message: 'is required' }],
    ],
    [
      'a deprecation of an unknown kind of thing',
      'schema: olm.deprecations\npackage: etcd\nentries:\n- reference:\n    schema: olm.thing\n  message: no\n',
      [
        {
          object: 'deprecations etcd',
          field: 'entries[0].reference.schema',
          message: 'must be one of olm.package, olm.channel, olm.bundle',
        },
      ],
    ],
    [
      'a document of another schema with a name that is a list',
      'schema: x.note\nname: [a]\n',
      [{ object: 'x.note <unnamed>', field: 'name', message: 'must be a string' }],
    ],
  ])('refuses %s, naming file, object and field', (_, text, want) => {
    const { cfg, problems } = load(text);
    expect(problems).toEqual(want.map((w) => expect.objectContaining({ file: FILE, ...w })));
    expect([...cfg.packages, ...cfg.channels, ...cfg.bundles, ...cfg.deprecations, ...cfg.others]).toEqual(
      [],
    );
  });

  it('reads a missing field as opm does (its zero value), for validation to judge', () => {
    const { cfg, problems } = load('schema: olm.package\n---\nschema: olm.bundle\nname: b\npackage: etcd\n');
    expect(problems).toEqual([]);
    expect(cfg.packages[0]!.name).toBe('');
    expect(cfg.bundles[0]).toMatchObject({ image: '', properties: [] });
    const errors = validateCatalog(cfg).errors.map((e) => `${e.object}: ${e.field}: ${e.message}`);
    expect(errors).toEqual(
      expect.arrayContaining([
        'package <unnamed>: name: every olm.package needs a name',
        'bundle b: image: a bundle needs an image or its manifests as olm.bundle.object properties',
      ]),
    );
  });

  it('gives each document its own list where one was missing', () => {
    const { cfg } = load(
      'schema: olm.channel\npackage: p\nname: a\n---\nschema: olm.channel\npackage: p\nname: b\n',
    );
    expect(cfg.channels[0]!.entries).not.toBe(cfg.channels[1]!.entries);
  });
});

describe('fieldOf', () => {
  it.each([
    ['', ''],
    ['/name', 'name'],
    ['/entries/3/skips/0', 'entries[3].skips[0]'],
    ['/properties/1/value/group', 'properties[1].value.group'],
    ['/a~1b/c~0d', 'a/b.c~d'],
  ])('%j reads as %j', (pointer, field) => {
    expect(fieldOf(pointer)).toBe(field);
  });
});
