/**
 * catalogd's HTTP API, served by the manager's HTTP server for every ClusterCatalog it serves
 * (OLM v1; see catalogd-request.ts for what each answer follows):
 * - `GET|HEAD /catalogs/<name>/api/v1/all`: the catalog as JSON Lines (`application/jsonl`);
 * - `GET|HEAD /catalogs/<name>/api/v1/metas?schema=&package=&name=`: the documents matching every
 *   parameter given, in catalog order (no parameter: all of them); another parameter is 400.
 * Both carry `Last-Modified` (the content's `status.lastUnpacked`), answer `If-Modified-Since`
 * with 304, and are gzip-compressed when the client accepts it. A name that is no serving
 * ClusterCatalog's, or a path that names none, is 404.
 *
 * The body is streamed from the catalog's file in the spool, section by section, never read
 * whole: the file is opened once per request, so content replaced meanwhile does not change an
 * answer half-way. A gzip answer of the whole content is sent from its compressed copy, with its
 * `Content-Length`, once catalogd-gzip.ts has made it (on the content's first gzip request);
 * until then, and for a selection of `metas`, the body is compressed as it streams. The copy is
 * found by the content's file, so it is always the copy of the content opened.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Section, selectSections } from '../catalog/content/jsonl.js';
import type { ServedCatalog, ServedCatalogs } from '../catalog/content/served.js';
import type { GzipCopies, GzipCopy } from './catalogd-gzip.js';
import {
  CatalogdEndpoint,
  evaluatePreconditions,
  formatHttpDate,
  isWholeContent,
  parseCatalogdPath,
  parseMetasQuery,
  Precondition,
  wantsGzip,
} from './catalogd-request.js';

export type CatalogdHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

const ChunkBytes = 64 * 1024;

export function catalogdHandler(deps: {
  catalogs: Pick<ServedCatalogs, 'get'>;
  gzipCopies: Pick<GzipCopies, 'open'>;
}): CatalogdHandler {
  return async (req, res) => {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const rawPath = q < 0 ? target : target.slice(0, q);
    const rawQuery = q < 0 ? '' : target.slice(q + 1);
    const named = parseCatalogdPath(rawPath);
    if (!named) return plain(res, 404);
    let sectionsOf = (c: ServedCatalog): Section[] => [{ offset: 0, length: c.size }];
    if (named.endpoint === CatalogdEndpoint.Metas) {
      const query = parseMetasQuery(rawQuery);
      if (!query.ok) return plain(res, 400);
      if (query.schema || query.package || query.name) sectionsOf = (c) => selectSections(c.index, query);
    }
    const opened = await openServed(deps.catalogs, named.name);
    if (!opened) return plain(res, 404);
    const { catalog, handle } = opened;
    let copy: GzipCopy | undefined;
    try {
      res.setHeader('Last-Modified', formatHttpDate(catalog.lastModified));
      res.setHeader('Vary', 'Accept-Encoding');
      const decided = evaluatePreconditions(
        {
          ifMatch: header(req, 'if-match'),
          ifUnmodifiedSince: header(req, 'if-unmodified-since'),
          ifNoneMatch: header(req, 'if-none-match'),
          ifModifiedSince: header(req, 'if-modified-since'),
        },
        catalog.lastModified,
      );
      if (decided !== Precondition.Serve) {
        res.writeHead(decided);
        res.end();
        return;
      }
      const sections = sectionsOf(catalog);
      const length = sections.reduce((n, s) => n + s.length, 0);
      const gzip = wantsGzip(header(req, 'accept-encoding'), length);
      if (gzip && isWholeContent(sections, catalog.size))
        copy = await deps.gzipCopies.open(named.name, catalog);
      res.setHeader('Content-Type', 'application/jsonl');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      if (gzip) res.setHeader('Content-Encoding', 'gzip');
      if (copy) res.setHeader('Content-Length', String(copy.size));
      else if (!gzip) res.setHeader('Content-Length', String(length));
      res.writeHead(200);
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      if (copy)
        await pipeline(Readable.from(readSections(copy.handle, [{ offset: 0, length: copy.size }])), res);
      else {
        const body = Readable.from(readSections(handle, sections));
        await (gzip ? pipeline(body, createGzip(), res) : pipeline(body, res));
      }
    } finally {
      await copy?.handle.close();
      await handle.close();
    }
  };
}

/** The catalog served under `name` with its file open; content replaced between the two is looked up again. */
async function openServed(
  catalogs: Pick<ServedCatalogs, 'get'>,
  name: string,
): Promise<{ catalog: ServedCatalog; handle: FileHandle } | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const catalog = catalogs.get(name);
    if (!catalog) return undefined;
    try {
      return { catalog, handle: await open(catalog.file, 'r') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return undefined;
}

async function* readSections(handle: FileHandle, sections: readonly Section[]): AsyncGenerator<Buffer> {
  for (const s of sections) {
    for (let done = 0; done < s.length;) {
      const buffer = Buffer.allocUnsafe(Math.min(ChunkBytes, s.length - done));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, s.offset + done);
      if (bytesRead === 0) throw new Error('the catalog file ended before its index says');
      done += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

const StatusText: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found' };

/** catalogd's error bodies: `404 Not Found`. */
function plain(res: ServerResponse, code: 400 | 404): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(`${code} ${StatusText[code]}\n`);
}
