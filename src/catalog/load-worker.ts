/**
 * A worker thread for load.ts: reads one catalog file, lifts its payloads and parses the rest,
 * either the whole file or byte ranges of it (the parts of a spooled catalog). With `returnBytes`
 * the file's bytes travel back (moved, not copied) so the loading thread can read the lifted
 * payloads from them; otherwise they are read from the file later, and the bytes and the
 * parser's garbage go away with the worker. Messages in: `{ id, file, parts?, returnBytes }`;
 * out: `{ id, parts, bytes? }` (or `{ id, error }`).
 */
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { serveRequests } from '../util/workers.js';
import { liftAndParse } from './load.js';

export interface FilePart {
  /** Names the part in messages (a ConfigMap key, a URL). */
  name: string;
  base: number;
  length: number;
}

export interface LoadRequest {
  file: string;
  /** Byte ranges to parse separately; the whole file when absent. */
  parts?: FilePart[];
  returnBytes: boolean;
}

export interface LoadAnswer {
  parts: ReturnType<typeof liftAndParse>[];
  bytes?: Uint8Array;
}

if (parentPort) {
  serveRequests<LoadRequest, LoadAnswer>(parentPort, async ({ file, parts, returnBytes }) => {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (err) {
      const problem = { file, message: `cannot read: ${(err as Error).message}` };
      return { answer: { parts: [{ ok: false, problem }] } };
    }
    const ranges = parts ?? [{ name: file, base: 0, length: bytes.length }];
    const parsed = ranges.map((p) => liftAndParse(bytes.subarray(p.base, p.base + p.length), p.name));
    if (!returnBytes) return { answer: { parts: parsed } };
    // A buffer of its own can be moved; a slice of Node's shared pool is copied instead.
    const owned = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength;
    return { answer: { parts: parsed, bytes }, transfer: owned ? [bytes.buffer as ArrayBuffer] : [] };
  });
}
