/**
 * Inline manifests (`olm.bundle.object` data: base64 of each manifest) are most of a catalog's
 * bytes: 86% of the OperatorHub corpus catalog, with package icons (`base64data`) another 3%.
 * Nothing but an install or a write ever looks inside them, so loading does not parse them:
 *
 * 1. `liftPayloads` finds each long value of a `data` or `base64data` key in the raw bytes
 *    (with native `indexOf`, no decoding) and puts a short placeholder in its place, so the
 *    JSON or YAML parser only reads the rest.
 * 2. `restorePayloads` walks the parsed documents. Where the catalog is a file that stays (a
 *    directory the CLI loads, a catalog the manager spooled to disk), a bundle object's text is
 *    left in the file: its `data` becomes the empty string and a `StoredPayload` (the file, the
 *    offset and the length of its text) is kept for it beside the document, read with
 *    `withPayloads` when an install or a write needs it. Every other placeholder (an icon, one
 *    that landed inside some other string, or every one when the bytes were only in memory) gets
 *    its text back at once.
 *
 * A StoredPayload names a file to read, so no catalog text may ever become one: catalog documents
 * are external data, and a handle in them (as a `data` that is an object) once let a catalog name
 * any file the process could read, and have it rendered, served or installed. Handles therefore
 * never live in a document. They are kept in a WeakMap keyed by the property's value object,
 * which only this module's loader side fills (`attachStoredPayloads`, from the positions the
 * parser reports), and read through `payloadOf`; a document's `data` is always a string (the
 * load schema refuses anything else, naming the file and field). Whatever a catalog contains, it
 * can only ever be text.
 *
 * A value is lifted only where that is provably the same as parsing it: at least `MinLength`
 * long; in JSON a string without escapes; in YAML a plain scalar alone on its line, with no byte
 * that could end or change it, that cannot be read as a number and is not continued on the next
 * line. Anything else stays in the text and is parsed as usual.
 */
import { type FileHandle, open } from 'node:fs/promises';
import type { BundleDoc } from '../apis/fbc.js';
import { isRecord } from '../util/record.js';

/**
 * A bundle object's text kept in a catalog file: `length` bytes at `offset` of `file`, which had
 * `identity` when it was loaded. Plain data (it crosses from a worker thread as it is), but never
 * inside a document: see `payloadOf`.
 */
export interface StoredPayload {
  storedIn: string;
  offset: number;
  length: number;
  identity: FileIdentity;
}

/**
 * Where a stored payload belongs: bundle document `doc` of a parsed list, its property
 * `property`. How the load worker hands handles over, beside (never inside) the documents.
 */
export interface StoredPosition {
  doc: number;
  property: number;
  payload: StoredPayload;
}

/** The handles of bundle objects whose text stayed in a file, keyed by the property's value object. */
const storedPayloads = new WeakMap<object, StoredPayload>();

/**
 * The stored text of a bundle object's value (`{ data }` of an `olm.bundle.object` property),
 * if its text was left in a catalog file when it was loaded; `undefined` when `data` holds the
 * text itself. The only way to a handle: the documents hold none.
 */
export function payloadOf(value: unknown): StoredPayload | undefined {
  return typeof value === 'object' && value !== null ? storedPayloads.get(value) : undefined;
}

/**
 * Registers the handles `positions` names for `docs` (parsed in this thread or received from the
 * load worker). A position that does not name a bundle object of `docs` whose `data` is the empty
 * placeholder is a bug of the loader and throws.
 */
export function attachStoredPayloads(docs: readonly unknown[], positions: readonly StoredPosition[]): void {
  for (const { doc, property, payload } of positions) {
    const d = docs[doc];
    const p = isRecord(d) && Array.isArray(d.properties) ? (d.properties[property] as unknown) : undefined;
    if (!isRecord(p) || p.type !== 'olm.bundle.object' || !isRecord(p.value) || p.value.data !== '')
      throw new Error(`internal error: no bundle object at document ${doc}, property ${property}`);
    storedPayloads.set(p.value, payload);
  }
}

