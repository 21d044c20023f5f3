import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BundleDoc, emptyConfig } from '../../../src/apis/fbc.js';
import { withPayloads } from '../../../src/catalog/payloads.js';
import { IgnoreMatcher } from '../../../src/catalog/ignore.js';
import { parseJsonStream } from '../../../src/bundle/json-stream.js';
import { addDocuments, loadCatalog } from '../../../src/catalog/load.js';
import { fileOf } from '../../../src/catalog/origin.js';
import type { Problem } from '../../../src/util/result.js';
import { tempDir } from '../../support/temp-dir.js';

const mixed = join(import.meta.dirname, '../../fixtures/catalogs/mixed');

describe('loadCatalog', () => {
  it('reads YAML and JSON streams below the root, honouring .indexignore', async () => {
    const r = await loadCatalog(mixed);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const cfg = r.value;
    expect(cfg.packages.map((p) => p.name)).toEqual(['alpha', 'beta']);
    expect(cfg.channels.map((c) => `${c.package}/${c.name}`)).toEqual(['alpha/stable', 'beta/fast']);
    expect(cfg.bundles.map((b) => b.name)).toEqual(['alpha.v1.0.0', 'alpha.v1.1.0', 'beta.v0.1.0']);
    expect(cfg.deprecations).toHaveLength(1);
    expect(cfg.others).toEqual([
      { schema: 'bosun.example.note', package: 'alpha', text: expect.stringContaining('kept as they are') },
    ]);
    expect(cfg.packages[1]!.description).toContain('} {');
    expect(fileOf(cfg.bundles[2]!)).toBe(join(mixed, 'beta/bundles.json'));
  });

  it('refuses a file that is not UTF-8, naming it and the byte', async () => {
    const dir = await tempDir('bosun-load-');
    const file = join(dir, 'catalog.yaml');
    // `café` in Latin-1, which a UTF-8 reader would turn into `caf\uFFFD`.
    await writeFile(
      file,
      Buffer.concat([
        Buffer.from('schema: olm.package\nname: a\ndescription: caf'),
        Buffer.from([0xe9, 0x0a]),
      ]),
    );
    const r = await loadCatalog(dir);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      {
        file,
        message:
          'is not UTF-8: byte 0xE9 at offset 44 starts no UTF-8 character; catalog files are UTF-8 text',
      },
    ]);
  });

  it('reports a missing directory', async () => {
    const r = await loadCatalog(join(mixed, 'nope'));
    expect(r.ok).toBe(false);
  });

  it('reports every unreadable file, not only the first', async () => {
    const dir = await tempDir('bosun-load-');
    await writeFile(join(dir, 'a.yaml'), 'schema: olm.package\nname: [x\n');
    await writeFile(join(dir, 'b.json'), '{"schema": "olm.package", "name": }');
    await writeFile(join(dir, 'c.yaml'), 'name: no-schema\n');
    const r = await loadCatalog(dir);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.file)).toEqual([
      join(dir, 'a.yaml'),
      join(dir, 'b.json'),
      join(dir, 'c.yaml'),
    ]);
    expect(r.errors[2]).toMatchObject({ object: 'no-schema', field: 'schema' });
  });
});

