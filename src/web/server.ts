/**
 * The web catalog's HTTP routes, served by the manager (src/server/http.ts) and by `bosun catalog
 * serve` (src/catalog/serve-http.ts):
 *
 *   /                                the page (client/index.html)
 *   /assets/<file>                   its CSS and modules
 *   /api/index                       every package's summary and where it is installed (IndexView)
 *   /api/packages/<catalog>/<name>   one package's page (PackageDetail)
 *   /api/icons/<catalog>/<name>      a package's icon
 *   /api/session                     POST: sign in with a bearer token; DELETE: sign out (manager)
 *
 * JSON answers carry an ETag (the page polls /api/index with If-None-Match and mostly gets 304),
 * the page a strict Content-Security-Policy: scripts, styles and images from this server only
 * (images also from data: URLs), no inline script or style, no eval, no frames, no forms.
 *
 * What the API shows depends on who asks when the server is given a WebAccess (the manager): see
 * scope.ts. Without one (`bosun catalog serve`, a catalog directory) it shows everything it has.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { noneMatchHits } from '../catalog/serve.js';
import type { IndexView, PackageDetail } from './client/api.js';
import { ApiPath } from './client/api.js';
import { clientAssets, type AssetStore } from './assets.js';
import type { RenderedDescription } from './markdown.js';
import { iconHeaders } from './icon-policy.js';
import {
  type CatalogContent,
  defaultChannelOf,
  installViews,
  packageDetail,
  packageIcon,
  packageId,
  packageSummary,
} from './view.js';
import type { CatalogMode } from './client/api.js';
import { FullScope, type Scope, scopedState, type WebState } from './scope.js';

export type { WebState } from './scope.js';

export interface WebSource {
  mode: CatalogMode;
  state(): Promise<WebState>;
}

/**
 * Who may see what, for a server that shows a cluster's state (the manager): the viewer of each
 * request, and signing in and out.
 */
export interface WebAccess {
  /**
   * The scope of the request's viewer for this state, or the answer to give instead (401 for a
   * bearer token the API server does not know, 429 when too many come from one client).
   * `setCookie` ends a session whose token is no longer accepted.
   */
  scope(
    req: WebRequest,
    state: WebState,
  ): Promise<{ ok: true; scope: Scope; setCookie?: string } | { ok: false; response: WebResponse }>;
  signIn(req: WebRequest): Promise<WebResponse>;
  signOut(req: WebRequest): Promise<WebResponse>;
}

export interface WebRequest {
  method: string;
  /** The request target, query included. */
  url: string;
  ifNoneMatch?: string;
  authorization?: string;
  cookie?: string;
  host?: string;
  origin?: string;
  secFetchSite?: string;
  /** The client's address. */
  remoteAddress?: string;
}

export interface WebResponse {
  status: number;
  headers: Record<string, string>;
  body?: Buffer | string;
}