/**
 * Reads a stored payload. A file that is gone, shorter, or not the one loaded any more (another
 * inode, size or modification time) fails the read, naming the file, rather than giving bytes
 * from the wrong place.
 */
export async function readStoredPayload(p: StoredPayload): Promise<string> {
  return (await readStoredPayloads([p]))[0]!;
}

/** Payloads closer together than this are read with one read, the bytes between them dropped. */
const MaxGap = 64 * 1024;

/**
 * Reads stored payloads, in the order given, opening each file once however many of them it
 * holds and reading neighbouring ones with one read: writing a catalog reads thousands of them,
 * mostly side by side in a few files, and a read per payload spent more time waiting on the
 * thread pool than reading.
 */
export async function readStoredPayloads(payloads: readonly StoredPayload[]): Promise<string[]> {
  const out: string[] = new Array(payloads.length);
  const byFile = new Map<string, number[]>();
  payloads.forEach((p, i) => {
    const list = byFile.get(p.storedIn);
    if (list) list.push(i);
    else byFile.set(p.storedIn, [i]);
  });
  for (const [file, indices] of byFile) {
    const handle = await open(file, 'r').catch((err: Error) => {
      throw new Error(`${file}: cannot read the catalog's bundle object: ${err.message}`, { cause: err });
    });
    try {
      const stat = await handle.stat();
      const changed = indices.find((i) => !sameFile(stat, payloads[i]!.identity));
      if (changed !== undefined)
        throw new Error(`${file} has changed since the catalog was loaded; load it again`);
      indices.sort((a, b) => payloads[a]!.offset - payloads[b]!.offset);
      for (let first = 0; first < indices.length;) {
        // A run of payloads each starting within MaxGap of where the run so far ends.
        const start = payloads[indices[first]!]!.offset;
        let end = start + payloads[indices[first]!]!.length;
        let last = first + 1;
        for (; last < indices.length; last++) {
          const p = payloads[indices[last]!]!;
          if (p.offset - end > MaxGap) break;
          end = Math.max(end, p.offset + p.length);
        }
        const span = await readSpan(handle, file, start, end - start);
        for (let k = first; k < last; k++) {
          const p = payloads[indices[k]!]!;
          out[indices[k]!] = span.toString('utf8', p.offset - start, p.offset - start + p.length);
        }
        first = last;
      }
    } finally {
      await handle.close();
    }
  }
  return out;
}

async function readSpan(handle: FileHandle, file: string, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buf, done, length - done, offset + done);
    if (bytesRead === 0) throw new Error(`${file}: ends before the catalog value at byte ${offset + done}`);
    done += bytesRead;
  }
  return buf;
}

type Holder = Record<string, unknown> & { value: Record<string, unknown> };

const storedHolder = (p: unknown): p is Holder => isRecord(p) && payloadOf(p.value) !== undefined;

/**
 * The bundle document with every stored bundle object read: a copy when there was one to read
 * (the loaded catalog may be shared, and stays as small as it was), else the document itself.
 */
export async function withPayloads<T extends BundleDoc | Record<string, unknown>>(doc: T): Promise<T> {
  return (await withPayloadsAll([doc]))[0]!;
}

/** `withPayloads` of each document, reading each file they were loaded from once. */
export async function withPayloadsAll<T extends BundleDoc | Record<string, unknown>>(
  docs: readonly T[],
): Promise<T[]> {
  const props = (doc: T): unknown[] | undefined => {
    const list = (doc as { properties?: unknown }).properties;
    return doc.schema === 'olm.bundle' && Array.isArray(list) ? list : undefined;
  };
  const stored = docs.flatMap((d) => (props(d) ?? []).filter(storedHolder).map((h) => payloadOf(h.value)!));
  if (stored.length === 0) return [...docs];
  const texts = await readStoredPayloads(stored);
  let next = 0;
  return docs.map((doc) => {
    const list = props(doc);
    if (!list?.some(storedHolder)) return doc;
    const properties = list.map((p) =>
      storedHolder(p) ? { ...p, value: { ...p.value, data: texts[next++]! } } : p,
    );
    return { ...doc, properties };
  });
}

