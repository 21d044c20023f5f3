/**
 * A catalog served over HTTP: Bosun's `sourceType: http`, with `spec.address` the URL of a server
 * of FBC (`bosun catalog serve`, a file `bosun catalog render -o json` wrote, catalogd's
 * `/api/v1/all`). The body is streamed to the spool, never whole in memory, within the catalog
 * file limit (src/catalog/limits.ts): a body that says it is larger is refused unread, one that
 * does not say is cut off at the limit.
 *
 * A poll of unchanged content costs nothing when the server gives ETags: the fetcher remembers
 * the ETag each catalog last came with, and asks with If-None-Match while the store still holds
 * the content that came with it; 304 Not Modified keeps that content.
 */
import type { CatalogSource } from '../../apis/operators.js';
import { catalogFileTooLarge } from '../limits.js';
import { type CatalogFetcher, FetchFailureReason, type FetchOutcome } from './fetcher.js';
import { parseSpooled } from './parse.js';
import type { CatalogSpool, Spooled } from './spool.js';
import type { CatalogContent } from './store.js';

/** How long one HTTP fetch may take. */
const httpTimeoutMs = 30_000;

export function httpFetcher(deps: { spool: Pick<CatalogSpool, 'writeStream' | 'remove'> }): CatalogFetcher {
  // The ETag each catalog (and address) last came with, and the digest of that content. This
  // fetcher's own: a manager has one, so two managers in one process never share it.
  const etags = new Map<string, { etag: string; digest: string }>();
  return {
    fetch: (source, previous, signal) => fetchHttp(deps.spool, etags, source, previous, signal),
  };
}

async function fetchHttp(
  spool: Pick<CatalogSpool, 'writeStream' | 'remove'>,
  etags: Map<string, { etag: string; digest: string }>,
  source: CatalogSource,
  previous: CatalogContent | undefined,
  signal: AbortSignal,
): Promise<FetchOutcome> {
  const address = source.spec.address;
  if (!address || !/^https?:\/\//.test(address)) {
    return {
      ok: false,
      reason: FetchFailureReason.SpecInvalidError,
      message: `spec.address: sourceType http needs an http:// or https:// URL serving FBC, found ${JSON.stringify(address ?? '')}`,
      address,
    };
  }
  const ref = { namespace: source.metadata.namespace ?? '', name: source.metadata.name ?? '' };
  const key = `${ref.namespace}/${ref.name} ${address}`;
  const known = etags.get(key);
  const conditional = known !== undefined && previous?.digest === known.digest;
  let spooled: Spooled;
  try {
    const res = await fetch(address, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(httpTimeoutMs)]),
      ...(conditional ? { headers: { 'If-None-Match': known.etag } } : {}),
    });
    if (res.status === 304 && conditional) {
      await res.body?.cancel();
      return { ok: true, content: previous, address };
    }
    if (!res.ok) {
      await res.body?.cancel();
      return {
        ok: false,
        reason: FetchFailureReason.RegistryServerError,
        message: `GET ${address}: HTTP ${res.status} ${res.statusText}`.trim(),
        address,
      };
    }
    // A body that says it is too large is refused unread; one that does not say is cut off at
    // the limit while it streams to disk (writeStream).
    const declared = catalogFileTooLarge(Number(res.headers.get('content-length') ?? 0));
    if (declared) {
      await res.body?.cancel();
      return {
        ok: false,
        reason: FetchFailureReason.RegistryServerError,
        message: `GET ${address}: the body ${declared}`,
        address,
      };
    }
    spooled = await spool.writeStream(ref, address, res.body ?? emptyBody());
    const etag = res.headers.get('etag');
    if (etag) etags.set(key, { etag, digest: spooled.digest });
    else etags.delete(key);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    return {
      ok: false,
      reason: FetchFailureReason.RegistryServerError,
      message: `GET ${address}: ${why}`,
      address,
    };
  }
  const parsed = await parseSpooled(spool, spooled, previous, address);
  if (!parsed.ok)
    return { ok: false, reason: FetchFailureReason.InvalidCatalog, message: parsed.message, address };
  return { ok: true, content: parsed.content, address };
}

async function* emptyBody(): AsyncIterable<Uint8Array> {}
