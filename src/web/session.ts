/**
 * Signing in to the manager's web catalog: the page sends a bearer token once (`POST api/session`
 * with `Authorization: Bearer ...`), and gets a cookie naming a random session that holds the
 * token, so its `<img>` icons and its polling carry it too. The token stays on the server; every
 * request reviews it again (through the ten-second cache of reviews), so a token the API server
 * stops accepting ends its sessions.
 *
 * The cookie is `HttpOnly` (no script reads it) and `SameSite=Strict` (no other site's page sends
 * it); signing in needs an `Authorization` header, which no other site's page can send without a
 * CORS preflight this server never answers. Pure but for the clock and randomness it is given.
 */

export const SessionCookie = 'bosun-session';

/** How long a session lasts without a sign-in (a token that expires sooner ends it sooner). */
export const SessionTtlMs = 8 * 3_600_000;

/** Sessions held at most; signing in beyond it ends the oldest. */
export const MaxSessions = 1000;

export interface SessionStore {
  /** A new session for the token: its id, for the cookie. */
  open(token: string): string;
  /** The token of a live session. */
  token(id: string): string | undefined;
  close(id: string): void;
  size(): number;
}

export function sessionStore(opts: { now: () => number; randomId: () => string }): SessionStore {
  const sessions = new Map<string, { token: string; until: number }>();
  return {
    open(token) {
      const now = opts.now();
      for (const [id, s] of sessions) if (s.until <= now) sessions.delete(id);
      while (sessions.size >= MaxSessions) sessions.delete(sessions.keys().next().value!);
      const id = opts.randomId();
      sessions.set(id, { token, until: now + SessionTtlMs });
      return id;
    },
    token(id) {
      const s = sessions.get(id);
      if (!s) return undefined;
      if (s.until > opts.now()) return s.token;
      sessions.delete(id);
      return undefined;
    },
    close: (id) => void sessions.delete(id),
    size: () => sessions.size,
  };
}

/** The value of cookie `name` in a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(id: string): string {
  return `${SessionCookie}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SessionTtlMs / 1000}`;
}

export const clearedSessionCookie = `${SessionCookie}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;

/**
 * Whether a request that changes the session comes from the page itself: a browser names the
 * origin of a script's request (`Origin`) and whether it is the same site (`Sec-Fetch-Site`);
 * a request naming another origin is refused even though it could not carry the token.
 */
export function sameOrigin(req: { origin?: string; host?: string; secFetchSite?: string }): boolean {
  if (req.secFetchSite !== undefined && req.secFetchSite !== 'same-origin' && req.secFetchSite !== 'none')
    return false;
  if (req.origin === undefined) return true;
  const origin = URL.parse(req.origin);
  return (
    origin !== null && origin.host === (req.host ?? '').toLowerCase() && /^https?:$/.test(origin.protocol)
  );
}
