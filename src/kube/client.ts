/**
 * Plain-JSON requests to the API server, authenticated as a ClusterAccess says (access.ts).
 *
 * Informers, status writes, applies and events need objects exactly as the API server sent them
 * (client-node's typed clients turn timestamps into `Date`s and drop fields their models do not
 * know), so every request of Bosun's goes through here, over one keep-alive connection pool kept
 * for as long as the TLS material stays the same. Failures are thrown as ApiError, with the raw
 * body, which src/kube/errors.ts reads. A client derived with `impersonating` makes its requests
 * as another user (an install scoped to an OperatorGroup's ServiceAccount) over the same pool.
 */
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import type { ClusterAccess } from './access.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The API path, e.g. `/apis/operators.coreos.com/v1alpha1/namespaces/ns/subscriptions`. */
  path: string;
  query?: Query;
  /** Sent as JSON. */
  body?: unknown;
  /** Defaults to application/json; patches need theirs (e.g. application/apply-patch+yaml). */
  contentType?: string;
  /** Defaults to application/json; e.g. `application/json;as=Table;v=v1;g=meta.k8s.io` for kubectl's tables. */
  accept?: string;
  signal?: AbortSignal;
  /**
   * Abort a request that has not been answered after this long (default 30 s), so that a dead
   * connection cannot hold a reconcile forever. Streams (watches) have no such limit; the
   * informer's watchdog covers them.
   */
  timeoutMs?: number;
}

export const defaultRequestTimeoutMs = 30_000;

/** Checks a request before it is sent; throws to refuse it. */
export type RequestGuard = (opts: RequestOptions) => void;

/** Whether a request changes the cluster (anything but GET). */
export function isWrite(opts: Pick<RequestOptions, 'method'>): boolean {
  return (opts.method ?? 'GET') !== 'GET';
}

/** A response of the API server outside 2xx: its status code, raw body and headers. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: number,
    statusText: string,
    readonly body: string,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP ${code} ${statusText}`);
  }
}

interface Connection {
  headers: http.OutgoingHttpHeaders;
  agent: http.Agent;
}

/**
 * Who a derived client acts as (`KubeClient.impersonating`): a ServiceAccount, by the user name
 * the API server knows it by, `system:serviceaccount:<namespace>:<name>`.
 */
export interface Impersonation {
  readonly user: string;
}

export class KubeClient {
  private agent: { key: string; agent: http.Agent } | undefined;
  /** For a derived client: the client whose connections it uses. */
  private pool: KubeClient = this;
  /** For a derived client: who its requests are made as. */
  private as: Impersonation | undefined;
  /** For a guarded client: throws to refuse a request before it is sent (`guarded`). */
  private guard: RequestGuard | undefined;

  constructor(readonly access: ClusterAccess) {}

  /** Who this client's requests are made as, when it is an impersonating one. */
  get impersonation(): Impersonation | undefined {
    return this.as;
  }

  /**
   * A client whose requests are made as `as.user` (the `Impersonate-User` header) with this
   * client's credentials and over its connections, so installs scoped to a ServiceAccount open
   * no connections of their own. The API server decides each request as that user: the
   * credentials need `impersonate` on the user (for a ServiceAccount, `impersonate` on
   * `serviceaccounts`), and the ServiceAccount's own permissions are what count. No
   * `Impersonate-Group` is sent: for a ServiceAccount the API server adds its groups itself
   * (`system:serviceaccounts`, `system:serviceaccounts:<namespace>`, `system:authenticated`),
   * whereas naming groups would need `impersonate` on `groups`, the right to claim any group,
   * `system:masters` included.
   */
  impersonating(as: Impersonation): KubeClient {
    if (this.as !== undefined)
      throw new Error(`a client impersonating ${this.as.user} cannot impersonate again`);
    // A header value with a line break would be refused by Node anyway; refuse it by name first.
    if (as.user === '' || /[\r\n\0]/.test(as.user))
      throw new Error(`cannot impersonate ${JSON.stringify(as.user)}`);
    const derived = new KubeClient(this.access);
    derived.pool = this.pool;
    derived.as = as;
    // An install scoped to a ServiceAccount is held to the same rule as the client it came from.
    derived.guard = this.guard;
    return derived;
  }

  /**
   * A client over this one's connections whose every request, and every request of a client
   * derived from it, first passes `guard`, which throws to refuse it. The manager gives its
   * controllers one that refuses writes while it does not hold the leader Lease, so a reconcile
   * still running when leadership ends cannot write beside the new leader.
   */
  guarded(guard: RequestGuard): KubeClient {
    const derived = new KubeClient(this.access);
    derived.pool = this.pool;
    derived.as = this.as;
    const outer = this.guard;
    derived.guard = outer
      ? (opts) => {
          outer(opts);
          guard(opts);
        }
      : guard;
    return derived;
  }

