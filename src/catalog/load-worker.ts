/**
 * A worker thread for load.ts: reads one catalog file, lifts its payloads and parses the rest.
 * The file's bytes travel back (moved, not copied) so the loading thread can read the lifted
 * payloads from them. Messages in: `{ id, file }`; out: `{ id, parsed, bytes }` (or `{ id, error }`).
 */
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { serveRequests } from '../util/workers.js';
import { liftAndParse } from './load.js';

export interface LoadRequest {
  file: string;
}

export interface LoadAnswer {
  parsed: ReturnType<typeof liftAndParse>;
  bytes: Uint8Array;
}

if (parentPort) {
  serveRequests<LoadRequest, LoadAnswer>(parentPort, async ({ file }) => {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (err) {
      const problem = { file, message: `cannot read: ${(err as Error).message}` };
      return { answer: { parsed: { ok: false, problem }, bytes: new Uint8Array() } };
    }
    const parsed = liftAndParse(bytes, file);
    // A buffer of its own can be moved; a slice of Node's shared pool is copied instead.
    const owned = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength;
    return { answer: { parsed, bytes }, transfer: owned ? [bytes.buffer as ArrayBuffer] : [] };
  });
}
