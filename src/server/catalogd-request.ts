/**
 * The pure half of catalogd's HTTP API (OLM v1, operator-controller v1.2.0's
 * internal/catalogd/storage/localdir.go and http_preconditions_check.go, and the gzip handler
 * catalogd wraps it in): which catalog and endpoint a path names, which query parameters
 * `/api/v1/metas` takes, what the conditional headers decide, whether to compress, and whether the
 * content's compressed copy can be sent. No
 * sockets and no files here; src/server/catalogd.ts answers with them.
 */
import { isIP } from 'node:net';

/** Every catalog is served under this path: `<root>/<name>/api/v1/all` and `.../metas`. */
export const CatalogdRoot = '/catalogs';

export const CatalogdEndpoint = { All: 'all', Metas: 'metas' } as const;
export type CatalogdEndpoint = (typeof CatalogdEndpoint)[keyof typeof CatalogdEndpoint];

/**
 * A ClusterCatalog's name as a path segment must be one an object can have (a DNS-1123
 * subdomain, at most 253 characters) written plainly: no percent-encoding (an encoded `/`, `.`
 * or NUL), no `..`, no empty segment. Anything else names no catalog. The name is then only a
 * key to look up (served.ts), never part of a file path.
 */
const NamePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MaxNameLength = 253;

export type CatalogdPath = { name: string; endpoint: CatalogdEndpoint };

/**
 * The catalog and endpoint a request path names (the path as sent, before any decoding, without
 * its query), or undefined: a path under the root that names none is 404, as catalogd's mux
 * answers (catalogd redirects a path with `..` or `//` to its cleaned form; Bosun does not
 * clean a path that names a catalog, it refuses it).
 */
export function parseCatalogdPath(rawPath: string): CatalogdPath | undefined {
  const parts = rawPath.split('/');
  // ['', 'catalogs', name, 'api', 'v1', endpoint]
  if (parts.length !== 6 || parts[0] !== '' || `/${parts[1]}` !== CatalogdRoot) return undefined;
  const [, , name, api, v1, endpoint] = parts as [string, string, string, string, string, string];
  if (api !== 'api' || v1 !== 'v1') return undefined;
  if (endpoint !== CatalogdEndpoint.All && endpoint !== CatalogdEndpoint.Metas) return undefined;
  if (name.length > MaxNameLength || !NamePattern.test(name)) return undefined;
  return { name, endpoint };
}

/** Whether a path is catalogd's to answer (everything under the root, matched or not). */
export const underCatalogdRoot = (rawPath: string): boolean => rawPath.startsWith(`${CatalogdRoot}/`);

/** A catalog's base URL, `status.urls.base`: `<server URL>/catalogs/<name>`. */
export const catalogBaseUrl = (serverUrl: string, name: string): string =>
  `${serverUrl.replace(/\/+$/, '')}${CatalogdRoot}/${name}`;

/**
 * The host name clients name when they reach catalogd's API at `catalogdUrl`, which the HTTP
 * server's Host check (host-check.ts) must then answer to; none for an IP address (always
 * answered) or no URL.
 */
export function catalogdHostNames(catalogdUrl: string | undefined): string[] {
  if (catalogdUrl === undefined) return [];
  let host: string;
  try {
    host = new URL(catalogdUrl).hostname;
  } catch {
    return [];
  }
  return host === '' || isIP(host.replace(/^\[|\]$/g, '')) !== 0 ? [] : [host];
}

export type MetasQuery =
  { ok: true; schema: string; package: string; name: string } | { ok: false; parameter: string };

const MetasParameters = new Set(['schema', 'package', 'name']);

/**
 * `/api/v1/metas`'s query: `schema`, `package` and `name`, each the first value given; any other
 * parameter is a bad request (400), as catalogd answers.
 */
export function parseMetasQuery(rawQuery: string): MetasQuery {
  const params = new URLSearchParams(rawQuery);
  for (const key of params.keys()) if (!MetasParameters.has(key)) return { ok: false, parameter: key };
  return {
    ok: true,
    schema: params.get('schema') ?? '',
    package: params.get('package') ?? '',
    name: params.get('name') ?? '',
  };
}

/** What the conditional request headers decide (RFC 9110 §13.2.2, as Go's net/http evaluates them). */
export const Precondition = { Serve: 200, NotModified: 304, Failed: 412 } as const;
export type Precondition = (typeof Precondition)[keyof typeof Precondition];

export interface ConditionalHeaders {
  ifMatch?: string | undefined;
  ifUnmodifiedSince?: string | undefined;
  ifNoneMatch?: string | undefined;
  ifModifiedSince?: string | undefined;
}

