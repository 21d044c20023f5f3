/**
 * One part of a catalog file parsed: its bytes read (exactly its range, without following
 * links), its payloads lifted out, the rest parsed, and the bundle objects' text left in the file
 * (payloads.ts). This is all a load worker runs (load-worker.ts), so it imports no more than
 * parsing needs: the worker's heap and code are in the manager's memory, and load.ts's schema
 * checks and validation stay in the thread that adds the documents to a catalog.
 */
import { open } from 'node:fs/promises';
import { parseYamlStream } from '../bundle/yaml.js';
import { NoFollowRead } from '../util/confined-fs.js';
import type { Problem } from '../util/result.js';
import { invalidUtf8Offset } from '../util/utf8.js';
import { isRecord } from '../util/record.js';
import { catalogFileTooLarge, CatalogLimits, payloadTooLarge } from './limits.js';
import type { PartOfFile } from './load-worker.js';
import {
  type FileIdentity,
  type Lifted,
  liftPayloads,
  type PayloadFile,
  restorePayloads,
  type StoredPosition,
} from './payloads.js';
import { hasDirective, lastDocumentStart, mayCutDocuments } from './yaml-documents.js';

/** Documents parsed from text, or why they cannot be. */
export type Parsed = { ok: true; docs: unknown[] } | { ok: false; problem: Problem };

/** One part's documents and where its bundle objects' text stayed, or why it cannot be read. */
export type ParsedPart =
  { ok: true; docs: unknown[]; stored: StoredPosition[] } | { ok: false; problem: Problem };

/**
 * Reads exactly one part's bytes (opened without following links) and parses them, leaving the
 * bundle objects' text in the file. In a load worker or in this thread.
 */
export async function parsePart(part: PartOfFile, buffers: PartBuffers = freshBuffers): Promise<ParsedPart> {
  return buffers.lend(async (take) => {
    if (part.length > WindowBytes) {
      const windowed = await parseInWindows(part, take);
      if (windowed) return windowed;
    }
    const read = await readPart(part, take);
    if (!read.ok) return read;
    const { bytes, identity } = read;
    // Everything kept from the bytes is copied out of them (strings, offsets), so the buffer can
    // be lent again once this returns.
    const parsed = liftAndParse(bytes, part.name);
    if (!parsed.ok) return parsed;
    const stored = restoreFrom(bytes, parsed, { file: part.file, identity, base: part.base });
    return { ok: true, docs: parsed.docs, stored };
  });
}

/** A part larger than this is read and parsed a window of whole documents at a time. */
export const WindowBytes = 2 ** 20;

/**
 * A large YAML part read a window at a time, each window cut after its last whole document
 * (yaml-documents.ts) and parsed before the next is read, the rest carried over. Whole, the
 * corpus's largest file (10.9 MB) took a buffer of its size in the worker's memory for a parse
 * whose documents, with their bundle objects' text left in the file, hold 0.4 MB; in windows the
 * buffer is the largest document's. Undefined where the part is not cut (JSON, a directive, a
 * document that is not a map) or a window does not parse: the part is then read whole, so what
 * it parses to and every problem reported (with the file's own line numbers) are as before.
 */
async function parseInWindows(
  part: PartOfFile,
  take: (size: number) => Buffer,
): Promise<ParsedPart | undefined> {
  try {
    if (catalogFileTooLarge(part.length)) return undefined;
    await using handle = await open(part.file, NoFollowRead);
    const st = await handle.stat();
    if (part.base + part.length > st.size) return undefined;
    const identity: FileIdentity = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    const docs: unknown[] = [];
    const stored: StoredPosition[] = [];
    let size = WindowBytes;
    let buf = take(size);
    let filled = 0; // bytes of buf read, from `at`
    for (let at = 0; at < part.length;) {
      const want = Math.min(buf.length, part.length - at);
      for (; filled < want;) {
        const { bytesRead } = await handle.read(buf, filled, want - filled, part.base + at + filled);
        if (bytesRead === 0) return undefined;
        filled += bytesRead;
      }
      const last = at + filled === part.length;
      if (at === 0 && !mayCutDocuments(buf.subarray(0, filled))) return undefined;
      const cut = last ? filled : lastDocumentStart(buf, filled);
      if (cut === undefined) {
        // One document longer than the window: a larger window, read again from its start.
        size *= 2;
        buf = take(Math.min(size, part.length - at));
        filled = 0;
        continue;
      }
      const piece = buf.subarray(0, cut);
      if (hasDirective(piece)) return undefined;
      const parsed = liftAndParse(piece, part.name);
      if (!parsed.ok || !parsed.docs.every((d) => isRecord(d))) return undefined;
      const positions = restoreFrom(piece, parsed, { file: part.file, identity, base: part.base + at });
      // Positions count documents within the window; the part's count from its first.
      for (const p of positions) stored.push({ ...p, doc: p.doc + docs.length });
      for (const d of parsed.docs) docs.push(d);
      buf.copy(buf, 0, cut, filled);
      filled -= cut;
      at += cut;
    }
    return { ok: true, docs, stored };
  } catch {
    return undefined;
  }
}