/** What tells a file's content apart from a later one's without reading it. */
export interface FileIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
}

function sameFile(st: FileIdentity, expect: FileIdentity): boolean {
  return st.ino === expect.ino && st.size === expect.size && st.mtimeMs === expect.mtimeMs;
}

/** Shorter values are not worth a placeholder. */
export const MinLength = 256;

export interface Lifted {
  /** The text to parse: the bytes with each lifted value replaced by its placeholder. */
  text: string;
  /** Placeholder `i` is `${nonce}${i}x`. */
  nonce: string;
  /** Byte offset and length of each lifted value, in the buffer given to liftPayloads. */
  offsets: number[];
  lengths: number[];
}

const LF = 0x0a;
const SPACE = 0x20;
const QUOTE = 0x22;

/**
 * A letter no YAML number can hold (decimal, `0x` hex, `0o` octal, `0b` binary, exponents): a
 * plain scalar with one of these is a string to any YAML reader.
 */
const NON_NUMERIC = new Uint8Array(256);
for (const c of 'ghijklmnpqrstuvwyzGHIJKLMNPQRSTUVWYZ/') NON_NUMERIC[c.charCodeAt(0)] = 1;

/**
 * Bytes that could end or change a single-line plain YAML scalar in some context: blanks (before
 * a comment or a `: `), quotes and backslash (should the line sit inside a quoted string), and
 * flow indicators (inside `{...}` or `[...]`). Checked with native `indexOf`, which is an order of
 * magnitude faster than a JavaScript loop over 100 MB.
 */
const YAML_UNSAFE = [0x20, 0x09, 0x22, 0x27, 0x5c, 0x2c, 0x5b, 0x5d, 0x7b, 0x7d];

function containsAny(buf: Buffer, start: number, end: number, bytes: readonly number[]): boolean {
  const view = buf.subarray(start, end);
  return bytes.some((b) => view.indexOf(b) !== -1);
}

function hasNonNumeric(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (NON_NUMERIC[buf[i]!] === 1) return true;
  return false;
}

/** Replaces long `data` and `base64data` values in a JSON or YAML catalog file's bytes by placeholders. */
export function liftPayloads(buf: Buffer): Lifted {
  const offsets: number[] = [];
  const lengths: number[] = [];
  const json = firstByte(buf) === 0x7b || firstByte(buf) === 0x5b; // `{` or `[`, as the loader sniffs
  // One search finds both keys (`data` ends `base64data`); each hit is then checked in place.
  const key = json ? JSON_KEY : YAML_KEY;
  const find = json ? jsonValue : yamlValue;
  // The search resumes after each lifted value, so it reads only the bytes that stay.
  for (let at = buf.indexOf(key); at !== -1;) {
    const span = find(buf, at);
    if (span) {
      offsets.push(span[0]);
      lengths.push(span[1] - span[0]);
    }
    at = buf.indexOf(key, span ? span[1] : at + key.length);
  }
  if (offsets.length === 0) return { text: buf.toString('utf8'), nonce: '', offsets, lengths };
  const rest: string[] = [];
  let from = 0;
  offsets.forEach((offset, i) => {
    rest.push(buf.toString('utf8', from, offset));
    from = offset + lengths[i]!;
  });
  rest.push(buf.toString('utf8', from));
  // The placeholders must not occur in the text they are put into.
  let nonce: string;
  do nonce = `bosunlift${Math.random().toString(36).slice(2, 10)}n`;
  while (rest.some((r) => r.includes(nonce)));
  const pieces: string[] = [rest[0]!];
  for (let i = 1; i < rest.length; i++) pieces.push(`${nonce}${i - 1}x`, rest[i]!);
  return { text: pieces.join(''), nonce, offsets, lengths };
}