/**
 * The answer to a GET or HEAD of content last modified at `lastModified` (milliseconds; catalogd
 * serves no entity tag). `If-Match` names no tag this content has (only `*` matches);
 * `If-Unmodified-Since` before the modification fails; `If-None-Match: *` and an
 * `If-Modified-Since` at or after it are 304. A date that does not parse is no condition (Go's
 * ServeContent ignores it; catalogd's metas handler then answered 500 and went on serving,
 * which Bosun does not copy).
 */
export function evaluatePreconditions(h: ConditionalHeaders, lastModified: number): Precondition {
  const modified = Math.floor(lastModified / 1000) * 1000;
  const known = modified > 0;
  let match: boolean | undefined;
  if (h.ifMatch !== undefined && h.ifMatch.trim() !== '') match = listHasStar(h.ifMatch);
  else if (h.ifUnmodifiedSince && known) {
    const t = parseHttpDate(h.ifUnmodifiedSince);
    if (t !== undefined) match = modified <= t;
  }
  if (match === false) return Precondition.Failed;
  if (h.ifNoneMatch !== undefined && h.ifNoneMatch.trim() !== '')
    return listHasStar(h.ifNoneMatch) ? Precondition.NotModified : Precondition.Serve;
  if (h.ifModifiedSince && known) {
    const t = parseHttpDate(h.ifModifiedSince);
    if (t !== undefined && modified <= t) return Precondition.NotModified;
  }
  return Precondition.Serve;
}

/** Whether an entity-tag list holds `*` (before its first malformed member, as Go reads it). */
function listHasStar(list: string): boolean {
  let rest = list;
  for (;;) {
    rest = rest.replace(/^[ \t]+/, '');
    if (rest === '') return false;
    if (rest[0] === ',') {
      rest = rest.slice(1);
      continue;
    }
    if (rest[0] === '*') return true;
    const tag = /^(W\/)?"[\x21\x23-\x7e\x80-\u{10ffff}]*"/u.exec(rest);
    if (!tag) return false;
    rest = rest.slice(tag[0].length);
  }
}

const Months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * An HTTP date in one of the three forms HTTP/1.1 allows (and Go's http.ParseTime reads): IMF
 * (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
 * (`Sun Nov  6 08:49:37 1994`). Milliseconds, or undefined.
 */
export function parseHttpDate(text: string): number | undefined {
  const s = text.trim();
  let m = /^[A-Z][a-z]{2}, (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(s);
  if (m) return utc(m[3]!, m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = /^[A-Z][a-z]+, (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) [A-Z]{3}$/.exec(s);
  // Go reads a two-digit year as 1969-2068.
  if (m)
    return utc(String(Number(m[3]) + (Number(m[3]) >= 69 ? 1900 : 2000)), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = /^[A-Z][a-z]{2} ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/.exec(s);
  if (m) return utc(m[6]!, m[1]!, m[2]!.trim(), m[3]!, m[4]!, m[5]!);
  return undefined;
}

function utc(
  year: string,
  month: string,
  day: string,
  h: string,
  min: string,
  sec: string,
): number | undefined {
  const mon = Months.indexOf(month);
  const [y, d, hh, mm, ss] = [year, day, h, min, sec].map(Number) as [number, number, number, number, number];
  if (mon < 0 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 59) return undefined;
  const t = Date.UTC(y, mon, d, hh, mm, ss);
  // 31 Feb and the like roll over into the next month: not a date.
  return new Date(t).getUTCDate() === d ? t : undefined;
}

/** An HTTP date as `Last-Modified` carries it. */
export const formatHttpDate = (ms: number): string => new Date(ms).toUTCString();

/**
 * Whether an answer's sections are the content's whole file, in order (`/api/v1/all`, and
 * `/api/v1/metas` with no parameter): only such a body has a precompressed copy (catalogd-gzip.ts)
 * to send; a selection is compressed as it streams.
 */
export const isWholeContent = (
  sections: readonly { offset: number; length: number }[],
  size: number,
): boolean => sections.length === 1 && sections[0]!.offset === 0 && sections[0]!.length === size;

/** Below this, a body is sent as it is: compressing it saves nothing (gzhttp's default minimum). */
export const GzipMinBytes = 1024;

/**
 * Whether `Accept-Encoding` accepts gzip (`gzip` or `*` with a quality above 0, `x-gzip` too) for
 * a body of `length` bytes.
 */
export function wantsGzip(acceptEncoding: string | undefined, length: number): boolean {
  if (!acceptEncoding || length < GzipMinBytes) return false;
  let star: boolean | undefined;
  for (const member of acceptEncoding.split(',')) {
    const [coding = '', ...params] = member.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return accepted;
    if (coding === '*') star = accepted;
  }
  return star ?? false;
}
