/**
 * How requests reach a registry: TLS with the system's roots (plus a CA the user adds), plain
 * HTTP only to a loopback address or a registry the user marks insecure, redirects followed by
 * hand so that neither rule can be sidestepped by a `Location` header, credentials never sent to
 * another origin, a deadline on every request and a bound on every body read into memory.
 *
 * Requests go through undici, the library Node's own `fetch` is: its `fetch` with an `Agent` is
 * Node's `fetch` with a dispatcher, and the Agent is where a CA and timeouts are given (Node's
 * built-in `fetch` takes a dispatcher but Node exports no Agent to make one with).
 */
import { getCACertificates, rootCertificates } from 'node:tls';
import { isIP } from 'node:net';
import { Agent, fetch, Headers, type Response, type RequestInit } from 'undici';
import { OciError, type OciErrorWhere } from './errors.js';

export interface Timeouts {
  /** To open a connection, TLS included. */
  connectMs: number;
  /** From sending a request to its response's headers. */
  headersMs: number;
  /** The longest pause while a body streams. */
  bodyIdleMs: number;
  /** The whole of a small request (manifests, tokens, uploads' control requests). */
  requestMs: number;
}

export const DefaultTimeouts: Timeouts = {
  connectMs: 15_000,
  headersMs: 30_000,
  bodyIdleMs: 60_000,
  requestMs: 120_000,
};

export interface TransportOptions {
  /** PEM certificates trusted beside the system's roots (a private registry's CA). */
  ca?: string | readonly string[];
  /** Registries (host or host:port) that may be reached over plain HTTP. */
  insecure?: readonly string[];
  timeouts?: Partial<Timeouts>;
}

/** The host part of `host[:port]`, without IPv6 brackets. */
function hostname(hostPort: string): string {
  if (hostPort.startsWith('[')) return hostPort.slice(1, hostPort.indexOf(']'));
  const colon = hostPort.lastIndexOf(':');
  return colon === -1 ? hostPort : hostPort.slice(0, colon);
}

/** Whether `hostPort` names this machine: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopback(hostPort: string): boolean {
  const h = hostname(hostPort).toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * The schemes a registry may be reached with, in the order to try them. HTTPS always first;
 * plain HTTP only for this machine or a registry the user marked insecure, as Docker does. A
 * registry's name is all that decides: an address in a reference, a redirect or a token realm
 * never makes HTTP acceptable elsewhere.
 */
export function schemesFor(hostPort: string, insecure: readonly string[] = []): ('https' | 'http')[] {
  const marked = insecure.some((i) => i.toLowerCase() === hostPort.toLowerCase());
  return marked || isLoopback(hostPort) ? ['https', 'http'] : ['https'];
}

/** Whether a URL may be requested under the policy: HTTPS, or HTTP to a host `schemesFor` allows it for. */
export function urlAllowed(url: URL, insecure: readonly string[] = []): boolean {
  if (url.protocol === 'https:') return true;
  if (url.protocol === 'http:') return schemesFor(url.host, insecure).includes('http');
  return false;
}

/** The trust roots for TLS: what Node trusts by default and the operating system's store, plus `extra`. */
export function trustRoots(extra: string | readonly string[] | undefined): string[] | undefined {
  if (extra === undefined || extra.length === 0) return undefined;
  const system = (() => {
    try {
      return getCACertificates('system');
    } catch {
      return [];
    }
  })();
  return [...new Set([...getCACertificates('default'), ...rootCertificates, ...system]), ...[extra].flat()];
}

/** One registry connection pool with the options' trust roots and timeouts. */
export function makeAgent(opts: TransportOptions): { agent: Agent; timeouts: Timeouts } {
  const timeouts = { ...DefaultTimeouts, ...opts.timeouts };
  const ca = trustRoots(opts.ca);
  const agent = new Agent({
    connect: { timeout: timeouts.connectMs, ...(ca && { ca }) },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyIdleMs,
  });
  return { agent, timeouts };
}

