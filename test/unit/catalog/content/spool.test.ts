import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../../src/apis/fbc.js';
import { parseFileParts } from '../../../../src/catalog/load.js';
import { payloadOf, readStoredPayload, withPayloads } from '../../../../src/catalog/payloads.js';
import { digestOf } from '../../../../src/catalog/content/digest.js';
import { CatalogSpool } from '../../../../src/catalog/content/spool.js';
import { UserError } from '../../../../src/util/errors.js';
import type { Problem } from '../../../../src/util/result.js';

const manifest = Buffer.from(JSON.stringify({ kind: 'ConfigMap', data: { x: 'y'.repeat(400) } })).toString(
  'base64',
);
const pkg = Buffer.from(
  'schema: olm.package\nname: p\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: p\nname: stable\nentries:\n- name: p.v1.0.0\n',
);
const bundle = Buffer.from(
  `schema: olm.bundle\nname: p.v1.0.0\npackage: p\nimage: ""\nproperties:\n- type: olm.package\n  value:\n    packageName: p\n    version: 1.0.0\n- type: olm.bundle.object\n  value:\n    data: ${manifest}\n`,
);
const ref = { namespace: 'ns', name: 'c' };

describe('CatalogSpool', () => {
  it('keeps files on disk; their inline manifests are read from there when used', async () => {
    const spool = await CatalogSpool.open();
    try {
      // Written in order of name, whatever the order given.
      const files = [
        { name: 'b.yaml', bytes: bundle },
        { name: 'a.yaml', bytes: pkg },
      ];
      const spooled = await spool.writeFiles(ref, files);
      expect(spooled.parts).toEqual([
        { name: 'a.yaml', file: spooled.path, base: 0, length: pkg.length },
        { name: 'b.yaml', file: spooled.path, base: pkg.length, length: bundle.length },
      ]);
      expect(spooled.digest).toBe(digestOf(files.map((f) => ({ name: f.name, text: f.bytes }))));
      const cfg = emptyConfig();
      const problems: Problem[] = [];
      await parseFileParts(spooled.path, spooled.parts, cfg, problems);
      expect(problems).toEqual([]);
      expect(cfg.packages.map((p) => p.name)).toEqual(['p']);
      const value = cfg.bundles[0]!.properties[1]!.value as { data: unknown };
      expect(value.data).toBe('');
      expect(payloadOf(value)).toMatchObject({ storedIn: spooled.path, length: manifest.length });
      expect(await readStoredPayload(payloadOf(value)!)).toBe(manifest);
      await spool.remove(spooled.path);
      await expect(readStoredPayload(payloadOf(value)!)).rejects.toThrow(spooled.path);
      await spool.remove(spooled.path); // a second removal is harmless
      expect(await readdir(spool.dir)).toEqual(['owner']); // only the file naming who made it
    } finally {
      await spool.close();
    }
    expect(existsSync(spool.dir)).toBe(false);
  });

  it('streams a body to disk with the digest of the same bytes given whole', async () => {
    const spool = await CatalogSpool.open();
    try {
      const whole = Buffer.concat([pkg, Buffer.from('---\n'), bundle]);
      const chunks = [whole.subarray(0, 100), whole.subarray(100, 250), whole.subarray(250)];
      const spooled = await spool.writeStream(ref, 'http://catalog', Readable.from(chunks));
      expect(spooled.digest).toBe(digestOf([{ name: 'http://catalog', text: whole }]));
      expect(spooled.parts).toEqual([
        { name: 'http://catalog', file: spooled.path, base: 0, length: whole.length },
      ]);
      const cfg = emptyConfig();
      const problems: Problem[] = [];
      await parseFileParts(spooled.path, spooled.parts, cfg, problems);
      expect(problems).toEqual([]);
      const read = await withPayloads(cfg.bundles[0]!);
      expect((read.properties[1]!.value as { data: string }).data).toBe(manifest);
    } finally {
      await spool.close();
    }
  });

  it('removes a half-written file when the body fails', async () => {
    const spool = await CatalogSpool.open();
    try {
      async function* failing() {
        yield pkg;
        throw new Error('connection reset');
      }
      await expect(spool.writeStream(ref, 'http://catalog', failing())).rejects.toThrow('connection reset');
      expect(await readdir(spool.dir)).toEqual(['owner']); // only the file naming who made it
    } finally {
      await spool.close();
    }
  });
});

describe('a temporary folder the spool cannot be made in', () => {
  it('is an error the user can fix, naming the folder and TMPDIR', async () => {
    const base = await mkdtemp(join(tmpdir(), 'spool-parent-'));
    try {
      const file = join(base, 'a-file');
      await writeFile(file, '');
      for (const parent of [join(base, 'missing'), file]) {
        const err = await CatalogSpool.open(parent).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(UserError);
        expect((err as Error).message).toContain(parent);
        expect((err as Error).message).toContain('TMPDIR');
      }
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
