import { rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../src/apis/fbc.js';
import { CatalogFormat, encodeConfig, encodeDocuments } from '../../../src/catalog/encode.js';
import { addDocuments } from '../../../src/catalog/load.js';
import {
  payloadOf,
  liftPayloads,
  MinLength,
  readStoredPayload,
  readStoredPayloads,
  type StoredPayload,
  withPayloads,
} from '../../../src/catalog/payloads.js';
import type { Problem } from '../../../src/util/result.js';
import { runs } from '../../support/properties.js';
import { tempDir } from '../../support/temp-dir.js';

const b64 = Buffer.from('{"kind":"CustomResourceDefinition"}'.repeat(20)).toString('base64');
const digits = '1'.repeat(300);

/** Parses text twice, with payloads lifted (from bytes) and without (from the string). */
function both(text: string) {
  const lifted = { cfg: emptyConfig(), problems: [] as Problem[] };
  const plain = { cfg: emptyConfig(), problems: [] as Problem[] };
  addDocuments(lifted.cfg, Buffer.from(text), 'f', lifted.problems);
  addDocuments(plain.cfg, text, 'f', plain.problems);
  return { lifted, plain, count: liftPayloads(Buffer.from(text)).offsets.length };
}

describe('lifting payloads reads exactly as parsing everything', () => {
  it.each([
    [
      'an olm.bundle.object value in YAML',
      `schema: olm.bundle\nname: a\nproperties:\n- type: olm.bundle.object\n  value:\n    data: ${b64}\n`,
      1,
    ],
    [
      'an olm.bundle.object value in JSON',
      `{"schema": "olm.bundle", "name": "a", "properties": [{"type": "olm.bundle.object", "value": {"data" :\n "${b64}"}}]}`,
      1,
    ],
    [
      'a package icon',
      `schema: olm.package\nname: p\nicon:\n  base64data: ${b64}\n  mediatype: image/png\n`,
      1,
    ],
    [
      'the same line inside a block scalar',
      `schema: x\ndescription: |\n  keep\n  data: ${b64}\n  as text\n`,
      1,
    ],
    ['a folded scalar', `schema: x\nnote: >-\n  data: ${b64}\n  folded\n`, 1],
    ['list items', `schema: x\nitems:\n- data: ${b64}\n- data: ${b64}\n`, 2],
    ['CRLF line ends and trailing blanks', `schema: x\r\nvalue:\r\n  data: ${b64}  \r\n  other: 1\r\n`, 1],
    ['a byte order mark', `\uFEFF{"schema": "x", "data": "${b64}"}`, 1],
    ['digits YAML reads as a number', `schema: x\nvalue:\n  data: ${digits}\n`, 0],
    ['hex digits YAML reads as a number', `schema: x\nvalue:\n  data: 0x${'ab'.repeat(200)}\n`, 0],
    ['a plain scalar continued on the next line', `schema: x\nvalue:\n  data: ${b64}\n    more\n`, 0],
    ['a continuation after a blank line', `schema: x\nvalue:\n  data: ${b64}\n\n    more\n`, 0],
    ['a value with a comment', `schema: x\nvalue:\n  data: ${b64} # note\n`, 0],
    ['a double-quoted YAML value', `schema: x\nvalue:\n  data: "${b64}"\n`, 0],
    ['a line ending a quoted string', `schema: x\nnote: "start\n  data: ${b64}"\n`, 0],
    ['a flow mapping', `schema: x\nvalue: {\n  data: ${b64}}\n`, 0],
    ['a key ending in data', `schema: x\nmetadata: ${b64}\n`, 0],
    ['a JSON string with an escape', `{"schema": "x", "data": "${b64}\\n"}`, 0],
    ['an escaped quote before data in JSON', `{"schema": "x", "say \\"data": "${b64}"}`, 1],
    [
      'a JSON stream of two documents',
      `{"schema": "x", "data": "${b64}"}\n{"schema": "y", "data": "${b64}"}\n`,
      2,
    ],
    ['a short value', `schema: x\nvalue:\n  data: ${b64.slice(0, MinLength - 1)}\n`, 0],
  ])('%s', (_, text, lifted) => {
    const r = both(text);
    expect(r.count).toBe(lifted);
    expect(r.lifted.problems).toEqual(r.plain.problems);
    expect(JSON.parse(JSON.stringify(r.lifted.cfg))).toEqual(JSON.parse(JSON.stringify(r.plain.cfg)));
  });

  it('holds for generated catalogs written as YAML and as JSON', () => {
    const text = fc.string({
      unit: fc.constantFrom('a', 'Z', '9', '+', '/', ' ', '\n', ':', '"', '#', '-', '\\'),
    });
    const value = fc.oneof(fc.base64String({ minLength: MinLength, maxLength: 600 }), text, fc.integer());
    const bundle = fc.record({
      schema: fc.constant('olm.bundle'),
      name: fc.constant('b'),
      package: fc.constant('p'),
      description: text,
      properties: fc.array(
        fc.record({
          type: fc.constantFrom('olm.bundle.object', 'olm.other'),
          value: fc.record({ data: value }),
        }),
      ),
    });
    const pkg = fc.record({
      schema: fc.constant('olm.package'),
      name: fc.constant('p'),
      icon: fc.record({ base64data: value, mediatype: fc.constant('image/png') }),
    });
    let lifts = 0;
    fc.assert(
      fc.property(fc.array(fc.oneof(bundle, pkg), { maxLength: 4 }), fc.boolean(), (docs, json) => {
        const encoded = encodeDocuments(docs, json ? CatalogFormat.JSON : CatalogFormat.YAML);
        const r = both(encoded);
        lifts += r.count;
        // (An icon whose base64data is a number is refused by the schema, in both readings.)
        expect(r.lifted.problems).toEqual(r.plain.problems);
        expect(JSON.parse(JSON.stringify(r.lifted.cfg))).toEqual(JSON.parse(JSON.stringify(r.plain.cfg)));
      }),
      runs(200),
    );
    expect(lifts).toBeGreaterThan(50); // the property was tested with payloads, not only without
  });

  it('reports a syntax error at its place in the file, not in the lifted text', () => {
    const text = `schema: x\nvalue:\n  data: ${b64}\n  bad: [unclosed\n`;
    const r = both(text);
    expect(r.lifted.problems).toHaveLength(1);
    expect(r.lifted.problems).toEqual(r.plain.problems);
  });
});

describe('a bundle object stored in its catalog file', () => {
  const text = `schema: olm.bundle\nname: a\nproperties:\n- type: olm.bundle.object\n  value:\n    data: ${b64}\n`;

  /** The text at the end of a file behind other content, loaded as a catalog part. */
  async function stored(prefix = 'other content first\n') {
    const dir = await tempDir('bosun-payloads-');
    const file = join(dir, 'spool');
    await writeFile(file, prefix + text);
    const cfg = emptyConfig();
    const problems: Problem[] = [];
    const identity = await stat(file);
    addDocuments(cfg, Buffer.from(text), 'f', problems, { file, identity, base: prefix.length });
    expect(problems).toEqual([]);
    const value = cfg.bundles[0]!.properties[0]!.value as Record<string, unknown>;
    return { dir, file, cfg, value };
  }

  it('is an explicit reference (file, offset, length), read asynchronously', async () => {
    const { file, cfg, value } = await stored('12345');
    // The handle is kept beside the document; the document's data stays a string.
    expect(value.data).toBe('');
    expect(payloadOf(value)).toMatchObject({
      storedIn: file,
      offset: 5 + text.indexOf(b64),
      length: b64.length,
    });
    expect(await readStoredPayload(payloadOf(value)!)).toBe(b64);
    const read = await withPayloads(cfg.bundles[0]!);
    expect(read.properties[0]!.value).toEqual({ data: b64 });
    // The loaded catalog keeps the reference: it may be shared, and stays small.
    expect(payloadOf(value)).toBeDefined();
  });

  it('is held as text when the bytes were only in memory', () => {
    const cfg = emptyConfig();
    addDocuments(cfg, Buffer.from(text), 'f', []);
    expect(cfg.bundles[0]!.properties[0]!.value).toEqual({ data: b64 });
  });

  it('fails to read, naming the file, once the file is gone', async () => {
    const { dir, file, value } = await stored();
    await rm(dir, { recursive: true });
    await expect(readStoredPayload(payloadOf(value)!)).rejects.toThrow(file);
  });

  it('fails to read, naming the file, once the file has changed', async () => {
    const { file, value } = await stored();
    await writeFile(file, `${'x'.repeat(40)}${text}`);
    await expect(readStoredPayload(payloadOf(value)!)).rejects.toThrow(
      `${file} has changed since the catalog was loaded`,
    );
  });

  it('is read before a catalog is encoded; encoding one unread is a bug', async () => {
    const { cfg } = await stored();
    const doc = cfg.bundles[0]! as unknown as Record<string, unknown>;
    expect(() => encodeDocuments([doc], CatalogFormat.JSON)).toThrow(/must be read before it is encoded/);
    const plain = emptyConfig();
    addDocuments(plain, text, 'f', []);
    for (const format of Object.values(CatalogFormat))
      expect(await encodeConfig(cfg, format)).toBe(await encodeConfig(plain, format));
  });
});

describe('reading many stored payloads at once', () => {
  it('gives each its own bytes, in the order asked, from several files, near and far apart', async () => {
    const dir = await tempDir('bosun-payloads-many-');
    // Two files of random text; payloads side by side, overlapping, and beyond the read gap.
    const files = await Promise.all(
      ['a', 'b'].map(async (name, n) => {
        const file = join(dir, name);
        const bytes = Buffer.from(
          Array.from({ length: 300_000 }, (_, i) => String.fromCharCode(97 + ((i * (7 + n)) % 26))).join(''),
        );
        await writeFile(file, bytes);
        return { file, bytes, identity: await stat(file) };
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(1), fc.nat(299_000), fc.integer({ min: 1, max: 1000 })), {
          minLength: 1,
          maxLength: 40,
        }),
        async (picks) => {
          const payloads: StoredPayload[] = picks.map(([f, offset, length]) => ({
            storedIn: files[f]!.file,
            offset,
            length,
            identity: files[f]!.identity,
          }));
          const want = picks.map(([f, offset, length]) =>
            files[f]!.bytes.toString('utf8', offset, offset + length),
          );
          expect(await readStoredPayloads(payloads)).toEqual(want);
        },
      ),
      runs(100),
    );
  });
});
