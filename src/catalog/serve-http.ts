/**
 * The HTTP server of `bosun catalog serve`: validates the catalog directory before it listens
 * (an invalid catalog is refused and nothing is served), then answers each request with the
 * catalog as it is on disk now (see serve.ts).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fail, ok, type Result } from '../util/result.js';
import {
  CatalogPath,
  catalogFingerprint,
  catalogResponse,
  loadServedCatalog,
  type ReloadHooks,
  reloadingCatalog,
  type ServedCatalog,
} from './serve.js';

export interface CatalogServerOptions extends ReloadHooks {
  dir: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
}

export interface CatalogServer {
  /** What to put in a CatalogSource's `spec.address`: the bound host and port, and the path. */
  url: string;
  /** The catalog validated at start. */
  initial: ServedCatalog;
  close(): Promise<void>;
}

export async function startCatalogServer(opts: CatalogServerOptions): Promise<Result<CatalogServer>> {
  const fingerprint = await catalogFingerprint(opts.dir);
  const first = await loadServedCatalog(opts.dir);
  if (!first.ok) return fail(first.errors);
  const catalog = reloadingCatalog(opts.dir, { served: first.value, fingerprint }, opts);
  const server = createServer((req, res) => {
    void catalog.current().then((served) => {
      const answer = catalogResponse(
        {
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          ...(req.headers['if-none-match'] !== undefined
            ? { ifNoneMatch: req.headers['if-none-match'] }
            : {}),
        },
        served,
      );
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return ok({
    url: `http://${host}:${bound.port}${CatalogPath}`,
    initial: first.value,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
