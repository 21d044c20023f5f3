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
 * Either way the user is also in `system:authenticated`, unless it is the API server's anonymous
 * user (`system:anonymous`, `system:unauthenticated`), as the API server's own authenticators
 * have it.
 * 3. Otherwise the request is refused (401), however it names a user: the identity headers of a
 * request without a trusted certificate are ignored, since anyone could send them. Anonymous
 * access goes through the API server (whose `--anonymous-auth` decides) or not at all.
 *
 * Authorization is a SubjectAccessReview of the request's attributes for that user. Both reviews
 * are cached for ten seconds (allowed and denied alike, known and unknown tokens alike), as the API
 * server's delegated webhook caches them by default, so a list does not cost two round trips.
 * Tokens the cache does not know are reviewed at a bounded rate per client address (rate-limit.ts):
 * a flood of made-up tokens reaches the API server as a trickle, not one review each.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { KubeClient } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import type { RequestInfo } from './request.js';
import { PackageManifestResource, PackagesGroup, PackagesVersion } from '../../apis/packages.js';
import { type BucketSize, type RateLimiter, rateLimiter, sourceKey } from '../rate-limit.js';

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

const AnonymousUser = 'system:anonymous';
const AuthenticatedGroup = 'system:authenticated';
const UnauthenticatedGroup = 'system:unauthenticated';

/**
 * The user with `system:authenticated` added, as the API server's `AuthenticatedGroupAdder` adds
 * it: not to its anonymous user, nor to a user already in either group.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  const groups = [...new Set(user.groups)];
  if (
    user.username === AnonymousUser ||
    groups.includes(AuthenticatedGroup) ||
    groups.includes(UnauthenticatedGroup)
  )
    return { ...user, groups };
  return { ...user, groups: [...groups, AuthenticatedGroup] };
}

/** The API server's `Authorization: Bearer` reading: the scheme in any case, the token up to a space. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

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
  const extra: Record<string, string[]> = {};
  for (const prefix of config.extraHeaderPrefixes) {
    const lower = prefix.toLowerCase();
    for (const [name, value] of Object.entries(req.headersDistinct)) {
      if (!name.startsWith(lower) || value === undefined) continue;
      // The aggregator percent-encodes extra keys; one it could not have written is not its.
      let key: string;
      try {
        key = decodeURIComponent(name.slice(lower.length)).toLowerCase();
      } catch {
        return undefined;
      }
      (extra[key] ??= []).push(...value);
    }
  }
  // The aggregator's own discovery requests name no group at all.
  return withAuthenticatedGroup({ username, groups, extra });
}

interface Cached<T> {
  value: T;
  until: number;
}

const ttlMs = 10_000;
const maxEntries = 10_000;

/** What a bearer token turned out to be. */
export type TokenResult =
  | { ok: true; user: UserInfo }
  | { ok: false; reason: 'unauthenticated' }
  /** Too many tokens the cache did not know came from this source (or from all): not reviewed. */
  | { ok: false; reason: 'limited'; retryAfterSeconds: number };

/** What a SubjectAccessReview asks about. */
export type AccessAttributes =
  | {
      resourceAttributes: {
        namespace?: string;
        verb: string;
        group: string;
        version?: string;
        resource: string;
        subresource?: string;
        name?: string;
      };
    }
  | { nonResourceAttributes: { path: string; verb: string } };

/**
 * How many TokenReviews tokens the cache does not know may cause: per source address, and from all
 * sources together. Requests through the aggregator carry its client certificate and need none, so
 * these bound only what a client that dials the manager directly can make it send; the figures are
 * well above what a real client does (one review per token per ten seconds).
 */
export const DefaultTokenReviewLimits: { perKey: BucketSize; overall: BucketSize } = {
  perKey: { burst: 10, perSecond: 1 },
  overall: { burst: 100, perSecond: 20 },
};

