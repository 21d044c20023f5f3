/**
 * What `bosun catalog serve` serves: a catalog directory, validated and encoded once as
 * `bosun catalog render -o json` writes it, with a strong ETag (the sha256 of those bytes), and
 * the response to one request for it. A CatalogSource of sourceType http GETs `spec.address`
 * and reads the body as FBC (any YAML or JSON document stream), so that is what `/` answers.
 *
 * The directory is not watched: each request first compares a fingerprint of its files (names,
 * sizes, mtimes, inodes) with the one last loaded, and reloads only when it moved. That costs a
 * directory walk and a stat per file, and needs no watcher (recursive fs.watch is unreliable on
 * Linux for folders created later, as `bosun catalog publish` creates a package's).
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeclarativeConfig } from '../apis/fbc.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { CatalogFormat, encodeConfig } from './encode.js';
import { listCatalogFiles, loadCatalog } from './load.js';
import { validateCatalog } from './validate.js';

/** The served bytes of one valid catalog, and the catalog they encode (for the web catalog). */
export interface ServedCatalog {
  body: Buffer;
  config: DeclarativeConfig;
  etag: string;
  packages: number;
  bundles: number;
  warnings: Problem[];
}

/** The path the catalog is served at; `spec.address` is the server's URL with this path. */
export const CatalogPath = '/';

/** A strong entity tag: the sha256 of the bytes, quoted. */
export function strongETag(body: Uint8Array): string {
  return `"sha256:${createHash('sha256').update(body).digest('hex')}"`;
}

/**
 * Whether `If-None-Match` names `etag` (RFC 9110 §13.1.2): `*`, or a list of entity tags compared
 * weakly (a `W/` prefix is ignored on either side).
 */
export function noneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const header = ifNoneMatch.trim();
  if (header === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return (header.match(/(?:W\/)?"[^"]*"/g) ?? []).some((t) => opaque(t) === wanted);
}

export interface CatalogRequest {
  method: string;
  /** The request target, query included. */
  url: string;
  ifNoneMatch?: string;
}

export interface CatalogResponse {
  status: number;
  headers: Record<string, string>;
  body?: Buffer | string;
}

/** The answer to one request: the catalog at `/` (200, or 304 when the client has these bytes). */
export function catalogResponse(req: CatalogRequest, served: ServedCatalog): CatalogResponse {
  const path = req.url.split('?')[0];
  const text = (status: number, body: string, extra: Record<string, string> = {}): CatalogResponse => ({
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', ...extra },
    body,
  });
  if (path !== CatalogPath) {
    return text(404, `not found: the catalog is served at ${CatalogPath}\n`);
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return text(405, 'method not allowed: use GET\n', { Allow: 'GET, HEAD' });
  }
  // `/` is also the web catalog's page for a browser (serve-http.ts): caches must tell them apart.
  const cache = { ETag: served.etag, 'Cache-Control': 'no-cache', Vary: 'Accept' };
  if (noneMatchHits(req.ifNoneMatch, served.etag)) return { status: 304, headers: cache };
  return {
    status: 200,
    headers: {
      ...cache,
      'Content-Type': 'application/json',
      'Content-Length': String(served.body.length),
    },
    ...(req.method === 'GET' ? { body: served.body } : {}),
  };
}

/**
 * Loads and validates the catalog under `dir` and encodes it as `catalog render -o json` does.
 * Errors are the loader's and validator's problems (file, object, field).
 */
export async function loadServedCatalog(dir: string): Promise<Result<ServedCatalog>> {
  const loaded = await loadCatalog(dir);
  if (!loaded.ok) return fail(loaded.errors);
  const validation = validateCatalog(loaded.value);
  if (validation.errors.length) return fail(validation.errors);
  const body = Buffer.from(await encodeConfig(loaded.value, CatalogFormat.JSON));
  return ok({
    body,
    config: loaded.value,
    etag: strongETag(body),
    packages: loaded.value.packages.length,
    bundles: loaded.value.bundles.length,
    warnings: validation.warnings,
  });
}

/** A digest of the catalog files under `dir` as they are on disk now: names, sizes, mtimes, inodes. */
export async function catalogFingerprint(dir: string): Promise<string> {
  const problems: Problem[] = [];
  const files = await listCatalogFiles(dir, problems);
  const h = createHash('sha256');
  for (const p of problems) h.update(`problem\0${p.file ?? ''}\0${p.message}\0`);
  for (const rel of files) {
    h.update(rel).update('\0');
    try {
      const s = await stat(join(dir, rel), { bigint: true });
      h.update(`${s.size}\0${s.mtimeNs}\0${s.ctimeNs}\0${s.ino}\0`);
    } catch {
      h.update('missing\0');
    }
  }
  return h.digest('hex');
}

export interface ReloadHooks {
  /** The directory changed and holds a valid catalog again, now served. */
  onReload?(served: ServedCatalog): void;
  /** The directory changed into an invalid catalog; the last valid one is still served. */
  onInvalid?(problems: Problem[]): void;
}

/** A load whose files moved while it read them is taken again, at most this often. */
const maxLoadAttempts = 3;

/**
 * The catalog of `dir` as it should be served now: `current()` reloads when the files changed
 * since the last load, keeps the last valid catalog when they no longer make one, and shares one
 * reload among requests that arrive while it runs.
 */
export function reloadingCatalog(
  dir: string,
  initial: { served: ServedCatalog; fingerprint: string },
  hooks: ReloadHooks = {},
): { current(): Promise<ServedCatalog> } {
  let served = initial.served;
  let loadedFingerprint = initial.fingerprint;
  let pending: Promise<ServedCatalog> | undefined;

  const reload = async (): Promise<ServedCatalog> => {
    let before = await catalogFingerprint(dir);
    if (before === loadedFingerprint) return served;
    for (let attempt = 1; ; attempt++) {
      const loaded = await loadServedCatalog(dir);
      const after = await catalogFingerprint(dir);
      if (after !== before && attempt < maxLoadAttempts) {
        before = after; // written to while read (a publish in progress): read it again
        continue;
      }
      // Still moving after the last attempt: use what was read, and look again next time.
      loadedFingerprint = after === before ? after : '';
      if (loaded.ok) {
        served = loaded.value;
        hooks.onReload?.(served);
      } else {
        hooks.onInvalid?.(loaded.errors);
      }
      return served;
    }
  };

  return {
    current() {
      pending ??= reload()
        .catch((err: unknown) => {
          hooks.onInvalid?.([{ file: dir, message: `cannot reload: ${(err as Error).message}` }]);
          return served;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
  };
}
