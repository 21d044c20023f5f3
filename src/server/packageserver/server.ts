/**
 * The PackageManifest API over HTTPS, as the aggregator reaches it: discovery, OpenAPI, list,
 * get, watch and the `icon` subresource of `packages.operators.coreos.com/v1`, each request
 * authenticated and authorized by delegation to the API server (auth.ts). Lists and gets answer
 * JSON, or a `Table` when kubectl asks for one (`Accept: application/json;as=Table;...`), or
 * `PartialObjectMetadata` for metadata-only clients.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  PackageManifestKind,
  PackagesApiVersion,
  PackagesGroup,
  type PackageManifest,
} from '../../apis/packages.js';
import type { IndexedPackage, PackageEvent, PackageIndex } from '../../packages/index.js';
import {
  fieldsMatch,
  labelMatcher,
  parseFieldSelector,
  parseLabelSelector,
} from '../../packages/selectors.js';
import { parseAddress } from '../http.js';
import { iconHeaders } from '../../web/icon-policy.js';
import {
  bearerToken,
  fromRequestHeaders,
  type RequestHeaderConfig,
  type Reviewer,
  type TokenResult,
  type UserInfo,
} from './auth.js';
import { openAPIDocument } from './openapi.js';
import { type RequestInfo, requestInfo, requestTarget } from './request.js';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  failure,
  notFound,
  type Status,
  table,
  type TableOptions,
} from './shapes.js';

export interface TlsMaterial {
  certPEM: string;
  keyPEM: string;
}

export interface PackageServerOptions {
  /** `host:port`; port 0 picks a free one. */
  address: string;
  index: PackageIndex;
  reviewer: Reviewer;
  tls: TlsMaterial;
  requestHeader?: RequestHeaderConfig | undefined;
  log: Logger;
  now?: () => number;
}

export interface RunningPackageServer {
  port: number;
  url: string;
  /** Serves a new certificate from the next connection on (rotation). */
  setTls(tls: TlsMaterial): void;
  close(): Promise<void>;
}

const jsonType = 'application/json';
const fieldLabels = ['metadata.name', 'metadata.namespace'];

type Representation =
  { as: 'object' } | { as: 'table'; apiVersion: string } | { as: 'metadata' } | { as: 'unacceptable' };

/** What the client accepts, in its order of preference (JSON when it says nothing). */
export function representation(accept: string | undefined): Representation {
  if (!accept) return { as: 'object' };
  for (const clause of accept.split(',')) {
    const [type, ...params] = clause.split(';').map((s) => s.trim());
    const p = Object.fromEntries(params.map((kv) => kv.split('=').map((s) => s.trim()) as [string, string]));
    if (type !== jsonType && type !== 'application/*' && type !== '*/*') continue;
    if (!p.as) return { as: 'object' };
    if (p.as === 'Table' && p.g === 'meta.k8s.io' && (p.v === 'v1' || p.v === 'v1beta1'))
      return { as: 'table', apiVersion: `meta.k8s.io/${p.v}` };
    if ((p.as === 'PartialObjectMetadataList' || p.as === 'PartialObjectMetadata') && p.g === 'meta.k8s.io')
      return { as: 'metadata' };
  }
  return { as: 'unacceptable' };
}