/** The error code at the bottom of a `fetch failed`: `ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, ... */
export function failureCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function failureMessage(err: unknown): string {
  let e: unknown = err;
  let message = (err as Error).message;
  for (let i = 0; i < 5 && e; i++) {
    if (e instanceof Error && e.message && e.message !== 'fetch failed') message = e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return message;
}

/** A TLS failure that is about trust (the certificate), as opposed to the other end not speaking TLS. */
export function isCertificateFailure(code: string | undefined): boolean {
  return (
    code !== undefined &&
    (code.includes('CERT') ||
      code.includes('SELF_SIGNED') ||
      code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
      code === 'ERR_TLS_CERT_ALTNAME_INVALID')
  );
}

/** The other end answered the TLS handshake with something that is not TLS (a plain HTTP server). */
export function isNotTls(err: unknown): boolean {
  const code = failureCode(err);
  const message = failureMessage(err);
  return (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    code === 'ECONNRESET' ||
    (code === 'EPROTO' && /wrong version number|packet length too long|http request/i.test(message))
  );
}

/** A `fetch failed` in words: what could not be done with the registry and why. */
export function unreachable(err: unknown, what: string, where: OciErrorWhere): OciError {
  if (err instanceof OciError) return err;
  const code = failureCode(err);
  const message = failureMessage(err);
  const registry = where.registry ?? '';
  let why: string;
  if (code === 'ECONNREFUSED')
    why = `nothing answers at ${registry} (connection refused): is the registry running?`;
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    why = `the name ${hostname(registry)} does not resolve (${code})`;
  else if (isCertificateFailure(code))
    why = `its TLS certificate is not trusted (${code}: ${message}); give Bosun the registry's CA certificate`;
  else if (code?.startsWith('UND_ERR_') && code.includes('TIMEOUT'))
    why = `it did not answer in time (${code})`;
  else if ((err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError')
    why = 'it did not answer in time';
  else why = `${message}${code ? ` (${code})` : ''}`;
  return new OciError(`${what}: ${why}`, where, { cause: err });
}

export const MaxRedirects = 5;

/**
 * `fetch` that follows redirects itself: each hop must pass `urlAllowed` (no HTTPS-to-HTTP
 * downgrade to another machine), and `Authorization` goes only to the origin it was meant for
 * (blob downloads are redirected to storage that must not see the registry's credentials).
 */
export async function fetchFollowing(
  agent: Agent,
  url: URL,
  init: RequestInit,
  insecure: readonly string[],
  describe: (u: URL) => string,
): Promise<{ response: Response; url: URL }> {
  let at = url;
  let headers = new Headers(init.headers);
  const origin = url.origin;
  for (let hop = 0; ; hop++) {
    if (!urlAllowed(at, insecure))
      throw new OciError(
        `${describe(at)}: refused to send a request to ${at.protocol}//${at.host}: plain HTTP is used only for this machine's addresses and registries marked insecure`,
      );
    const response = await fetch(at, { ...init, headers, redirect: 'manual', dispatcher: agent });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || response.status === 304 || location === null)
      return { response, url: at };
    await response.body?.cancel();
    if (hop >= MaxRedirects) throw new OciError(`${describe(url)}: more than ${MaxRedirects} redirects`);
    const next = URL.parse(location, at.href);
    if (!next)
      throw new OciError(
        `${describe(url)}: the registry redirected to "${location.slice(0, 200)}", which is not a URL`,
      );
    if (next.origin !== origin) {
      headers = new Headers(headers);
      headers.delete('authorization');
    }
    // A redirected GET or HEAD is repeated as is; a redirected upload would need its body again,
    // which registries never ask for.
    at = next;
  }
}

/**
 * The body of `response`, at most `max` bytes: refused unread when its `Content-Length` says more,
 * cut off (and the connection dropped) when more arrives than that.
 */
export async function readBounded(
  response: Response,
  max: number,
  what: string,
  where: OciErrorWhere,
): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel();
    throw new OciError(`${what}: the registry sends ${declared} bytes, more than the ${max} allowed`, where);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      total += chunk.length;
      // Leaving the loop by throwing cancels the body, which drops the connection.
      if (total > max)
        throw new OciError(`${what}: the registry sent more than the ${max} bytes allowed`, where);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks);
}