export const ContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers on every answer: nothing sniffed, nothing framed, no referrer sent to linked sites. */
export const CommonHeaders: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Whether a request for `/` wants the page rather than data: a browser's Accept names text/html. */
export function wantsHtml(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return type === 'text/html' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** How many rendered descriptions are kept: a user browsing reads a few packages again and again. */
const RenderCacheSize = 64;

export interface WebCatalog {
  /** The answer to a request for one of the routes above, or undefined for any other path. */
  handle(req: WebRequest): Promise<WebResponse | undefined>;
}

type Renderer = (markdown: string) => RenderedDescription;

/** Index bodies kept: one per scope seen lately (anonymous, and each signed-in viewer's). */
const IndexCacheSize = 16;

export function webCatalog(
  source: WebSource,
  assets: AssetStore = clientAssets(),
  access?: WebAccess,
): WebCatalog {
  // ETags must not repeat across restarts: a revision counter starts again at 0.
  const boot = randomBytes(6).toString('hex');
  const indexes = new Map<string, { body: Buffer; etag: string }>();
  const rendered = new Map<string, RenderedDescription>();

  const render = (markdown: string, renderDescription: Renderer): RenderedDescription => {
    const hit = rendered.get(markdown);
    if (hit) {
      rendered.delete(markdown);
      rendered.set(markdown, hit);
      return hit;
    }
    const out = renderDescription(markdown);
    rendered.set(markdown, out);
    if (rendered.size > RenderCacheSize) rendered.delete(rendered.keys().next().value!);
    return out;
  };

  const json = (req: WebRequest, body: Buffer, etag: string): WebResponse => {
    // What a viewer sees depends on their credentials: never kept by a shared cache.
    const headers = {
      ...CommonHeaders,
      ETag: etag,
      'Cache-Control': 'private, no-cache',
      Vary: 'Cookie, Authorization',
    };
    if (noneMatchHits(req.ifNoneMatch, etag)) return { status: 304, headers };
    return {
      status: 200,
      headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
      body,
    };
  };

  const indexBody = (state: WebState, scope: Scope): { body: Buffer; etag: string } => {
    const hit = indexes.get(state.revision);
    if (hit) return hit;
    const installs = state.cluster ? installViews(state.cluster, channelHead(state)) : new Map();
    const view: IndexView = {
      mode: source.mode,
      ...(access ? { viewer: { signIn: true, ...(scope.user ? { user: scope.user } : {}) } } : {}),
      catalogs: state.catalogs.map((c) => c.info),
      packages: state.catalogs.flatMap((c) =>
        c.manifests.map((m) =>
          packageSummary(c, m, installs.get(packageId(c.info.id, m.status.packageName))),
        ),
      ),
    };
    const body = Buffer.from(JSON.stringify(view));
    const made = { body, etag: `"${boot}-${digest(body)}"` };
    indexes.set(state.revision, made);
    if (indexes.size > IndexCacheSize) indexes.delete(indexes.keys().next().value!);
    return made;
  };

  const find = (state: WebState, rest: string) => {
    const parts = rest.split('/');
    if (parts.length !== 2) return undefined;
    let catalogId: string;
    let name: string;
    try {
      [catalogId, name] = parts.map(decodeURIComponent) as [string, string];
    } catch {
      return undefined;
    }
    const catalog = state.catalogs.find((c) => c.info.id === catalogId);
    const manifest = catalog?.manifests.find((m) => m.status.packageName === name);
    return catalog && manifest ? { catalog, manifest } : undefined;
  };

  const notFound = (what: string): WebResponse => ({
    status: 404,
    headers: { ...CommonHeaders, 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ message: `${what} is not in any catalog served here` }),
  });

  return {
    async handle(req) {
      const path = req.url.split('?')[0] ?? '/';
      const isApi = path.startsWith('/api/');
      const isPage = path === '/' || path === '/index.html';
      if (!isApi && !isPage && !path.startsWith('/assets/')) return undefined;
      if (!isApi && req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed('GET, HEAD');

      if (isPage || path.startsWith('/assets/')) {
        const name = isPage ? 'index.html' : path.slice('/assets/'.length);
        const asset = await assets.get(name);
        if (!asset) return undefined;
        const headers: Record<string, string> = {
          ...CommonHeaders,
          ETag: asset.etag,
          'Cache-Control': 'no-cache',
          ...(isPage ? { 'Content-Security-Policy': ContentSecurityPolicy, Vary: 'Accept' } : {}),
        };
        if (noneMatchHits(req.ifNoneMatch, asset.etag)) return { status: 304, headers };
        return { status: 200, headers: { ...headers, 'Content-Type': asset.contentType }, body: asset.body };
      }

      if (path === `/${ApiPath.Session}`) {
        if (!access) return notFound(path);
        if (req.method === 'POST') return access.signIn(req);
        if (req.method === 'DELETE') return access.signOut(req);
        return methodNotAllowed('POST, DELETE');
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed('GET, HEAD');

      const whole = await source.state();
      const viewer = access ? await access.scope(req, whole) : { ok: true as const, scope: FullScope };
      if (!viewer.ok) return viewer.response;
      const answer = await respond(req, path, scopedState(whole, viewer.scope), viewer.scope);
      return viewer.setCookie
        ? { ...answer, headers: { ...answer.headers, 'Set-Cookie': viewer.setCookie } }
        : answer;
    },
  };

  async function respond(req: WebRequest, path: string, state: WebState, scope: Scope): Promise<WebResponse> {
    if (path === `/${ApiPath.Index}`) {
      const { body, etag } = indexBody(state, scope);
      return json(req, body, etag);
    }
    if (path.startsWith(`/${ApiPath.Packages}`)) {
      const hit = find(state, path.slice(ApiPath.Packages.length + 1));
      if (!hit) return notFound(`package ${path.slice(ApiPath.Packages.length + 1)}`);
      const installs = state.cluster
        ? (installViews(state.cluster, channelHead(state)).get(
            packageId(hit.catalog.info.id, hit.manifest.status.packageName),
          ) ?? [])
        : [];
      // The renderer (marked and sanitize-html, about 16 MiB resident once loaded) is loaded by
      // the first package page asked for, not with the manager: most managers never serve one,
      // and what a manager loads it holds for good.
      const { renderDescription } = await import('./markdown.js');
      const detail: PackageDetail = packageDetail(hit.catalog, hit.manifest, {
        installs,
        install: state.installContext(hit.catalog),
        render: (markdown) => render(markdown, renderDescription),
      });
      const body = Buffer.from(JSON.stringify(detail));
      return json(req, body, `"${boot}-${digest(body)}"`);
    }
    if (path.startsWith(`/${ApiPath.Icons}`)) {
      const hit = find(state, path.slice(ApiPath.Icons.length + 1));
      const icon = hit ? packageIcon(hit.manifest, hit.catalog.config) : undefined;
      if (!icon) return notFound(`an icon for ${path.slice(ApiPath.Icons.length + 1)}`);
      const body = Buffer.from(icon.data, 'base64');
      const etag = `"${digest(body)}"`;
      const { 'Content-Type': contentType, ...policy } = iconHeaders(icon.mediatype);
      const headers = {
        ...CommonHeaders,
        ...policy,
        ETag: etag,
        // The page asks with the icon's digest in the query: a changed icon is another URL. Kept
        // by the browser only: a namespace's catalog's icon is not everyone's to see.
        'Cache-Control': 'private, max-age=86400',
        Vary: 'Cookie, Authorization',
      };
      if (noneMatchHits(req.ifNoneMatch, etag)) return { status: 304, headers };
      return { status: 200, headers: { ...headers, 'Content-Type': contentType! }, body };
    }
    return notFound(path);
  }
}

function methodNotAllowed(allow: string): WebResponse {
  return {
    status: 405,
    headers: { ...CommonHeaders, Allow: allow, 'Content-Type': 'text/plain; charset=utf-8' },
    body: `method not allowed: use ${allow.replace(', ', ' or ')}\n`,
  };
}

/** Each Subscription's view of its channel's head, from the PackageManifests. */
function channelHead(state: WebState) {
  const manifests = new Map<string, CatalogContent['manifests'][number]>();
  for (const c of state.catalogs)
    for (const m of c.manifests) manifests.set(packageId(c.info.id, m.status.packageName), m);
  return (catalog: string, pkg: string, channel: string | undefined) => {
    const m = manifests.get(packageId(catalog, pkg));
    if (!m) return undefined;
    const ch = channel ? m.status.channels.find((c) => c.name === channel) : defaultChannelOf(m);
    if (!ch) return undefined;
    const version = ch.entries.find((e) => e.name === ch.currentCSV)?.version ?? ch.currentCSVDesc.version;
    return { csv: ch.currentCSV, ...(version ? { version } : {}) };
  };
}

const digest = (body: Buffer) => createHash('sha256').update(body).digest('hex').slice(0, 32);

/** The parts of a Node request the web catalog reads. */
export function webRequest(req: IncomingMessage): WebRequest {
  const h = req.headers;
  const optional = {
    ifNoneMatch: h['if-none-match'],
    authorization: h.authorization,
    cookie: h.cookie,
    host: h.host,
    origin: h.origin,
    secFetchSite: typeof h['sec-fetch-site'] === 'string' ? h['sec-fetch-site'] : undefined,
    remoteAddress: req.socket.remoteAddress,
  };
  return {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  };
}

/** Writes an answer; a HEAD request gets the headers only. */
export function writeWebResponse(res: ServerResponse, answer: WebResponse, method: string): void {
  const body = answer.body === undefined ? undefined : Buffer.from(answer.body);
  res.writeHead(answer.status, {
    ...answer.headers,
    ...(body && answer.status !== 304 ? { 'Content-Length': String(body.length) } : {}),
  });
  res.end(method === 'HEAD' ? undefined : body);
}
