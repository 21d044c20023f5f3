/**
 * What a request to the PackageManifest API asks for, read from its method, path and query the
 * way the API server's request-info resolver reads them: the verb (`get`, `list`, `watch`), the
 * namespace, the name and the subresource. Paths outside the resource (discovery, OpenAPI) are
 * non-resource requests, authorized by path.
 *
 * Before that, `requestTarget` checks the request target itself: what it refuses (400) is never
 * routed, authorized or looked up, so a path cannot mean one thing to the check and another to
 * the lookup.
 */
import { PackageManifestResource, PackagesGroup, PackagesVersion } from '../../apis/packages.js';

export type RequestInfo =
  | {
      resource: true;
      verb: 'get' | 'list' | 'watch';
      /** `''` for every namespace. */
      namespace: string;
      name?: string;
      subresource?: 'icon';
    }
  | { resource: false; path: string }
  | { resource: 'unknown'; message: string };

const prefix = `/apis/${PackagesGroup}/${PackagesVersion}`;

/** Longer request targets are refused (414): no path this server serves comes near it. */
export const MaxTargetLength = 4096;

export type RequestTarget =
  | {
      ok: true;
      /** Percent-encoded as sent, without trailing slashes (`/` for the root). */
      path: string;
      query: URLSearchParams;
    }
  | { ok: false; code: 400 | 414; message: string };

/**
 * The path and query of a request target (`req.url`), or why it is refused: not an absolute path,
 * longer than MaxTargetLength, or a segment whose percent-encoding is broken or that decodes to
 * `.`, `..`, or something holding a slash, a backslash or a control character. Node's own parser has refused
 * targets with spaces or raw control characters already; WHATWG URL parsing is not used, since it
 * resolves `..` and reads `//host/` as a host.
 */
const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

export function requestTarget(target: string): RequestTarget {
  if (target.length > MaxTargetLength)
    return {
      ok: false,
      code: 414,
      message: `the request target is longer than ${MaxTargetLength} characters`,
    };
  if (!target.startsWith('/')) return { ok: false, code: 400, message: 'the request target is not a path' };
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  for (const segment of rawPath.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return { ok: false, code: 400, message: 'the request path has a broken percent-encoding' };
    }
    if (decoded === '.' || decoded === '..' || /[/\\]/.test(decoded) || hasControl(decoded))
      return { ok: false, code: 400, message: `the request path has the segment "${segment}"` };
  }
  const path = rawPath.replace(/\/+$/, '') || '/';
  return { ok: true, path, query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)) };
}

export function requestInfo(path: string, query: URLSearchParams): RequestInfo {
  if (path !== prefix && !path.startsWith(`${prefix}/`)) return { resource: false, path };
  let parts = path.slice(prefix.length).split('/').filter(Boolean);
  if (parts.length === 0) return { resource: false, path };
  // The deprecated `/watch/` prefix still means a watch.
  let watch = query.get('watch') === 'true' || query.get('watch') === '1';
  if (parts[0] === 'watch') {
    watch = true;
    parts = parts.slice(1);
  }
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    namespace = decodeURIComponent(parts[1]!);
    parts = parts.slice(2);
  }
  if (parts[0] !== PackageManifestResource || parts.length > 3) {
    return { resource: 'unknown', message: `the server could not find the requested resource (${path})` };
  }
  const name = parts[1] === undefined ? undefined : decodeURIComponent(parts[1]);
  const sub = parts[2];
  if (sub !== undefined && sub !== 'icon') {
    return { resource: 'unknown', message: `packagemanifests has no subresource "${sub}"` };
  }
  if (name === undefined) return { resource: true, verb: watch ? 'watch' : 'list', namespace };
  return {
    resource: true,
    verb: watch && !sub ? 'watch' : 'get',
    namespace,
    name,
    ...(sub ? { subresource: 'icon' as const } : {}),
  };
}