/**
 * Reviews with the API server, cached (allowed and denied, known and unknown tokens alike), each
 * asked once however many requests wait for it, and TokenReviews rate-limited per source.
 */
export class Reviewer {
  private readonly tokens = new Map<string, Cached<UserInfo | undefined>>();
  private readonly decisions = new Map<string, Cached<{ allowed: boolean; reason: string }>>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly limiter: RateLimiter;
  /** Reviews sent to the API server so far (for tests and measurements). */
  readonly sent = { tokenReviews: 0, subjectAccessReviews: 0 };

  constructor(
    private readonly client: Pick<KubeClient, 'request'>,
    private readonly now: () => number = Date.now,
    limits = DefaultTokenReviewLimits,
  ) {
    this.limiter = rateLimiter(limits, now);
  }

  /**
   * The user a bearer token belongs to. `source` is who sent it (the client's address): a source
   * sending tokens faster than its bucket refills gets `limited` and causes no review.
   */
  async token(token: string, source: string): Promise<TokenResult> {
    // Keyed by a digest: ten thousand made-up tokens of 16 KiB each must not be kept as they are.
    const key = createHash('sha256').update(token).digest('base64');
    const user = await this.cached(
      this.tokens,
      `t:${key}`,
      () => this.limiter.take(sourceKey(source)),
      async () => {
        this.sent.tokenReviews++;
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
        return withAuthenticatedGroup({
          username: u.username,
          ...(u.uid ? { uid: u.uid } : {}),
          groups: u.groups ?? [],
          extra: u.extra ?? {},
        });
      },
    );
    if (user && 'limited' in user) return { ok: false, reason: 'limited', retryAfterSeconds: user.limited };
    return user ? { ok: true, user } : { ok: false, reason: 'unauthenticated' };
  }

  /** Whether the user may make the request, and the API server's reason when not. */
  authorize(
    user: UserInfo,
    info: Exclude<RequestInfo, { resource: 'unknown' }>,
    verb = 'get',
  ): Promise<{ allowed: boolean; reason: string }> {
    return this.access(
      user,
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
        : { nonResourceAttributes: { path: info.path, verb } },
    );
  }

  /** A SubjectAccessReview of `attributes` for the user. */
  async access(user: UserInfo, attributes: AccessAttributes): Promise<{ allowed: boolean; reason: string }> {
    const spec = {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      ...(Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
      ...attributes,
    };
    const decision = await this.cached(this.decisions, `s:${JSON.stringify(spec)}`, undefined, async () => {
      this.sent.subjectAccessReviews++;
      const review = await this.client.request<{ status?: { allowed?: boolean; reason?: string } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
      });
      return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
    });
    if ('limited' in decision) throw new Error('unreachable: SubjectAccessReviews are not rate-limited');
    return decision;
  }

  /**
   * The cached answer for `key`, else the one being fetched for it, else a new fetch, when `admit`
   * lets it through (else how many seconds to wait).
   */
  private async cached<T>(
    map: Map<string, Cached<T>>,
    key: string,
    admit: (() => { ok: true } | { ok: false; retryAfterSeconds: number }) | undefined,
    fetch: () => Promise<T>,
  ): Promise<T | { limited: number }> {
    const hit = map.get(key);
    if (hit && hit.until > this.now()) return hit.value;
    const pending = this.inFlight.get(key) as Promise<T> | undefined;
    if (pending) return pending;
    const admitted = admit?.() ?? { ok: true };
    if (!admitted.ok) return { limited: admitted.retryAfterSeconds };
    const promise = fetch().then((value) => {
      const now = this.now();
      if (map.size >= maxEntries) {
        for (const [k, v] of map) if (v.until <= now) map.delete(k);
        if (map.size >= maxEntries) map.clear();
      }
      map.set(key, { value, until: now + ttlMs });
      return value;
    });
    this.inFlight.set(key, promise);
    try {
      return await promise;
    } finally {
      this.inFlight.delete(key);
    }
  }
}
