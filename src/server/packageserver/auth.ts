/**
 * Who is asking, and may they: the delegated authentication and authorization every aggregated
 * API server does (apiserver `options.DelegatingAuthenticationOptions` and
 * `DelegatingAuthorizationOptions`).
 *
 * Authentication, in order:
 * 1. A client certificate signed by the aggregator's front-proxy CA (the `requestheader-*` keys of
 *    ConfigMap kube-system/extension-apiserver-authentication), whose common name is one of the
 *    allowed names: the request is the aggregator's, on behalf of the user it names in the
 *    `X-Remote-User`, `X-Remote-Group` and `X-Remote-Extra-*` headers.
 * 2. A bearer token, checked with a TokenReview.
 * Either way the user is also in `system:authenticated`.
 * 3. Otherwise the request is anonymous (`system:anonymous`, group `system:unauthenticated`).
 * The identity headers of a request without a trusted certificate are ignored: anyone could send
 * them.
 *
 * Authorization is a SubjectAccessReview of the request's attributes for that user. Both reviews
 * are cached for ten seconds (allowed and denied alike), as the API server's delegated webhook
 * caches them by default, so a list does not cost two round trips.
 */
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { KubeClient } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import type { RequestInfo } from './request.js';
import { PackageManifestResource, PackagesGroup, PackagesVersion } from '../../apis/packages.js';

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** The aggregator's front-proxy settings, from ConfigMap kube-system/extension-apiserver-authentication. */
export interface RequestHeaderConfig {
  clientCA: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

export const Anonymous: UserInfo = {
  username: 'system:anonymous',
  groups: ['system:unauthenticated'],
  extra: {},
};

/** Reads the front-proxy settings; undefined when the cluster has none (no aggregation layer). */
export async function readRequestHeaderConfig(client: KubeClient): Promise<RequestHeaderConfig | undefined> {
  let cm: { data?: Record<string, string> };
  try {
    cm = await client.request({
      path: '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication',
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const data = cm.data ?? {};
  const ca = data['requestheader-client-ca-file'];
  if (!ca) return undefined;
  const list = (key: string, fallback: string[]): string[] => {
    try {
      const v = JSON.parse(data[key] ?? 'null') as unknown;
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : fallback;
    } catch {
      return fallback;
    }
  };
  return {
    clientCA: ca,
    allowedNames: list('requestheader-allowed-names', []),
    usernameHeaders: list('requestheader-username-headers', ['X-Remote-User']),
    groupHeaders: list('requestheader-group-headers', ['X-Remote-Group']),
    extraHeaderPrefixes: list('requestheader-extra-headers-prefix', ['X-Remote-Extra-']),
  };
}

/** The user named by the aggregator's headers, when the request carries its certificate. */
export function fromRequestHeaders(req: IncomingMessage, config: RequestHeaderConfig): UserInfo | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return undefined;
  const cert = socket.getPeerCertificate?.();
  if (!cert || !cert.subject) return undefined;
  const cn = cert.subject.CN;
  const commonName = Array.isArray(cn) ? cn[0] : cn;
  if (config.allowedNames.length > 0 && !config.allowedNames.includes(commonName ?? '')) return undefined;
  // Distinct values: Node joins repeated headers with ", " in `headers`, and a group is one header each.
  const values = (name: string): string[] => req.headersDistinct[name.toLowerCase()] ?? [];
  const username = config.usernameHeaders.map((h) => values(h)[0]).find((v) => v);
  if (!username) return undefined;
  const groups = config.groupHeaders.flatMap(values);
  // Every authenticated user is in system:authenticated, as the API server's own authenticators
  // add it; the aggregator's own discovery requests name no group at all.
  if (!groups.includes('system:authenticated')) groups.push('system:authenticated');
  const extra: Record<string, string[]> = {};
  for (const prefix of config.extraHeaderPrefixes) {
    const lower = prefix.toLowerCase();
    for (const [name, value] of Object.entries(req.headersDistinct)) {
      if (!name.startsWith(lower) || value === undefined) continue;
      const key = decodeURIComponent(name.slice(lower.length)).toLowerCase();
      (extra[key] ??= []).push(...value);
    }
  }
  return { username, groups, extra };
}

interface Cached<T> {
  value: T;
  until: number;
}

const ttlMs = 10_000;
const maxEntries = 10_000;

/** Reviews with the API server, cached. */
export class Reviewer {
  private readonly tokens = new Map<string, Cached<UserInfo | undefined>>();
  private readonly decisions = new Map<string, Cached<{ allowed: boolean; reason: string }>>();

  constructor(
    private readonly client: KubeClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** The user a bearer token belongs to, or undefined when the API server does not know it. */
  async token(token: string): Promise<UserInfo | undefined> {
    return this.cached(this.tokens, token, async () => {
      const review = await this.client.request<{
        status?: {
          authenticated?: boolean;
          user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
        };
      }>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      });
      const u = review.status?.user;
      if (!review.status?.authenticated || !u?.username) return undefined;
      return {
        username: u.username,
        ...(u.uid ? { uid: u.uid } : {}),
        groups: [...new Set([...(u.groups ?? []), 'system:authenticated'])],
        extra: u.extra ?? {},
      };
    });
  }

  /** Whether the user may make the request, and the API server's reason when not. */
  async authorize(
    user: UserInfo,
    info: Exclude<RequestInfo, { resource: 'unknown' }>,
    verb = 'get',
  ): Promise<{ allowed: boolean; reason: string }> {
    const attributes =
      info.resource === true
        ? {
            resourceAttributes: {
              namespace: info.namespace,
              verb: info.verb,
              group: PackagesGroup,
              version: PackagesVersion,
              resource: PackageManifestResource,
              ...(info.subresource ? { subresource: info.subresource } : {}),
              ...(info.name ? { name: info.name } : {}),
            },
          }
        : { nonResourceAttributes: { path: info.path, verb } };
    const spec = {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      ...(Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
      ...attributes,
    };
    return this.cached(this.decisions, JSON.stringify(spec), async () => {
      const review = await this.client.request<{ status?: { allowed?: boolean; reason?: string } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
      });
      return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
    });
  }

  private async cached<T>(map: Map<string, Cached<T>>, key: string, fetch: () => Promise<T>): Promise<T> {
    const now = this.now();
    const hit = map.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = await fetch();
    if (map.size >= maxEntries) {
      for (const [k, v] of map) if (v.until <= now) map.delete(k);
      if (map.size >= maxEntries) map.clear();
    }
    map.set(key, { value, until: now + ttlMs });
    return value;
  }
}
