/**
 * A large YAML catalog file is read and parsed a window of whole documents at a time: what it
 * parses to, where its bundle objects' text stays, and every problem are exactly as when it is
 * read whole, and the buffer it takes is its largest document's, not its size.
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  liftAndParse,
  type PartBuffers,
  parsePart,
  restoreFrom,
  WindowBytes,
} from '../../../src/catalog/load.js';
import { attachStoredPayloads, payloadOf, readStoredPayloads } from '../../../src/catalog/payloads.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { main } from '../../../src/cli/main.js';
import { capture } from '../../support/capture.js';
import { tempDir } from '../../support/temp-dir.js';

/** Buffers as parsePart's default gives them, recording the largest asked for. */
function measured(): PartBuffers & { largest: number } {
  const b = {
    largest: 0,
    lend: <T>(use: (take: (size: number) => Buffer) => Promise<T>) =>
      use((size) => {
        b.largest = Math.max(b.largest, size);
        return Buffer.allocUnsafe(size);
      }),
  };
  return b;
}

/** The part read whole, as every file was before: the reference every windowed read must equal. */
function whole(file: string) {
  const bytes = readFileSync(file);
  const st = statSync(file);
  const parsed = liftAndParse(bytes, file);
  if (!parsed.ok) return parsed;
  const identity = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  const stored = restoreFrom(bytes, parsed, { file, identity, base: 0 });
  return { ok: true, docs: parsed.docs, stored };
}

const base64 = (n: number, seed: number) =>
  Buffer.from(Array.from({ length: Math.ceil((n * 3) / 4) }, (_, i) => (i * 31 + seed) & 0xff))
    .toString('base64')
    .slice(0, n);

/** A bundle document with one inline manifest of `n` base64 characters. */
const bundle = (i: number, n: number) =>
  [
    '---',
    'schema: olm.bundle',
    `name: p.v${i}.0.0`,
    'package: p',
    'image: example.com/p:v1',
    'properties:',
    '- type: olm.package',
    '  value:',
    '    packageName: p',
    `    version: ${i}.0.0`,
    '- type: olm.bundle.object',
    '  value:',
    `    data: ${base64(n, i)}`,
    `description: "bundle ${i}, ünïcödé"`,
    '',
  ].join('\n');

const part = (file: string) => ({ name: file, file, base: 0, length: statSync(file).size });

async function catalogFile(name: string, text: string): Promise<string> {
  const file = join(await tempDir('bosun-load-windows-'), name);
  await writeFile(file, text);
  return file;
}

describe('a large catalog file read in windows', () => {
  it('parses to what the whole file parses to, with each bundle object read back from its place', async () => {
    const text = `schema: olm.package\nname: p\n${Array.from({ length: 12 }, (_, i) => bundle(i, 300_000 + i * 1000)).join('')}`;
    const file = await catalogFile('catalog.yaml', text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * WindowBytes);
    const buffers = measured();
    const got = await parsePart(part(file), buffers);
    expect(got).toEqual(whole(file));
    // The buffer held one window (of whole documents), never the file.
    expect(buffers.largest).toBeLessThanOrEqual(WindowBytes);
    if (!got.ok) throw new Error(got.problem.message);
    attachStoredPayloads(got.docs, got.stored);
    const objects = got.docs
      .slice(1)
      .map((d) => (d as { properties: { value: { data: string } }[] }).properties[1]!.value);
    const texts = await readStoredPayloads(objects.map((o) => payloadOf(o)!));
    expect(texts).toEqual(Array.from({ length: 12 }, (_, i) => base64(300_000 + i * 1000, i)));
  });

  it('takes a larger window for a document longer than one, and no more than that document', async () => {
    const text = `${bundle(0, 100_000)}${bundle(1, 3 * WindowBytes)}${bundle(2, 100_000)}`;
    const file = await catalogFile('big-doc.yaml', text);
    const buffers = measured();
    expect(await parsePart(part(file), buffers)).toEqual(whole(file));
    expect(buffers.largest).toBeGreaterThan(3 * WindowBytes);
    expect(buffers.largest).toBeLessThan(Buffer.byteLength(text));
  });

  it.each([
    [
      'a syntax error in a late window, reported at its line in the file',
      (t: string) => `${t}---\nschema: [unclosed\n`,
    ],
    [
      'a --- line inside a double-quoted string',
      (t: string) => `${t}---\nschema: olm.package\nname: "two\n--- lines"\n`,
    ],
    ['a document that is not a map', (t: string) => `${t}--- |\n  just text\n`],
    ['a directive', (t: string) => `${t}%YAML 1.2\n---\nschema: olm.package\nname: q\n`],
    [
      'a root block scalar with a marker line in it',
      (t: string) => `${t}--- |\nline\n---\nschema: olm.package\n`,
    ],
  ])('reads the file whole where it cannot be cut or a window fails: %s', async (_, make) => {
    const text = make(Array.from({ length: 8 }, (_, i) => bundle(i, 300_000)).join(''));
    const file = await catalogFile('odd.yaml', text);
    expect(await parsePart(part(file))).toEqual(whole(file));
  });

  it('reads a large JSON stream whole, as before', async () => {
    const docs = Array.from({ length: 8 }, (_, i) =>
      JSON.stringify({
        schema: 'olm.bundle',
        name: `p.v${i}`,
        package: 'p',
        properties: [{ type: 'olm.bundle.object', value: { data: base64(300_000, i) } }],
      }),
    );
    const file = await catalogFile('catalog.json', docs.join('\n---\n'));
    const buffers = measured();
    expect(await parsePart(part(file), buffers)).toEqual(whole(file));
    expect(buffers.largest).toBe(statSync(file).size);
  });
});

// The real data: the corpus's three largest packages, imported as `bosun catalog import` does.
const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus)
  console.warn(
    'skipping the windowed read of the corpus catalog: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
  );

describe.skipIf(!haveCorpus)('the corpus catalog read in windows (BOSUN_CORPUS_DIR)', () => {
  it(
    'parses the largest files as when read whole, each in a buffer of its largest document',
    { timeout: 120_000 },
    async () => {
      const work = await tempDir('bosun-load-windows-corpus-');
      const packages = ['victoriametrics-operator', 'eclipse-che', 'jaeger'];
      for (const p of packages) await cp(join(corpus!, p), join(work, 'in', p), { recursive: true });
      const c = capture();
      expect(await main(['catalog', 'import', join(work, 'in'), join(work, 'out')], c.ctx)).toBe(0);
      for (const p of packages) {
        const file = join(work, 'out', p, 'catalog.yaml');
        const buffers = measured();
        const got = await parsePart(part(file), buffers);
        expect(got.ok).toBe(true);
        expect(got).toEqual(whole(file));
        // victoriametrics-operator's catalog.yaml is 10.9 MB; its largest document is under 2 MiB.
        expect(buffers.largest).toBeLessThan(statSync(file).size / 3);
      }
    },
  );
});