describe('loadCatalog and inline manifests', () => {
  const manifest = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'm' },
    data: { k: 'v'.repeat(400) },
  };
  const data = Buffer.from(JSON.stringify(manifest)).toString('base64');
  const catalog = (name: string) =>
    [
      `---\nschema: olm.package\nname: ${name}\ndefaultChannel: stable\n`,
      `---\nschema: olm.channel\npackage: ${name}\nname: stable\nentries:\n- name: ${name}.v1.0.0\n`,
      `---\nschema: olm.bundle\npackage: ${name}\nname: ${name}.v1.0.0\nimage: ''\nproperties:\n` +
        `- type: olm.package\n  value:\n    packageName: ${name}\n    version: 1.0.0\n` +
        `- type: olm.bundle.object\n  value:\n    data: ${data}\n`,
    ].join('');
  const dataOf = async (b: BundleDoc) =>
    (
      (await withPayloads(b)).properties.find((p) => p.type === 'olm.bundle.object')!.value as {
        data: string;
      }
    ).data;

  it('reads each file’s manifests back from that file when they are used', async () => {
    const dir = await tempDir('bosun-load-');
    // The larger file first: the buffer both are read into must not leak one into the other.
    await writeFile(join(dir, 'a.yaml'), catalog('alpha-with-a-longer-name'));
    await writeFile(join(dir, 'b.yaml'), catalog('beta'));
    const r = await loadCatalog(dir);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(await Promise.all(r.value.bundles.map((b) => dataOf(b)))).toEqual([data, data]);
  });

  it('refuses to read manifests from a file that changed after loading, naming it', async () => {
    const dir = await tempDir('bosun-load-');
    await writeFile(join(dir, 'a.yaml'), catalog('alpha'));
    const r = await loadCatalog(dir);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    await writeFile(join(dir, 'a.yaml'), `# edited\n${catalog('alpha')}`);
    await expect(dataOf(r.value.bundles[0]!)).rejects.toThrow(
      `${join(dir, 'a.yaml')} has changed since the catalog was loaded`,
    );
  });
});

describe('addDocuments', () => {
  it.each([
    ['duplicate keys', 'schema: olm.package\nname: a\nname: b\n', /line 3, column 1: duplicated mapping key/],
    ['malformed YAML', 'schema: olm.package\n  name: : :\n', /invalid YAML: line \d+/],
    ['a list instead of a document', '- schema: olm.package\n', /found a list/],
    ['a document without schema', 'name: x\n', /needs a "schema"/],
  ])('rejects %s with a located message', (_, text, message) => {
    const problems: Problem[] = [];
    addDocuments(emptyConfig(), text, 'f.yaml', problems);
    expect(problems).toEqual([
      expect.objectContaining({ file: 'f.yaml', message: expect.stringMatching(message) }),
    ]);
  });

  it('skips empty documents, as opm does', () => {
    const cfg = emptyConfig();
    const problems: Problem[] = [];
    addDocuments(cfg, '---\n---\n# only a comment\n---\nschema: olm.package\nname: a\n', 'f.yaml', problems);
    expect(problems).toEqual([]);
    expect(cfg.packages).toEqual([{ schema: 'olm.package', name: 'a' }]);
  });
});

describe('parseJsonStream', () => {
  it.each([
    ['one document', '{"a": 1}', [{ a: 1 }]],
    [
      'pretty documents one after another',
      '{\n    "a": 1\n}\n{\n    "b": {"c": 2}\n}\n',
      [{ a: 1 }, { b: { c: 2 } }],
    ],
    ['compact documents on lines', '{"a":1}\n{"b":2}\n', [{ a: 1 }, { b: 2 }]],
    ['a boundary look-alike in a string', '{"t":"} {"}{"u":"}\\n{"}', [{ t: '} {' }, { u: '}\n{' }]],
    ['nothing', '  \n', []],
  ])('splits %s', (_, text, docs) => {
    expect(parseJsonStream(text, 'f.json')).toEqual({ ok: true, docs });
  });

  it('locates an invalid document by line', () => {
    const r = parseJsonStream('{"a": 1}\n{"b": }\n', 'f.json');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem.message).toMatch(/starting at line 2, column 1/);
  });
});

describe('.indexignore patterns', () => {
  const m = new IgnoreMatcher();
  m.add('', '# comment\n*.md\nbuild/\n/top.yaml\n');
  m.add('pkg', 'drafts/**\n!drafts/keep.yaml\n');
  it.each([
    ['README.md', false, true],
    ['pkg/notes.md', false, true],
    ['build', true, true],
    ['build', false, false],
    ['top.yaml', false, true],
    ['pkg/top.yaml', false, false],
    ['pkg/drafts/a.yaml', false, true],
    ['pkg/drafts/keep.yaml', false, false],
    ['other/drafts/a.yaml', false, false],
    ['pkg/catalog.yaml', false, false],
  ])('%s (dir: %s) ignored: %s', (path, isDir, ignored) => {
    expect(m.ignores(path, isDir)).toBe(ignored);
  });
});