/** `data"`: the end of the key `"data"` or `"base64data"`. */
const JSON_KEY = Buffer.from('data"');
/** `data: `: the end of the key `data:` or `base64data:`. */
const YAML_KEY = Buffer.from('data: ');
const BASE64_PREFIX = Buffer.from('base64');

/** Where the key ending at `at` (its `data`) starts, if it is `data` or `base64data` after `before`. */
function keyStart(buf: Buffer, at: number, before: (i: number) => boolean): number | undefined {
  if (before(at - 1)) return at;
  const b64 = at - BASE64_PREFIX.length;
  if (b64 >= 0 && buf.compare(BASE64_PREFIX, 0, BASE64_PREFIX.length, b64, at) === 0 && before(b64 - 1))
    return b64;
  return undefined;
}

/**
 * In valid JSON, `"data"` followed by `:` and `"` is a key and the start of its string value:
 * a quote inside a string is escaped, so these bytes cannot be the middle of one. The value runs
 * to the next quote; when there is no backslash before it, that quote ends it and the value is
 * exactly its bytes. (Any string qualifies; `data` values are base64 in practice.)
 */
function jsonValue(buf: Buffer, at: number): [number, number] | undefined {
  if (keyStart(buf, at, (i) => buf[i] === QUOTE) === undefined) return undefined;
  let i = skipJsonSpace(buf, at + JSON_KEY.length);
  if (buf[i] !== 0x3a) return undefined; // `:`
  i = skipJsonSpace(buf, i + 1);
  if (buf[i] !== QUOTE) return undefined;
  const start = i + 1;
  const end = buf.indexOf(QUOTE, start);
  if (end === -1 || end - start < MinLength || containsAny(buf, start, end, [0x5c])) return undefined;
  return [start, end];
}

function skipJsonSpace(buf: Buffer, i: number): number {
  while (buf[i] === SPACE || buf[i] === LF || buf[i] === 0x0d || buf[i] === 0x09) i++;
  return i;
}

/**
 * In YAML, a block mapping key (only indentation or `- ` before it on its line) followed by a
 * plain scalar that ends the line. The scalar must not go on: a plain scalar continues on
 * following lines that are indented deeper than its key, so the next non-blank line must not be.
 * If the key is really inside a block or quoted string, the placeholder sits inside that string
 * and restorePayloads puts the text back.
 */
function yamlValue(buf: Buffer, at: number): [number, number] | undefined {
  // Before the key: the line's start, or blanks and `- `.
  const key = keyStart(buf, at, (i) => i < 0 || buf[i] === LF || buf[i] === SPACE);
  if (key === undefined) return undefined;
  const lineStart = buf.lastIndexOf(LF, key - 1) + 1;
  for (let i = lineStart; i < key; i++) {
    const c = buf[i]!;
    if (c !== SPACE && !(c === 0x2d && buf[i + 1] === SPACE)) return undefined; // `-`
  }
  const keyColumn = key - lineStart;
  let start = at + YAML_KEY.length;
  while (buf[start] === SPACE) start++;
  let lineEnd = buf.indexOf(LF, start);
  if (lineEnd === -1) lineEnd = buf.length;
  let end = lineEnd;
  while (end > start && (buf[end - 1] === SPACE || buf[end - 1] === 0x0d)) end--;
  if (end - start < MinLength || buf[end - 1] === 0x3a) return undefined; // `key:` would be a mapping
  if (containsAny(buf, start, end, YAML_UNSAFE) || !hasNonNumeric(buf, start, end)) return undefined;
  // The next line that is not blank must be indented no deeper than the key.
  for (let i = lineEnd + 1; i < buf.length;) {
    let j = i;
    while (buf[j] === SPACE) j++;
    if (buf[j] === LF || buf[j] === 0x0d) {
      const next = buf.indexOf(LF, j);
      if (next === -1) break;
      i = next + 1;
      continue;
    }
    if (j < buf.length && j - i > keyColumn) return undefined;
    break;
  }
  return [start, end];
}

