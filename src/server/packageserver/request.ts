/**
 * What a request to the PackageManifest API asks for, read from its method, path and query the
 * way the API server's request-info resolver reads them: the verb (`get`, `list`, `watch`), the
 * namespace, the name and the subresource. Paths outside the resource (discovery, OpenAPI) are
 * non-resource requests, authorized by path.
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
