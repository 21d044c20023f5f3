/**
 * The HTTP server of `bosun catalog serve`: validates the catalog directory before it listens
 * (an invalid catalog is refused and nothing is served), then answers each request with the
 * catalog as it is on disk now (see src/catalog/serve.ts).
 *
 * The same server shows the catalog to people: the web catalog (src/web/server.ts) answers `/`
 * when the request asks for HTML (a browser's Accept names text/html; a CatalogSource's fetch
 * and curl send `*\/*`), and its `/assets/` and `/api/` paths. So the one URL printed is both the
 * CatalogSource's address and the page to open.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, resolve } from 'node:path';
import {
  CatalogPath,
  catalogFingerprint,
  catalogResponse,
  loadServedCatalog,
  type ReloadHooks,
  reloadingCatalog,
  type ServedCatalog,
} from '../catalog/serve.js';
import { fail, ok, type Result } from '../util/result.js';
import { wantsHtml, webCatalog, webRequest, writeWebResponse } from '../web/server.js';
import { catalogSourceName, directoryWebSource } from '../web/sources.js';

export interface CatalogServerOptions extends ReloadHooks {
  dir: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Where the page tells people to create the CatalogSource: the manager's global catalog namespace. */
  catalogNamespace: string;
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
  // The address is known once the server listens; the page is asked for only after that.
  let url = '';
  const web = webCatalog(
    directoryWebSource({
      current: () => catalog.current(),
      name: catalogSourceName(basename(resolve(opts.dir))),
      address: () => url,
      catalogNamespace: opts.catalogNamespace,
    }),
  );
  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0];
    const forPeople = path !== CatalogPath || wantsHtml(req.headers.accept);
    const answer = forPeople
      ? web.handle(webRequest(req))
      : catalog.current().then((served) => catalogResponse(webRequest(req), served));
    answer
      .then(async (a) =>
        writeWebResponse(res, a ?? catalogResponse(webRequest(req), await catalog.current()), method),
      )
      .catch((err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`${(err as Error).message}\n`);
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
  url = `http://${host}:${bound.port}${CatalogPath}`;
  return ok({
    url,
    initial: first.value,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
