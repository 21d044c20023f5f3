/**
 * Who sees what of the manager's web catalog (src/web/scope.ts decides what each viewer sees):
 * the viewer of a request is
 * - the user of its `Authorization: Bearer` token, when it has that header (a token the API
 *   server does not know is 401, as on the API server itself: no falling back to anonymous);
 * - else the user of its session cookie's token (see src/web/session.ts); a session whose token is
 *   no longer accepted ends, and the request is anonymous;
 * - else anonymous.
 * Tokens are reviewed, and permissions asked, through the same cached and rate-limited Reviewer
 * as the PackageManifest API's.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ApiPath } from '../web/client/api.js';
import { anonymousScope, type ListedResource, type Scope, userScope } from '../web/scope.js';
import { CommonHeaders, type WebAccess, type WebRequest, type WebResponse } from '../web/server.js';
import {
  clearedSessionCookie,
  cookieValue,
  sameOrigin,
  SessionCookie,
  sessionCookie,
  sessionStore,
} from '../web/session.js';
import { bearerToken, type Reviewer, type TokenResult, type UserInfo } from './packageserver/auth.js';

export interface WebAccessOptions {
  reviewer: Pick<Reviewer, 'token' | 'access'>;
  /** Catalogs here are everyone's to see. */
  globalNamespace: string;
  now?: () => number;
  log?: Logger;
}

export function webAccess(opts: WebAccessOptions): WebAccess & { sessions(): number } {
  const sessions = sessionStore({
    now: opts.now ?? Date.now,
    randomId: () => randomBytes(32).toString('base64url'),
  });
  const anonymous = anonymousScope(opts.globalNamespace);

  const review = async (token: string, req: WebRequest): Promise<TokenResult> => {
    try {
      return await opts.reviewer.token(token, req.remoteAddress ?? '');
    } catch (err) {
      // A token that could not be checked is not accepted (the API server's own rule).
      opts.log?.warn({ err }, 'TokenReview failed');
      return { ok: false, reason: 'unauthenticated' };
    }
  };

  const scopeOf = (user: UserInfo, state: Parameters<WebAccess['scope']>[1]): Promise<Scope> =>
    userScope(user.username, state, async (resource: ListedResource, namespace: string) => {
      const decision = await opts.reviewer.access(user, {
        resourceAttributes: {
          ...(namespace && !resource.clusterScoped ? { namespace } : {}),
          verb: 'list',
          group: resource.group,
          resource: resource.resource,
        },
      });
      return decision.allowed;
    });

  return {
    async scope(req, state) {
      if (req.authorization !== undefined) {
        const token = bearerToken(req.authorization);
        const result = token ? await review(token, req) : ({ ok: false, reason: 'unauthenticated' } as const);
        if (!result.ok) return { ok: false, response: refusal(result) };
        return { ok: true, scope: await scopeOf(result.user, state) };
      }
      const id = cookieValue(req.cookie, SessionCookie);
      if (id === undefined) return { ok: true, scope: anonymous };
      const token = sessions.token(id);
      if (token === undefined) return { ok: true, scope: anonymous, setCookie: clearedSessionCookie };
      const result = await review(token, req);
      if (!result.ok && result.reason === 'limited') return { ok: false, response: refusal(result) };
      if (!result.ok) {
        sessions.close(id);
        return { ok: true, scope: anonymous, setCookie: clearedSessionCookie };
      }
      return { ok: true, scope: await scopeOf(result.user, state) };
    },

    async signIn(req) {
      if (!sameOrigin(req)) return message(403, 'sign in from the catalog page itself');
      const token = bearerToken(req.authorization);
      if (!token)
        return message(401, `sign in with a POST to ${ApiPath.Session} with Authorization: Bearer <token>`);
      const result = await review(token, req);
      if (!result.ok) return refusal(result);
      const id = sessions.open(token);
      return {
        status: 200,
        headers: { ...jsonHeaders, 'Set-Cookie': sessionCookie(id) },
        body: JSON.stringify({ user: result.user.username }),
      };
    },

    async signOut(req) {
      if (!sameOrigin(req)) return message(403, 'sign out from the catalog page itself');
      const id = cookieValue(req.cookie, SessionCookie);
      if (id !== undefined) sessions.close(id);
      return { status: 200, headers: { ...jsonHeaders, 'Set-Cookie': clearedSessionCookie }, body: '{}' };
    },

    sessions: () => sessions.size(),
  };
}

const jsonHeaders = {
  ...CommonHeaders,
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
};

function message(status: number, text: string, extra: Record<string, string> = {}): WebResponse {
  return { status, headers: { ...jsonHeaders, ...extra }, body: JSON.stringify({ message: text }) };
}

function refusal(result: Exclude<TokenResult, { ok: true }>): WebResponse {
  if (result.reason === 'limited')
    return message(429, 'too many unknown tokens from this client: try again later', {
      'Retry-After': String(result.retryAfterSeconds),
    });
  return message(401, 'the API server does not know this token', { 'WWW-Authenticate': 'Bearer' });
}
