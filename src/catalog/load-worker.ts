/**
 * A worker thread for load.ts's parseFileParts: reads one catalog file, lifts its payloads and
 * parses the rest, byte range by byte range (the parts of a spooled catalog).
 * The lifted payloads are read from the file later; the bytes and the parser's garbage go away
 * with the worker. Messages in: `{ id, file, parts }`; out: `{ id, parts }` (or `{ id, error }`).
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
  /** Byte ranges to parse separately. */
  parts: FilePart[];
}

export interface LoadAnswer {
  parts: ReturnType<typeof liftAndParse>[];
}

if (parentPort) {
  serveRequests<LoadRequest, LoadAnswer>(parentPort, async ({ file, parts }) => {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (err) {
      const problem = { file, message: `cannot read: ${(err as Error).message}` };
      return { answer: { parts: [{ ok: false, problem }] } };
    }
    const parsed = parts.map((p) => liftAndParse(bytes.subarray(p.base, p.base + p.length), p.name));
    return { answer: { parts: parsed } };
  });
}
