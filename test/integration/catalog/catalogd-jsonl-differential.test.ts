/**
 * Bosun's catalogd `/api/v1/all` body against catalogd's own: tools/catalogd-jsonl walks a
 * catalog folder with opm v1.73.0's declcfg.WalkMetasFS and writes each meta's Blob, which is
 * what operator-controller v1.2.0's catalogd stores and serves. Byte for byte the same for the
 * sample catalog, for a catalog of awkward documents (HTML and line-separator characters,
 * control characters, numbers from -0 to 1e+21 and past 2^53, keys that sort differently by
 * UTF-16 and by UTF-8, nested folders and .indexignore), and for the 2021 corpus (with
 * BOSUN_CORPUS_DIR).
 *
 * One departure, pinned here: YAML 1.1's words for booleans (`yes`, `on`, `y`, `off`...) are
 * booleans to opm (its YAML decoder is go-yaml v2's) and strings to Bosun, whose codec reads YAML
 * 1.2's core schema; as map keys too (`on:` is the key "true" to opm). That is Bosun's YAML
 * reading, not its catalogd API. Skips, saying why, where the oracle cannot be built.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeCatalogJsonl } from '../../../src/catalog/content/jsonl.js';
import { listCatalogFiles } from '../../../src/catalog/load.js';
import type { Problem } from '../../../src/util/result.js';
import { importedCorpus } from '../../support/corpus-import.js';
import { type GoProgram, goProgram, run } from '../../support/go-tool.js';
import { tempDir } from '../../support/temp-dir.js';

const repo = resolve(import.meta.dirname, '../../..');
const fixtures = join(repo, 'test/fixtures/catalogs/catalogd-jsonl');
let oracle: GoProgram;

beforeAll(async () => {
  oracle = await goProgram(join(repo, 'tools/catalogd-jsonl'), {
    name: 'catalogd-jsonl',
    kind: 'tools',
    log: (l) => process.stderr.write(`[catalogd-jsonl] ${l}\n`),
    expected: 'about a minute on two cores',
  });
  if (!oracle.ok) console.warn(`the catalogd JSON Lines differential test is skipped: ${oracle.why}`);
}, 900_000);

/** catalogd's body for the catalog in `dir`. */
async function catalogds(dir: string): Promise<string> {
  if (!oracle.ok) throw new Error(oracle.why);
  const out = await run(oracle.path, [dir], repo);
  if (out.code !== 0) throw new Error(`catalogd-jsonl ${dir}: ${out.out.slice(-2000)}`);
  return out.stdout;
}

/** Bosun's body for the catalog in `dir`: the files the manager reads, in its order. */
async function bosuns(dir: string): Promise<string> {
  const problems: Problem[] = [];
  const files = (await listCatalogFiles(dir, problems)).map((f) => join(dir, f));
  expect(problems).toEqual([]);
  const out = join(await tempDir('bosun-jsonl-diff-'), 'all.jsonl');
  await writeCatalogJsonl(files, out);
  return readFile(out, 'utf8');
}

describe('the body of /api/v1/all', () => {
  it.for([
    ['the sample catalog', join(repo, 'catalogs/bosun-samples')],
    ['a catalog of awkward documents', join(fixtures, 'tricky')],
  ] as const)('is catalogd’s, byte for byte, for %s', async ([, dir], ctx) => {
    if (!oracle?.ok) return ctx.skip();
    const theirs = await catalogds(dir);
    expect(theirs.length).toBeGreaterThan(0);
    expect(await bosuns(dir)).toBe(theirs);
  });

  it('departs where opm reads YAML 1.1 booleans and Bosun reads strings', async (ctx) => {
    if (!oracle?.ok) return ctx.skip();
    const dir = join(fixtures, 'yaml11');
    // `n` is false and `on` and `y` are both true (the last one's value kept), to go-yaml v2.
    expect(await catalogds(dir)).toBe(
      '{"name":"words","schema":"my.yaml11","value":{"false":1,"true":false}}\n',
    );
    expect(await bosuns(dir)).toBe(
      '{"name":"words","schema":"my.yaml11","value":{"n":1,"on":"yes","y":"off"}}\n',
    );
  });

  it('is catalogd’s, byte for byte, for the 2021 corpus', async (ctx) => {
    const corpus = process.env.BOSUN_CORPUS_DIR;
    if (!corpus) console.warn('the corpus part is skipped: BOSUN_CORPUS_DIR is not set');
    if (!corpus || !oracle?.ok) return ctx.skip();
    const { dir, ...imported } = await importedCorpus(corpus);
    expect(imported.code, imported.stderr.slice(-2000)).toBe(0);
    const theirs = await catalogds(dir);
    const ours = await bosuns(dir);
    expect(ours.length).toBe(theirs.length);
    // Compared line by line, so a difference names the document rather than printing 120 MB.
    const a = ours.split('\n');
    const b = theirs.split('\n');
    expect(a.length).toBe(b.length);
    const differing = a.flatMap((line, i) => (line === b[i] ? [] : [i]));
    expect(
      differing.slice(0, 3).map((i) => ({ bosun: a[i]?.slice(0, 300), catalogd: b[i]?.slice(0, 300) })),
    ).toEqual([]);
  }, 600_000);
});
