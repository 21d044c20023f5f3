/**
 * A worker thread for load.ts's parseFileParts: reads one catalog file, lifts its payloads and
 * parses the rest, byte range by byte range (the parts of a spooled catalog). Bundle objects'
 * manifests stay in the file (their handles sent beside the documents), other lifted values get their text back here;
 * the bytes and the parser's garbage go away with the worker. Messages in: `{ id, file, parts }`; out: `{ id, parts }` (or `{ id, error }`).
 */
import { parentPort } from 'node:worker_threads';
import type { Problem } from '../util/result.js';
import { serveRequests } from '../util/workers.js';
import { liftAndParse, readIdentified, restoreFrom } from './load.js';
import type { StoredPosition } from './payloads.js';

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
  /**
   * Each part's documents, and where its bundle objects' text stayed in the file: handles travel
   * beside the documents, never in them (see payloads.ts).
   */
  parts: ({ ok: true; docs: unknown[]; stored: StoredPosition[] } | { ok: false; problem: Problem })[];
}

if (parentPort) {
  serveRequests<LoadRequest, LoadAnswer>(parentPort, async ({ file, parts }) => {
    const read = await readIdentified(file);
    if (!read.ok) return { answer: { parts: [read] } };
    const { bytes, identity } = read;
    const parsed = parts.map((p): LoadAnswer['parts'][number] => {
      const part = bytes.subarray(p.base, p.base + p.length);
      const one = liftAndParse(part, p.name);
      if (!one.ok) return one;
      const stored = restoreFrom(part, one, { file, identity, base: p.base });
      return { ok: true, docs: one.docs, stored };
    });
    return { answer: { parts: parsed } };
  });
}