function firstByte(buf: Buffer): number | undefined {
  let i = 0;
  // A UTF-8 byte order mark, then whitespace.
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) i = 3;
  while (buf[i] === SPACE || buf[i] === LF || buf[i] === 0x0d || buf[i] === 0x09) i++;
  return buf[i];
}

/** Where the bytes given to liftPayloads stay, for bundle objects to be read from later. */
export interface PayloadFile {
  file: string;
  identity: FileIdentity;
  /** The lifted bytes' offset in the file. */
  base: number;
}

/**
 * Puts the lifted values back into `docs` (parsed from `lifted.text`), in place: `text(offset,
 * length)` gives a lifted value's text (offsets in the lifted bytes). With `stored`, bundle
 * objects' text stays in that file instead: their `data` becomes `''`, and the handles to their
 * text are returned with their positions, for `attachStoredPayloads` in the thread that keeps the
 * documents.
 */
export function restorePayloads(
  docs: unknown[],
  lifted: Lifted,
  text: (offset: number, length: number) => string,
  stored?: PayloadFile,
): StoredPosition[] {
  const { nonce, offsets, lengths } = lifted;
  const positions: StoredPosition[] = [];
  if (offsets.length === 0) return positions;
  const indexOf = (s: unknown): number | undefined => {
    if (typeof s !== 'string' || !s.startsWith(nonce) || !s.endsWith('x')) return undefined;
    const i = Number(s.slice(nonce.length, -1));
    return Number.isInteger(i) && i >= 0 && i < offsets.length ? i : undefined;
  };
  let restored = 0;
  const textOf = (i: number) => text(offsets[i]!, lengths[i]!);
  docs.forEach((doc, d) => {
    if (!isRecord(doc)) return;
    if (doc.schema === 'olm.bundle' && Array.isArray(doc.properties)) {
      doc.properties.forEach((p: unknown, property) => {
        if (!isRecord(p) || p.type !== 'olm.bundle.object' || !isRecord(p.value)) return;
        const i = indexOf(p.value.data);
        if (i === undefined) return;
        if (stored) {
          p.value.data = '';
          positions.push({
            doc: d,
            property,
            payload: {
              storedIn: stored.file,
              offset: stored.base + offsets[i]!,
              length: lengths[i]!,
              identity: {
                ino: stored.identity.ino,
                size: stored.identity.size,
                mtimeMs: stored.identity.mtimeMs,
              },
            },
          });
        } else p.value.data = textOf(i);
        restored++;
      });
    } else if (doc.schema === 'olm.package' && isRecord(doc.icon)) {
      const i = indexOf(doc.icon.base64data);
      if (i !== undefined) {
        doc.icon.base64data = textOf(i);
        restored++;
      }
    }
  });
  // Placeholders anywhere else (rare: a `data` key of some other document, or the bytes of one
  // inside a block string) are found by walking everything.
  if (restored < offsets.length) {
    const pattern = new RegExp(`${nonce}(\\d+)x`, 'g');
    const put = (s: string) =>
      s.replace(pattern, (m, i: string) => (Number(i) < offsets.length ? textOf(Number(i)) : m));
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return v.includes(nonce) ? put(v) : v;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) v[i] = walk(v[i]);
      } else if (isRecord(v)) {
        for (const k of Object.keys(v)) {
          const value = walk(v[k]);
          if (k.includes(nonce)) {
            delete v[k];
            v[put(k)] = value;
          } else v[k] = value;
        }
      }
      return v;
    };
    for (let i = 0; i < docs.length; i++) docs[i] = walk(docs[i]);
  }
  return positions;
}