/**
 * Where parsePart gets the buffer a part is read into. A load worker reads one part after
 * another into one buffer (reusedBuffer): a fresh one per file stayed in its memory as garbage
 * until a collection (20 MiB of buffers at once while the corpus catalog image was read).
 */
export interface PartBuffers {
  /** Runs `use` with a function that gives a buffer of `size` bytes, valid until `use` settles. */
  lend<T>(use: (take: (size: number) => Buffer) => Promise<T>): Promise<T>;
}

const freshBuffers: PartBuffers = { lend: (use) => use((size) => Buffer.allocUnsafe(size)) };

/** A buffer at most this large is kept for smaller parts; a larger one follows each part's size. */
export const KeptBufferBytes = 2 ** 20;

/**
 * One buffer, lent to one reader at a time, grown for a larger part and cut down after a large
 * one; a reader that finds it lent gets a fresh one. Each change is `ArrayBuffer.transfer`, which
 * frees the old memory at once: a buffer simply replaced stayed resident as garbage until a
 * collection, beside its successor (25 MiB of buffers in the worker when the corpus's largest
 * file, 10.9 MB, was read), and the largest stayed for every smaller file after it. Within
 * KeptBufferBytes, or twice the part, the same memory is used again, so small files cost no page
 * faults.
 */
export function reusedBuffer(): PartBuffers {
  let memory = new ArrayBuffer(0);
  let lent = false;
  return {
    async lend(use) {
      if (lent) return freshBuffers.lend(use);
      lent = true;
      try {
        return await use((size) => {
          const large = memory.byteLength > KeptBufferBytes && size < memory.byteLength / 2;
          if (size > memory.byteLength || large) memory = memory.transfer(size);
          return Buffer.from(memory, 0, size);
        });
      } finally {
        lent = false;
      }
    },
  };
}

/** A part's bytes and its file's identity when they were read (see StoredPayload). */
async function readPart(
  part: PartOfFile,
  take: (size: number) => Buffer,
): Promise<{ ok: true; bytes: Buffer; identity: FileIdentity } | { ok: false; problem: Problem }> {
  try {
    const tooLarge = catalogFileTooLarge(part.length);
    if (tooLarge) throw new Error(tooLarge);
    await using handle = await open(part.file, NoFollowRead);
    const st = await handle.stat();
    if (part.base + part.length > st.size) throw new Error('the file is shorter than when it was written');
    const bytes = take(part.length);
    for (let done = 0; done < part.length;) {
      const { bytesRead } = await handle.read(bytes, done, part.length - done, part.base + done);
      if (bytesRead === 0) throw new Error('the file ended while it was being read');
      done += bytesRead;
    }
    return { ok: true, bytes, identity: { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } };
  } catch (err) {
    return { ok: false, problem: { file: part.name, message: `cannot read: ${(err as Error).message}` } };
  }
}

/**
 * Restores lifted values from the bytes they were lifted from (see restorePayloads); returns
 * where the bundle objects left in `stored` are, for attachStoredPayloads.
 */
export function restoreFrom(
  bytes: Buffer,
  parsed: { docs: unknown[]; lifted: Lifted },
  stored?: PayloadFile,
): StoredPosition[] {
  const text = (offset: number, length: number) => bytes.toString('utf8', offset, offset + length);
  return restorePayloads(parsed.docs, parsed.lifted, text, stored);
}

/** Parses a file's bytes with their payloads lifted out; the documents hold placeholders until restored. */
export function liftAndParse(
  bytes: Buffer,
  file: string,
): { ok: true; docs: unknown[]; lifted: Lifted } | { ok: false; problem: Problem } {
  // Decoding would turn bad bytes into U+FFFD, and writing the catalog back would keep that.
  const bad = invalidUtf8Offset(bytes);
  if (bad !== undefined) {
    const byte = bytes[bad]!.toString(16).toUpperCase().padStart(2, '0');
    return {
      ok: false,
      problem: {
        file,
        message: `is not UTF-8: byte 0x${byte} at offset ${bad} starts no UTF-8 character; catalog files are UTF-8 text`,
      },
    };
  }
  const lifted = liftPayloads(bytes);
  const huge = lifted.lengths.findIndex((n) => n > CatalogLimits.maxPayloadChars);
  if (huge !== -1)
    return {
      ok: false,
      problem: { file, message: payloadTooLarge(lifted.lengths[huge]!, lifted.offsets[huge]!) },
    };
  const parsed = parseText(lifted.text, file);
  if (parsed.ok) return { ...parsed, lifted };
  // A syntax error is reported from the original text, so its line and column are the file's.
  return lifted.offsets.length ? (parseText(bytes.toString('utf8'), file) as typeof parsed) : parsed;
}

export function parseText(text: string, file: string): Parsed {
  // opm sniffs the content rather than trusting the extension; so does the codec.
  const parsed = parseYamlStream(text, file);
  return parsed.ok ? { ok: true, docs: parsed.docs.map((d) => d.value) } : parsed;
}