export async function startPackageServer(opts: PackageServerOptions): Promise<RunningPackageServer> {
  const { host, port } = parseAddress(opts.address);
  const now = opts.now ?? Date.now;
  const secure = (tls: TlsMaterial) => ({
    cert: tls.certPEM,
    key: tls.keyPEM,
    ...(opts.requestHeader ? { ca: opts.requestHeader.clientCA } : {}),
  });
  const server: Server = createServer(
    { ...secure(opts.tls), requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        opts.log.warn({ err, path: req.url }, 'package API request failed');
        // The cause (an API server's answer to a review, say) goes to the log, not to the client.
        if (!res.headersSent)
          sendStatus(res, failure(500, 'InternalError', 'the request failed; the manager log says why'));
        else res.destroy();
      });
    },
  );
  const watches = new Set<ServerResponse>();

  /**
   * In the API server's order: who is asking (401 for nobody, 429 when their tokens come too
   * fast), then whether the target is one at all (400, 414), then health (for any authenticated
   * caller, as every API server's always-allowed paths), then what it names (404 for nothing this
   * server serves, before any review), then may they (403).
   */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const who = await authenticate(req);
    if (!who.ok) return sendStatus(res, who.status, who.retryAfterSeconds);
    const user = who.user;
    const target = requestTarget(req.url ?? '');
    if (!target.ok) return sendStatus(res, failure(target.code, 'BadRequest', target.message));
    const { path, query } = target;
    if (HealthPaths.has(path)) return send(res, 200, 'text/plain', 'ok');
    const info = requestInfo(path, query);
    // A path in the group that names no resource of it, or a path outside it this server does not
    // serve: nothing there to authorize, and no review is spent on it.
    if (info.resource === 'unknown') return sendStatus(res, failure(404, 'NotFound', info.message));
    if (info.resource === false && !servesPath(path)) return sendStatus(res, pathNotFound(path));
    const decision = await opts.reviewer.authorize(user, info, (req.method ?? 'GET').toLowerCase());
    if (!decision.allowed) return sendStatus(res, forbidden(user, info, decision.reason));
    if (req.method !== 'GET') {
      return sendStatus(
        res,
        failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'),
      );
    }
    if (info.resource === false) return nonResource(path, res);

    const rep = representation(req.headers.accept);
    if (rep.as === 'unacceptable' && info.subresource !== 'icon') {
      return sendStatus(
        res,
        failure(406, 'NotAcceptable', `only ${jsonType} is served, not ${req.headers.accept}`),
      );
    }
    const labels = parseLabelSelector(query.get('labelSelector') ?? '');
    const fields = parseFieldSelector(query.get('fieldSelector') ?? '', fieldLabels);
    if (!labels.ok) return sendStatus(res, failure(400, 'BadRequest', labels.errors[0]!.message));
    if (!fields.ok) return sendStatus(res, failure(400, 'BadRequest', fields.errors[0]!.message));
    const matchLabels = labelMatcher(labels.value);
    const matches = (p: IndexedPackage): boolean => {
      const seenIn = info.namespace || p.catalog.namespace;
      return (
        (info.name === undefined || p.manifest.metadata.name === info.name) &&
        matchLabels(p.manifest.metadata.labels) &&
        fieldsMatch(fields.value, { 'metadata.name': p.manifest.metadata.name, 'metadata.namespace': seenIn })
      );
    };

    if (info.verb === 'watch') return watch(res, query, info.namespace, matches, rep);
    if (info.verb === 'list') {
      const items = opts.index.visible(info.namespace).filter(matches);
      const rv = String(opts.index.resourceVersion());
      if (rep.as === 'table') {
        return sendJson(
          res,
          200,
          table(
            items.map((p) => seen(p, info.namespace)),
            tableOptions(query, rep.apiVersion),
            rv,
          ),
        );
      }
      if (rep.as === 'metadata') {
        return sendJson(res, 200, {
          kind: 'PartialObjectMetadataList',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { resourceVersion: rv },
          items: items.map((p) => partial(seen(p, info.namespace))),
        });
      }
      const body =
        `{"kind":"${PackageManifestKind}List","apiVersion":"${PackagesApiVersion}","metadata":{"resourceVersion":"${rv}"},"items":[` +
        items.map((p) => render(p, info.namespace)).join(',') +
        ']}';
      return send(res, 200, jsonType, body);
    }

    const found = opts.index.get(info.namespace, info.name!);
    if (!found) return sendStatus(res, notFound(info.name!));
    if (info.subresource === 'icon') return icon(req, res, found.manifest);
    if (rep.as === 'table') {
      return sendJson(res, 200, table([seen(found, info.namespace)], tableOptions(query, rep.apiVersion)));
    }
    if (rep.as === 'metadata') return sendJson(res, 200, partial(seen(found, info.namespace)));
    return send(res, 200, jsonType, render(found, info.namespace));
  }

  /**
   * The aggregator (its client certificate, and the user its headers name), else a bearer token
   * the API server knows; nobody else. A token is reviewed as coming from the client's address.
   */
  async function authenticate(
    req: IncomingMessage,
  ): Promise<{ ok: true; user: UserInfo } | { ok: false; status: Status; retryAfterSeconds?: number }> {
    if (opts.requestHeader) {
      const proxied = fromRequestHeaders(req, opts.requestHeader);
      if (proxied) return { ok: true, user: proxied };
    }
    const token = bearerToken(req.headers.authorization);
    if (token) {
      let review: TokenResult;
      try {
        review = await opts.reviewer.token(token, req.socket.remoteAddress ?? '');
      } catch (err) {
        // As the API server's authenticators: a token that could not be checked is not accepted.
        opts.log.warn({ err }, 'TokenReview failed');
        return { ok: false, status: failure(401, 'Unauthorized', 'Unauthorized') };
      }
      if (review.ok) return review;
      if (review.reason === 'limited') {
        return {
          ok: false,
          status: failure(
            429,
            'TooManyRequests',
            'too many unknown tokens from this client: try again later',
          ),
          retryAfterSeconds: review.retryAfterSeconds,
        };
      }
    }
    return { ok: false, status: failure(401, 'Unauthorized', 'Unauthorized') };
  }

  function nonResource(path: string, res: ServerResponse): void {
    if (path === '/apis') return sendJson(res, 200, apiGroupList());
    if (path === `/apis/${apiGroup().name as string}`) return sendJson(res, 200, apiGroup());
    if (path === `/apis/${PackagesApiVersion}`) return sendJson(res, 200, apiResourceList());
    const doc = openAPIDocument(path);
    if (doc !== undefined) return send(res, 200, jsonType, doc);
    return sendStatus(res, pathNotFound(path));
  }

  function watch(
    res: ServerResponse,
    query: URLSearchParams,
    namespace: string,
    matches: (p: IndexedPackage) => boolean,
    rep: Representation,
  ): void {
    const rvParam = query.get('resourceVersion') ?? '';
    const sendInitial = query.get('sendInitialEvents') === 'true';
    const requested = Number(rvParam);
    res.writeHead(200, {
      'Content-Type': jsonType,
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache',
    });
    res.flushHeaders();
    let headerSent = false;
    const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
    const emit = (type: PackageEvent['type'], p: IndexedPackage) => {
      if (!matches(p)) return;
      const pm = seen(p, namespace);
      if (rep.as === 'table') {
        write(type, table([pm], { ...tableOptions(query, rep.apiVersion), noHeaders: headerSent }));
        headerSent = true;
      } else if (rep.as === 'metadata') write(type, partial(pm));
      else res.write(`{"type":"${type}","object":${render(p, namespace)}}\n`);
    };

    let backlog: PackageEvent[] | undefined;
    if (rvParam === '' || rvParam === '0' || sendInitial) {
      for (const p of opts.index.visible(namespace)) emit('ADDED', p);
      if (sendInitial) {
        write('BOOKMARK', {
          kind: PackageManifestKind,
          apiVersion: PackagesApiVersion,
          metadata: {
            resourceVersion: String(opts.index.resourceVersion()),
            annotations: { 'k8s.io/initial-events-end': 'true' },
          },
        });
      }
    } else if (!Number.isInteger(requested)) {
      write('ERROR', failure(400, 'BadRequest', `resourceVersion "${rvParam}" is not one this server gave`));
      return void res.end();
    } else {
      backlog = opts.index.eventsSince(requested);
      if (backlog === undefined) {
        write(
          'ERROR',
          failure(410, 'Expired', `too old resource version: ${requested} (${opts.index.resourceVersion()})`),
        );
        return void res.end();
      }
    }
    for (const e of backlog ?? []) if (opts.index.isVisible(e.pkg, namespace)) emit(e.type, e.pkg);

    const unsubscribe = opts.index.onEvent((e) => {
      if (opts.index.isVisible(e.pkg, namespace)) emit(e.type, e.pkg);
    });
    const seconds = Number(query.get('timeoutSeconds'));
    // Without a timeout a watch lasts 30 to 60 minutes, as the API server's do.
    const timeoutMs =
      Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : (1800 + Math.random() * 1800) * 1000;
    const timer = setTimeout(() => res.end(), timeoutMs);
    timer.unref();
    watches.add(res);
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      watches.delete(res);
    };
    res.on('close', done);
  }

  function tableOptions(query: URLSearchParams, apiVersion: string): TableOptions {
    const include = query.get('includeObject');
    return {
      apiVersion,
      includeObject: include === 'None' || include === 'Object' ? include : ('Metadata' as const),
      now: now(),
    };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    port: bound.port,
    url: `https://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`,
    setTls: (tls) => server.setSecureContext(secure(tls)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const w of watches) w.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The package as seen from a namespace (its catalog's, seen from every namespace). */
function seen(p: IndexedPackage, namespace: string): PackageManifest {
  return {
    ...p.manifest,
    metadata: {
      ...p.manifest.metadata,
      namespace: namespace || p.catalog.namespace,
      resourceVersion: String(p.resourceVersion),
    },
  };
}

function partial(pm: PackageManifest): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pm.metadata };
}

