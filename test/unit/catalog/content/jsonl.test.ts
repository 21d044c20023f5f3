/**
 * A catalog written as catalogd serves it: one line per document in the order of the files
 * given, keys sorted at every level, no HTML escaping, U+2028/U+2029 escaped; and the index
 * `/api/v1/metas` reads, whose sections are exactly those lines and whose queries intersect.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  emptyIndex,
  indexDocument,
  metaLine,
  selectSections,
  writeCatalogJsonl,
} from '../../../../src/catalog/content/jsonl.js';
import { tempDir } from '../../../support/temp-dir.js';

describe('metaLine', () => {
  it('sorts keys at every level, keeps array order, and ends the line', () => {
    expect(
      metaLine({ schema: 'olm.package', name: 'etcd', b: [{ z: 1, a: 2 }, 3], a: { y: null, x: true } }),
    ).toBe('{"a":{"x":true,"y":null},"b":[{"a":2,"z":1},3],"name":"etcd","schema":"olm.package"}\n');
  });

  it('writes -0 as Go does, and sorts keys by UTF-8 bytes, not UTF-16 code units', () => {
    expect(metaLine({ v: [-0, 0, 1e-7, 1e21] })).toBe('{"v":[-0,0,1e-7,1e+21]}\n');
    expect(metaLine({ '\u{1F600}': 1, '\uffff': 2, '\ue000': 3, z: 4 })).toBe(
      '{"z":4,"\ue000":3,"\uffff":2,"\u{1F600}":1}\n',
    );
  });

  it('leaves <, > and & as they are and escapes U+2028 and U+2029, as Go encodes without HTML escaping', () => {
    expect(metaLine({ d: '<a href="x">&</a>\u2028\u2029' })).toBe(
      '{"d":"<a href=\\"x\\">&</a>\\u2028\\u2029"}\n',
    );
  });
});

describe('selectSections', () => {
  const docs = [
    { schema: 'olm.package', name: 'etcd' },
    { schema: 'olm.channel', package: 'etcd', name: 'alpha' },
    { schema: 'olm.bundle', package: 'etcd', name: 'etcd.v0.9.4' },
    { schema: 'olm.package', name: 'kafka' },
    { schema: 'olm.channel', package: 'kafka', name: 'alpha' },
    { schema: 'olm.bundle', package: 'kafka', name: 'kafka.v1.0.0' },
  ];
  const index = emptyIndex();
  docs.forEach((d, i) => indexDocument(index, d, { offset: i * 100, length: 100 }));
  const picked = (q: Parameters<typeof selectSections>[1]) =>
    selectSections(index, q).map((s) => docs[s.offset / 100]!.name);

  it.each([
    [{}, ['etcd', 'alpha', 'etcd.v0.9.4', 'kafka', 'alpha', 'kafka.v1.0.0']],
    [{ schema: 'olm.channel' }, ['alpha', 'alpha']],
    [{ package: 'kafka' }, ['alpha', 'kafka.v1.0.0']],
    [{ name: 'alpha' }, ['alpha', 'alpha']],
    [{ schema: 'olm.channel', package: 'kafka' }, ['alpha']],
    [{ schema: 'olm.bundle', package: 'etcd', name: 'etcd.v0.9.4' }, ['etcd.v0.9.4']],
    [{ schema: 'olm.bundle', name: 'kafka' }, []],
    [{ schema: 'olm.deprecations' }, []],
    [{ package: 'etcd', name: 'kafka.v1.0.0' }, []],
  ])('%j', (query, names) => {
    expect(picked(query)).toEqual(names);
  });
});

describe('writeCatalogJsonl', () => {
  it('writes every document of JSON and YAML files in the order given, and each indexed section is exactly its line', async () => {
    const dir = await tempDir('bosun-jsonl-');
    const json = join(dir, 'a.json');
    const yaml = join(dir, 'b.yaml');
    await writeFile(
      json,
      '{"schema":"olm.package","name":"etcd","defaultChannel":"alpha"}\n{"schema":"olm.channel","package":"etcd","name":"alpha","entries":[{"name":"etcd.v1"}]}',
    );
    await writeFile(
      yaml,
      'schema: olm.bundle\npackage: etcd\nname: etcd.v1\nimage: "quay.io/etcd:v1"\n---\nschema: my.own\nname: x\nvalue: 1.5\n',
    );
    const out = join(dir, 'catalog.jsonl');
    const written = await writeCatalogJsonl([json, yaml], out);
    const text = await readFile(out);
    const lines = text.toString('utf8').split(/(?<=\n)/);
    expect(lines).toEqual([
      '{"defaultChannel":"alpha","name":"etcd","schema":"olm.package"}\n',
      '{"entries":[{"name":"etcd.v1"}],"name":"alpha","package":"etcd","schema":"olm.channel"}\n',
      '{"image":"quay.io/etcd:v1","name":"etcd.v1","package":"etcd","schema":"olm.bundle"}\n',
      '{"name":"x","schema":"my.own","value":1.5}\n',
    ]);
    expect(written.size).toBe(text.length);
    const section = (s: { offset: number; length: number }) =>
      text.subarray(s.offset, s.offset + s.length).toString('utf8');
    expect(selectSections(written.index, { package: 'etcd' }).map(section)).toEqual(lines.slice(1, 3));
    expect(selectSections(written.index, { schema: 'my.own' }).map(section)).toEqual([lines[3]]);
  });

  it('rejects, without leaving the process an unhandled error, when its file cannot be made', async () => {
    const dir = await tempDir('bosun-jsonl-');
    const source = join(dir, 'a.json');
    await writeFile(source, '{"schema":"olm.package","name":"etcd"}');
    await writeFile(join(dir, 'taken.jsonl'), "someone else's");
    await expect(writeCatalogJsonl([source], join(dir, 'taken.jsonl'))).rejects.toThrow(/EEXIST/);
    await expect(writeCatalogJsonl([source], join(dir, 'no-such-folder', 'x.jsonl'))).rejects.toThrow(
      /ENOENT/,
    );
    expect(await readFile(join(dir, 'taken.jsonl'), 'utf8')).toBe("someone else's");
  });

  it('refuses a file that does not parse, naming it, and a path that is a symbolic link', async () => {
    const dir = await tempDir('bosun-jsonl-');
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"schema": ');
    await expect(writeCatalogJsonl([bad], join(dir, 'out1.jsonl'))).rejects.toThrow(bad);
    const { symlink } = await import('node:fs/promises');
    await writeFile(join(dir, 'secret.json'), '{"schema":"s","name":"secret"}');
    await symlink(join(dir, 'secret.json'), join(dir, 'link.json'));
    await expect(writeCatalogJsonl([join(dir, 'link.json')], join(dir, 'out2.jsonl'))).rejects.toThrow();
  });
});
