/**
 * The manager's HTTP endpoints: `/healthz` (the process answers), `/readyz` (ready to serve; a 503
 * says what it waits for), `/metrics` (Prometheus text), the web catalog (`/`, `/assets/…`, `/api/…`; see
 * src/web/server.ts), and optionally extra GET routes such as `/catalogs/<name>` serving a
 * catalog directory's FBC. Every request must name the server by one of its names (host-check.ts).
 */
import { createServer, type Server } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type WebCatalog, webRequest, writeWebResponse } from '../web/server.js';
import type { CatalogdHandler } from './catalogd.js';
import { underCatalogdRoot } from './catalogd-request.js';
import { checkHost } from './host-check.js';

export interface HttpServerOptions {
  /** `host:port`; port 0 picks a free one. */
  address: string;
  registry: Registry;
  /** Why the manager is not ready yet (the body of a 503 /readyz), or undefined once it is. */
  notReady: () => string | undefined;
  /**
   * With leader election: `leader` or `standby`, the body of a 200 /readyz. A synced standby is
   * ready, since it serves every read; the body says whether it also reconciles.
   */
  role?: () => string;
  /** Extra GET routes: path → body producer (for served catalogs). */
  routes?: Record<string, () => Promise<{ contentType: string; body: string }>>;
  /** catalogd's HTTP API of the ClusterCatalogs served, answering every path under `/catalogs/`. */
  catalogd?: CatalogdHandler;
  /** The web catalog, answering the paths the routes above do not. */
  web?: WebCatalog;
  /** Host names requests may name besides IP addresses, localhost and the address's own host. */
  hostnames?: readonly string[];
  /** Where a failed request's cause goes (the client is told only that it failed). */
  log?: Logger;
}

export interface RunningServer {
  server: Server;
  /** `http://host:port`, with the port actually bound. */
  url: string;
  close(): Promise<void>;
}

export function parseAddress(address: string, what = 'metrics address'): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  if (i < 0) throw new Error(`${what} "${address}" is not host:port (e.g. 127.0.0.1:8080)`);
  const host = address.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0';
  const portText = address.slice(i + 1);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new Error(`${what} "${address}": "${portText}" is not a port`);
  }
  return { host, port };
}

export async function startHttpServer(opts: HttpServerOptions): Promise<RunningServer> {
  const { host, port } = parseAddress(opts.address);
  const names = [...(opts.hostnames ?? []), ...(isIP(host) === 0 ? [host] : [])];
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, contentType: string, body: string) => {
      res.writeHead(code, { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff' });
      res.end(body);
    };
    const handle = async () => {
      const named = checkHost(req.headers.host, names);
      if (!named.ok) return send(named.status, 'text/plain; charset=utf-8', named.message);
      // The web catalog's session route takes POST and DELETE; everything else is read-only.
      if (req.method !== 'GET' && req.method !== 'HEAD' && !path?.startsWith('/api/'))
        return send(405, 'text/plain', 'method not allowed\n');
      if (path === '/healthz') return send(200, 'text/plain', 'ok\n');
      if (path === '/readyz') {
        const waitingFor = opts.notReady();
        return waitingFor === undefined
          ? send(200, 'text/plain', `${opts.role?.() ?? 'ok'}\n`)
          : send(503, 'text/plain', `${waitingFor}\n`);
      }
      if (path === '/metrics') return send(200, opts.registry.contentType, await opts.registry.metrics());
      const route = path ? opts.routes?.[path] : undefined;
      if (route) {
        const { contentType, body } = await route();
        return send(200, contentType, body);
      }
      if (opts.catalogd && path && underCatalogdRoot(path)) return opts.catalogd(req, res);
      const answer = await opts.web?.handle(webRequest(req));
      if (answer) return writeWebResponse(res, answer, req.method ?? 'GET');
      return send(404, 'text/plain', 'not found\n');
    };
    handle().catch((err: unknown) => {
      opts.log?.warn({ err, path }, 'HTTP request failed');
      // An answer that failed half-way has its headers out already: all that is left is to end it.
      if (res.headersSent) res.destroy(err as Error);
      else send(500, 'text/plain', 'the request failed; the manager log says why\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    server,
    url: `http://${shownHost}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