/**
 * A package's JSON, made per request: keeping it made for every package would hold the whole
 * list again (8 MB of JSON for the OperatorHub corpus, most of it icons) for a list a client asks
 * for now and then, while kubectl's default list is a Table.
 */
function render(p: IndexedPackage, namespace: string): string {
  return JSON.stringify(seen(p, namespace));
}

/** The default channel head's first icon, served as icon-policy.ts says (OLM serves any type as named). */
function icon(req: IncomingMessage, res: ServerResponse, pm: PackageManifest): void {
  const channel = pm.status.channels.find((c) => c.name === pm.status.defaultChannel);
  const first = channel?.currentCSVDesc.icon?.[0];
  const [headers, bytes] =
    channel && first?.base64data
      ? [iconHeaders(first.mediatype), Buffer.from(first.base64data, 'base64')]
      : [iconHeaders('image/svg+xml'), Buffer.from(defaultIcon)];
  const etag = channel
    ? `"${[pm.metadata.name, channel.name, channel.currentCSV].join('.')}"`
    : `"${pm.metadata.name}"`;
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { ETag: etag });
    return void res.end();
  }
  res.writeHead(200, { ...headers, 'Content-Length': bytes.length, ETag: etag });
  res.end(bytes);
}

/** The icon of a package whose default channel has none: a plain box. */
const defaultIcon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" role="img" aria-label="operator">' +
  '<rect x="8" y="8" width="48" height="48" rx="8" fill="#d8dee9" stroke="#4c566a" stroke-width="3"/>' +
  '<path d="M20 36h24M20 28h24" stroke="#4c566a" stroke-width="3"/></svg>';

