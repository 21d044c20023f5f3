/**
 * A catalog as catalogd serves it (OLM v1, operator-controller v1.2.0's
 * internal/catalogd/storage): one JSON object per line, every document of every catalog file in
 * the order the files are walked (by name, folder by folder, as opm's WalkMetasFS walks them),
 * each as opm re-encodes a document: keys sorted at every level (Go encodes a map so), no
 * escaping of `<`, `>` or `&`, U+2028 and U+2029 escaped. And an index of where each document's
 * line is, by `schema`, `package` and `name`, which `/api/v1/metas` answers from.
 *
 * The file is written one catalog file at a time (each read, parsed, written, let go), so no
 * catalog is ever whole in memory, and it is served by streaming byte ranges of it.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
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
  // JSON.stringify leaves U+2028/U+2029 as they are; Go's encoder escapes them.
  return `${JSON.stringify(sortedKeys(doc))
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')}\n`;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(byCodeUnit)) out[key] = sortedKeys(value[key]);
  return out;
}

/** Go sorts map keys by their UTF-8 bytes; for keys without surrogates that is code-unit order. */
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
  const stream = createWriteStream(out, { flags: 'wx', mode: 0o600 });
  let offset = 0;
  try {
    for (const file of files) {
      const parsed = parseYamlStream((await readFileNoFollow(file)).toString('utf8'), file);
      if (!parsed.ok) throw new Error(`${parsed.problem.file}: ${parsed.problem.message}`);
      for (const { value } of parsed.docs) {
        const line = Buffer.from(metaLine(value));
        indexDocument(index, value, { offset, length: line.length });
        offset += line.length;
        if (!stream.write(line)) await once(stream, 'drain');
      }
    }
    stream.end();
    await once(stream, 'finish');
  } catch (err) {
    stream.destroy();
    throw err;
  }
  return { size: offset, index };
}
