import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CatalogSpool } from '../../../src/controllers/catalog-spool.js';
import { parseCatalogFiles } from '../../../src/controllers/catalogsource-content.js';

const manifest = Buffer.from(JSON.stringify({ kind: 'ConfigMap', data: { x: 'y'.repeat(400) } })).toString(
  'base64',
);
const files = [
  {
    name: 'a.yaml',
    text: Buffer.from(
      'schema: olm.package\nname: p\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: p\nname: stable\nentries:\n- name: p.v1.0.0\n',
    ),
  },
  {
    name: 'b.yaml',
    text: Buffer.from(
      `schema: olm.bundle\nname: p.v1.0.0\npackage: p\nimage: ""\nproperties:\n- type: olm.package\n  value:\n    packageName: p\n    version: 1.0.0\n- type: olm.bundle.object\n  value:\n    data: ${manifest}\n`,
    ),
  },
];

describe('CatalogSpool', () => {
  it('keeps inline manifests on disk, read from the spooled file when used', async () => {
    const spool = await CatalogSpool.open();
    try {
      const ref = { namespace: 'ns', name: 'c' };
      const spooled = await spool.write(
        ref,
        'sha256:0123456789abcdef0123',
        files.map((f) => f.text),
      );
      expect(spooled.bases).toEqual([0, files[0]!.text.length]);
      const parsed = parseCatalogFiles(files, 'test', {
        payloads: { source: spooled.source, bases: spooled.bases },
      });
      if (!parsed.ok) throw new Error(parsed.message);
      const value = parsed.config.bundles[0]!.properties[1]!.value as { data: string };
      expect(Object.getOwnPropertyDescriptor(value, 'data')?.get).toBeTypeOf('function');
      expect(value.data).toBe(manifest);
      await spool.remove(spooled.path);
      expect(() => value.data).toThrow(spooled.path);
      await spool.remove(spooled.path); // a second removal is harmless
      expect(await readdir(spool.dir)).toEqual([]);
    } finally {
      await spool.close();
    }
    expect(existsSync(spool.dir)).toBe(false);
  });
});