  /** The API server's base URL. */
  get server(): string {
    return this.access.server;
  }

  /** Sends one request and returns the parsed JSON response. */
  async request<T>(opts: RequestOptions): Promise<T> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? defaultRequestTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const res = await this.send({ ...opts, signal });
    const text = await readAll(res);
    if (!isSuccess(res)) throw apiError(res, text);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  /**
   * Sends a request whose response is a stream of JSON lines (a watch) and calls `onLine` for
   * each line. Resolves when the server ends the stream; rejects when the request fails or is
   * aborted through `signal`.
   */
  async stream(opts: RequestOptions, onLine: (line: string) => void): Promise<void> {
    const res = await this.send(opts);
    if (!isSuccess(res)) throw apiError(res, await readAll(res));
    const lines = createInterface({ input: res, crlfDelay: Number.POSITIVE_INFINITY });
    await new Promise<void>((resolve, reject) => {
      lines.on('line', (line) => {
        if (line.trim() === '') return;
        try {
          onLine(line);
        } catch (err) {
          // A line that cannot be handled ends the stream as a failure rather than crashing.
          lines.close();
          res.destroy();
          reject(err);
        }
      });
      // readline re-emits its input's errors (an aborted request ends in ECONNRESET).
      lines.on('error', reject);
      res.on('error', reject);
      lines.on('close', () => resolve());
    });
  }

  /** Closes idle keep-alive connections (at shutdown, so the process can exit). */
  close(): void {
    if (this.pool !== this) return; // a derived client's connections are its parent's
    this.agent?.agent.destroy();
    this.agent = undefined;
  }

  private async send(opts: RequestOptions): Promise<http.IncomingMessage> {
    this.guard?.(opts);
    const url = new URL(this.server + opts.path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const { headers, agent } = await this.pool.connection();
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const requestHeaders: http.OutgoingHttpHeaders = {
      ...headers,
      Accept: opts.accept ?? 'application/json',
    };
    if (this.as !== undefined) {
      // Whatever the credentials say about impersonation gives way to this client's user.
      for (const k of Object.keys(requestHeaders))
        if (k.toLowerCase().startsWith('impersonate-')) delete requestHeaders[k];
      requestHeaders['Impersonate-User'] = this.as.user;
    }
    if (body !== undefined) {
      requestHeaders['Content-Type'] = opts.contentType ?? 'application/json';
      requestHeaders['Content-Length'] = Buffer.byteLength(body);
    }
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const req = transport.request(url, {
        method: opts.method ?? 'GET',
        headers: requestHeaders,
        agent,
        signal: opts.signal,
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end(body);
    });
  }

  /**
   * Credentials for the next request, which may have changed (a rotated token), and one
   * keep-alive agent for as long as the TLS material stays the same, so requests reuse connections.
   */
  private async connection(): Promise<Connection> {
    const { headers, tls, agent: given } = await this.access.credentials();
    if (given) return { headers, agent: given };
    const key = JSON.stringify([
      this.server,
      tls.ca?.toString(),
      tls.cert?.toString(),
      tls.key?.toString(),
      tls.rejectUnauthorized,
      tls.servername,
    ]);
    if (this.agent?.key !== key) {
      this.agent?.agent.destroy();
      const agent = this.server.startsWith('http:')
        ? new http.Agent({ keepAlive: true })
        : new https.Agent({ keepAlive: true, ...tls });
      this.agent = { key, agent };
    }
    return { headers, agent: this.agent.agent };
  }
}

function isSuccess(res: http.IncomingMessage): boolean {
  const code = res.statusCode ?? 0;
  return code >= 200 && code < 300;
}

function apiError(res: http.IncomingMessage, body: string): ApiError {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return new ApiError(res.statusCode ?? 0, res.statusMessage ?? 'HTTP error', body, headers);
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The collection path of a resource: `/apis/<group>/<version>[/namespaces/<ns>]/<plural>`. */
export function collectionPath(
  t: { group: string; version: string; plural: string; namespaced: boolean },
  namespace?: string,
): string {
  const base = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  const ns = t.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${t.plural}`;
}

/** The path of one object of a resource. */
export function objectPath(
  t: { group: string; version: string; plural: string; namespaced: boolean },
  name: string,
  namespace?: string,
): string {
  return `${collectionPath(t, namespace)}/${encodeURIComponent(name)}`;
}