function forbidden(user: UserInfo, info: RequestInfo, reason: string): Status {
  const what =
    info.resource === true
      ? `cannot ${info.verb} resource "packagemanifests${info.subresource ? `/${info.subresource}` : ''}" in API group "packages.operators.coreos.com"${info.namespace ? ` in the namespace "${info.namespace}"` : ' at the cluster scope'}`
      : `cannot get path "${info.resource === false ? info.path : ''}"`;
  const status = failure(403, 'Forbidden', `User "${user.username}" ${what}${reason ? `: ${reason}` : ''}`);
  if (info.resource === true) {
    status.details = {
      ...(info.name ? { name: info.name } : {}),
      group: 'packages.operators.coreos.com',
      kind: 'packagemanifests',
    };
  }
  return status;
}

function send(res: ServerResponse, code: number, contentType: string, body: string): void {
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  send(res, code, jsonType, JSON.stringify(body));
}

function sendStatus(res: ServerResponse, status: Status, retryAfterSeconds?: number): void {
  if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
  sendJson(res, status.code, status);
}

/** What every Kubernetes API server answers about itself, to any authenticated caller. */
const HealthPaths: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/livez']);

/** The non-resource paths served: discovery and OpenAPI. */
function servesPath(path: string): boolean {
  return (
    path === '/apis' ||
    path === `/apis/${PackagesGroup}` ||
    path === `/apis/${PackagesApiVersion}` ||
    path === '/openapi/v2' ||
    path === '/openapi/v3' ||
    path === `/openapi/v3/apis/${PackagesApiVersion}`
  );
}

const pathNotFound = (path: string): Status =>
  failure(404, 'NotFound', `the server could not find the requested resource (${path})`);
