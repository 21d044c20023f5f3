/**
 * A worker thread for load.ts's parseParts: reads one part of a catalog file (exactly its byte
 * range: a spooled ConfigMap key or HTTP body, or one file of a pulled catalog image), lifts its
 * payloads and parses the rest. Bundle objects' manifests stay in the file (their handles sent
 * beside the documents), other lifted values get their text back here; the bytes and the
 * parser's garbage stay in this worker's heap. Messages in: `{ id, ...part }`; out: `{ id, part }`
 * (or `{ id, error }`).
 */
import { parentPort } from 'node:worker_threads';
import { serveRequests } from '../util/workers.js';
import { type ParsedPart, parsePart, reusedBuffer } from './load-part.js';

export interface FilePart {
  /** Names the part in messages (a ConfigMap key, a URL, an image's file). */
  name: string;
  base: number;
  length: number;
}

/** A part and the file it is in. */
export interface PartOfFile extends FilePart {
  file: string;
}

export type LoadRequest = PartOfFile;

export interface LoadAnswer {
  /**
   * The part's documents, and where its bundle objects' text stayed in the file: handles travel
   * beside the documents, never in them (see payloads.ts).
   */
  part: ParsedPart;
}

if (parentPort) {
  // The parts this worker reads, one after another, are read into one buffer (see PartBuffers).
  const buffers = reusedBuffer();
  serveRequests<LoadRequest, LoadAnswer>(parentPort, async (request) => ({
    answer: {
      part: await parsePart(
        { file: request.file, name: request.name, base: request.base, length: request.length },
        buffers,
      ),
    },
  }));
}
