/**
 * A catalog as catalogd serves it (OLM v1, operator-controller v1.2.0's
 * internal/catalogd/storage): one JSON object per line, every document of every catalog file in
 * the order the files are walked (by name, folder by folder, as opm's WalkMetasFS walks them),
 * each as opm re-encodes a document: keys sorted at every level (Go encodes a map so, by UTF-8
 * bytes), no escaping of `<`, `>` or `&`, U+2028 and U+2029 escaped, numbers as Go writes a
 * float64 (which JavaScript's shortest form is, but for -0). tools/catalogd-jsonl, opm's own
 * walk, is the oracle (test/integration/catalog/catalogd-jsonl-differential.test.ts). And an index of where each document's
 * line is, by `schema`, `package` and `name`, which `/api/v1/metas` answers from.
 *
 * The file is written one catalog file at a time (each read, parsed, written, let go), so no
 * catalog is ever whole in memory, and it is served by streaming byte ranges of it.
 */
import { open } from 'node:fs/promises';
import { parseYamlStream } from '../../bundle/yaml.js';
import { readFileNoFollow } from '../../util/confined-fs.js';
import { isRecord } from '../../util/record.js';

/** Where one document's line is in the file: its byte offset and length (newline included). */
export interface Section {
  offset: number;
  length: number;
}

/** Sections by each value of a document's `schema`, `package` and `name` (only where it has one). */
export interface MetaIndex {
  bySchema: Map<string, Section[]>;
  byPackage: Map<string, Section[]>;
  byName: Map<string, Section[]>;
}

export interface WrittenJsonl {
  /** The file's length in bytes. */
  size: number;
  index: MetaIndex;
}

/** One document as catalogd writes its line: keys sorted at every level, newline-terminated. */
export function metaLine(doc: unknown): string {
  const seen = { negativeZero: false };
  const sorted = sortedKeys(doc, seen);
  // JSON.stringify writes -0 as 0, which Go keeps; such a rare document is written by hand.
  const text = seen.negativeZero ? goJson(sorted) : JSON.stringify(sorted);
  // JSON.stringify leaves U+2028/U+2029 as they are; Go's encoder escapes them.
  return `${text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')}\n`;
}

function sortedKeys(value: unknown, seen: { negativeZero: boolean }): unknown {
  if (Array.isArray(value)) return value.map((v) => sortedKeys(v, seen));
  if (Object.is(value, -0)) seen.negativeZero = true;
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(byUtf8)) out[key] = sortedKeys(value[key], seen);
  return out;
}

/**
 * Go sorts map keys by their UTF-8 bytes, which is code point order. JavaScript compares UTF-16
 * code units, which differs only where a surrogate pair meets U+E000 to U+FFFF.
 */
function byUtf8(a: string, b: string): number {
  if (surrogate.test(a) || surrogate.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}
const surrogate = /[\ud800-\udfff]/;

/** JSON as JSON.stringify writes it, but -0 as Go writes it. */
function goJson(value: unknown): string {
  if (Object.is(value, -0)) return '-0';
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (isRecord(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${goJson(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

export function emptyIndex(): MetaIndex {
  return { bySchema: new Map(), byPackage: new Map(), byName: new Map() };
}

/** Adds one document's section under each of its `schema`, `package` and `name` that is a non-empty string. */
export function indexDocument(index: MetaIndex, doc: unknown, section: Section): void {
  if (!isRecord(doc)) return;
  const add = (map: Map<string, Section[]>, value: unknown) => {
    if (typeof value !== 'string' || value === '') return;
    const list = map.get(value);
    if (list) list.push(section);
    else map.set(value, [section]);
  };
  add(index.bySchema, doc.schema);
  add(index.byPackage, doc.package);
  add(index.byName, doc.name);
}

export interface MetaQuery {
  schema?: string;
  package?: string;
  name?: string;
}

/**
 * The sections a `/api/v1/metas` query selects, in file order: those of every document whose
 * `schema`, `package` and `name` equal each one asked for (an empty value asks for nothing), as
 * catalogd intersects its index. No value at all selects every document with a schema.
 */
export function selectSections(index: MetaIndex, query: MetaQuery): Section[] {
  let chosen: Set<Section> = query.schema
    ? new Set(index.bySchema.get(query.schema) ?? [])
    : new Set([...index.bySchema.values()].flat());
  const keep = (list: readonly Section[] | undefined) => {
    const wanted = new Set(list ?? []);
    chosen = new Set([...chosen].filter((s) => wanted.has(s)));
  };
  if (query.package) keep(index.byPackage.get(query.package));
  if (query.name) keep(index.byName.get(query.name));
  return [...chosen].sort((a, b) => a.offset - b.offset);
}

/**
 * Writes the catalog files `files` (paths, in the order read) to `out` as JSON Lines, and indexes
 * them. The files were parsed and validated when fetched; one that no longer parses is an error
 * naming it (the caller keeps the last good content).
 */
export async function writeCatalogJsonl(files: readonly string[], out: string): Promise<WrittenJsonl> {
  const index = emptyIndex();
  // A handle, not a stream: an error opening or writing is this call's rejection, never an
  // 'error' event nobody listens to yet.
  await using handle = await open(out, 'wx', 0o600);
  let offset = 0;
  for (const file of files) {
    const parsed = parseYamlStream((await readFileNoFollow(file)).toString('utf8'), file);
    if (!parsed.ok) throw new Error(`${parsed.problem.file}: ${parsed.problem.message}`);
    // One catalog file's lines at a time.
    const lines: Buffer[] = [];
    for (const { value } of parsed.docs) {
      const line = Buffer.from(metaLine(value));
      indexDocument(index, value, { offset, length: line.length });
      offset += line.length;
      lines.push(line);
    }
    const chunk = Buffer.concat(lines);
    for (let done = 0; done < chunk.length;) {
      const { bytesWritten } = await handle.write(chunk, done, chunk.length - done);
      done += bytesWritten;
    }
  }
  return { size: offset, index };
}
