/**
 * The PackageManifest API's guards, as pure functions: the request target it refuses before any
 * routing, the bearer tokens it reads, the groups an authenticated user gets, the rate limit and
 * cache in front of TokenReviews (with a counting fake of the API server), where it binds, and
 * the headers an icon is served with.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bearerToken, Reviewer, withAuthenticatedGroup } from '../../../src/server/packageserver/auth.js';
import { listenPlan } from '../../../src/server/packageserver/listen.js';
import { MaxTargetLength, requestTarget } from '../../../src/server/packageserver/request.js';
import { rateLimiter, sourceKey } from '../../../src/server/rate-limit.js';
import { iconHeaders, IconPolicy } from '../../../src/web/icon-policy.js';

const base = '/apis/packages.operators.coreos.com/v1';

describe('requestTarget', () => {
  it.each([
    ['/healthz', '/healthz'],
    ['/apis/', '/apis'],
    [`${base}/namespaces/ns/packagemanifests/etcd?watch=1`, `${base}/namespaces/ns/packagemanifests/etcd`],
    [`${base}/namespaces/n%73/packagemanifests`, `${base}/namespaces/n%73/packagemanifests`],
  ])('reads %s as %s', (target, path) => {
    expect(requestTarget(target)).toMatchObject({ ok: true, path });
  });

  it.each([
    ['a broken escape', `${base}/namespaces/%zz/packagemanifests`],
    ['a cut escape', `${base}/namespaces/ns/packagemanifests/etcd%`],
    ['an escape that is not UTF-8', `${base}/namespaces/%E0%A4/packagemanifests`],
    ['a parent segment', `${base}/namespaces/ns/packagemanifests/../../../../healthz`],
    ['an encoded parent segment', `${base}/namespaces/%2e%2e/packagemanifests`],
    ['a current segment', `/apis/./packages.operators.coreos.com/v1`],
    ['an encoded slash', `${base}/namespaces/a%2Fb/packagemanifests`],
    ['an encoded backslash', `${base}/namespaces/a%5Cb/packagemanifests`],
    ['an encoded NUL', `${base}/namespaces/ns/packagemanifests/etcd%00`],
    ['an encoded newline', `/healthz%0d%0aX-Remote-User:%20admin`],
    ['no leading slash', 'healthz'],
    ['an absolute URL', 'https://evil.example/healthz'],
    ['an asterisk', '*'],
  ])('refuses %s with 400', (_what, target) => {
    expect(requestTarget(target)).toMatchObject({ ok: false, code: 400 });
  });

  it('refuses a target longer than the limit with 414, whatever path it starts with', () => {
    for (const start of ['/healthz', '/apis', `${base}/namespaces/`]) {
      const target = `${start}${'a'.repeat(MaxTargetLength)}`;
      expect(requestTarget(target)).toMatchObject({ ok: false, code: 414 });
    }
  });
});

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.def', 'abc.def'],
    ['bearer abc', 'abc'],
    ['Bearer   abc  ', 'abc'],
    ['Bearer a b', undefined],
    ['Basic YWRtaW46YWRtaW4=', undefined],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    [undefined, undefined],
  ])('%j → %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe('withAuthenticatedGroup', () => {
  it('adds system:authenticated to a named user once', () => {
    expect(withAuthenticatedGroup({ username: 'alice', groups: ['dev', 'dev'], extra: {} }).groups).toEqual([
      'dev',
      'system:authenticated',
    ]);
    expect(
      withAuthenticatedGroup({ username: 'alice', groups: ['system:authenticated'], extra: {} }).groups,
    ).toEqual(['system:authenticated']);
  });

  it('never makes the anonymous user, or a member of system:unauthenticated, authenticated', () => {
    for (const user of [
      { username: 'system:anonymous', groups: ['system:unauthenticated'], extra: {} },
      { username: 'system:anonymous', groups: [], extra: {} },
      { username: 'someone', groups: ['system:unauthenticated'], extra: {} },
    ])
      expect(withAuthenticatedGroup(user).groups).not.toContain('system:authenticated');
  });
});

describe('rateLimiter', () => {
  it('lets a burst through per key, then one per refill interval, and shares an overall bucket', () => {
    let t = 0;
    const limiter = rateLimiter(
      { perKey: { burst: 3, perSecond: 1 }, overall: { burst: 5, perSecond: 2 } },
      () => t,
    );
    const a = Array.from({ length: 5 }, () => limiter.take('a').ok);
    expect(a).toEqual([true, true, true, false, false]);
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterSeconds: 1 });
    // Another key has its own bucket, but all keys share the overall one (5: 3 taken, 2 left).
    expect([limiter.take('b').ok, limiter.take('b').ok, limiter.take('b').ok]).toEqual([true, true, false]);
    t += 1000;
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false);
  });

  it('keeps its memory bounded whatever the number of keys, and stays fast', () => {
    const limiter = rateLimiter({
      perKey: { burst: 1, perSecond: 1 },
      overall: { burst: 1e9, perSecond: 1e9 },
    });
    const started = performance.now();
    for (let i = 0; i < 100_000; i++) limiter.take(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
    expect(limiter.size()).toBeLessThanOrEqual(10_000);
    expect(performance.now() - started).toBeLessThan(2000);
    // A new source still gets its first.
    expect(limiter.take('192.0.2.1').ok).toBe(true);
  });
});

describe('sourceKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s → %s', (address, key) => {
    expect(sourceKey(address)).toBe(key);
  });
});

/** A fake API server that answers reviews and counts them. */
function fakeApiServer(known: Record<string, string> = {}) {
  const calls: string[] = [];
  const client = {
    request: async <T>(opts: { path: string; body?: unknown }): Promise<T> => {
      calls.push(opts.path);
      await new Promise((r) => setTimeout(r, 1));
      if (opts.path.endsWith('/tokenreviews')) {
        const token = (opts.body as { spec: { token: string } }).spec.token;
        const username = known[token];
        return (
          username
            ? { status: { authenticated: true, user: { username, groups: ['dev'] } } }
            : { status: { authenticated: false } }
        ) as T;
      }
      return { status: { allowed: true } } as T;
    },
  };
  return { client, calls };
}

describe('Reviewer', () => {
  it('1,000 random tokens from one source cause a handful of TokenReviews, not 1,000', async () => {
    let t = 0;
    const api = fakeApiServer();
    const reviewer = new Reviewer(api.client as never, () => t);
    const outcomes = { unauthenticated: 0, limited: 0 };
    for (let i = 0; i < 1000; i++) {
      const r = await reviewer.token(randomBytes(24).toString('base64url'), '203.0.113.7');
      if (!r.ok) outcomes[r.reason]++;
      t += 2; // 1,000 requests in two seconds
    }
    expect(outcomes.unauthenticated + outcomes.limited).toBe(1000);
    // The burst of 10, and one per second after it.
    expect(reviewer.sent.tokenReviews).toBeLessThanOrEqual(12);
    expect(api.calls.length).toBe(reviewer.sent.tokenReviews);
  });

  it('1,000 random tokens from 1,000 sources are bounded by the overall bucket', async () => {
    let t = 0;
    const api = fakeApiServer();
    const reviewer = new Reviewer(api.client as never, () => t);
    for (let i = 0; i < 1000; i++) {
      await reviewer.token(randomBytes(24).toString('base64url'), `198.51.${i >> 8}.${i & 255}`);
      t += 2;
    }
    // The overall burst of 100, and 20 per second for two seconds.
    expect(reviewer.sent.tokenReviews).toBeLessThanOrEqual(141);
  });

  it('caches an unknown token as it caches a known one: the same token again costs nothing', async () => {
    const api = fakeApiServer({ good: 'alice' });
    const reviewer = new Reviewer(api.client as never);
    for (let i = 0; i < 50; i++) {
      expect(await reviewer.token('bad', '203.0.113.7')).toEqual({ ok: false, reason: 'unauthenticated' });
      expect(await reviewer.token('good', '203.0.113.7')).toMatchObject({
        ok: true,
        user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
      });
    }
    expect(reviewer.sent.tokenReviews).toBe(2);
  });

  it('asks once for a token many requests bring at the same moment', async () => {
    const api = fakeApiServer({ good: 'alice' });
    const reviewer = new Reviewer(api.client as never);
    const all = await Promise.all(
      Array.from({ length: 200 }, () => reviewer.token('not-known', '203.0.113.7')),
    );
    expect(all.every((r) => !r.ok && r.reason === 'unauthenticated')).toBe(true);
    expect(reviewer.sent.tokenReviews).toBe(1);
  });

  it('a flood from one source does not keep a known token of another source out', async () => {
    const api = fakeApiServer({ good: 'alice' });
    const reviewer = new Reviewer(api.client as never);
    for (let i = 0; i < 500; i++) await reviewer.token(randomBytes(8).toString('hex'), '203.0.113.7');
    expect(await reviewer.token('good', '192.0.2.10')).toMatchObject({ ok: true });
  });
});

describe('listenPlan', () => {
  const interfaces = {
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
    eth0: [{ address: '192.0.2.2', family: 'IPv4', internal: false }],
  } as never;

  it('binds a given IPv4 address and advertises it', () => {
    expect(listenPlan('10.1.2.3:8443', interfaces)).toEqual({
      ok: true,
      value: { bind: { host: '10.1.2.3', port: 8443 }, advertise: '10.1.2.3' },
    });
  });

  it('binds 0.0.0.0 when asked, and advertises the first non-loopback address', () => {
    expect(listenPlan('0.0.0.0:0', interfaces)).toEqual({
      ok: true,
      value: { bind: { host: '0.0.0.0', port: 0 }, advertise: '192.0.2.2' },
    });
  });

  it('never binds anywhere else when a loopback address is asked: it refuses, saying why and what to give', () => {
    for (const address of ['127.0.0.1:0', '127.0.0.2:8443', 'localhost:0', '[::1]:0', 'app.localhost:0']) {
      const plan = listenPlan(address, interfaces);
      expect(plan.ok, address).toBe(false);
      if (!plan.ok) {
        expect(plan.error).toContain('loopback');
        expect(plan.error).toContain('192.0.2.2:');
      }
    }
  });

  it('refuses what is not an IPv4 address or not an address', () => {
    for (const address of [
      'example.com:443',
      '[2001:db8::1]:443',
      '10.0.0.1',
      '10.0.0.1:http',
      '10.0.0.1:70000',
    ])
      expect(listenPlan(address, interfaces).ok, address).toBe(false);
  });
});

describe('iconHeaders', () => {
  it.each([
    'image/png',
    'IMAGE/PNG',
    ' image/svg+xml ',
    'image/jpeg; charset=binary',
    'image/gif',
    'image/webp',
  ])('serves %j as the image type it names, inline, sandboxed and not sniffed', (declared) => {
    const h = iconHeaders(declared);
    expect(h['Content-Type']).toMatch(/^image\/(png|svg\+xml|jpeg|gif|webp)$/);
    expect(h['Content-Disposition']).toBe('inline');
    expect(h['X-Content-Type-Options']).toBe('nosniff');
    expect(h['Content-Security-Policy']).toBe(IconPolicy);
  });

  it.each([
    'text/html',
    'TEXT/HTML; charset=utf-8',
    'application/xhtml+xml',
    'image/svg',
    'text/xml',
    'application/javascript',
    'text/plain',
    'multipart/x-mixed-replace; boundary=x',
    '',
    undefined,
  ])('serves %j as a download of octets, sandboxed and not sniffed', (declared) => {
    const h = iconHeaders(declared);
    expect(h['Content-Type']).toBe('application/octet-stream');
    expect(h['Content-Disposition']).toMatch(/^attachment/);
    expect(h['X-Content-Type-Options']).toBe('nosniff');
    expect(h['Content-Security-Policy']).toBe(IconPolicy);
  });

  it('the policy sandboxes the document and allows no script, no connection, nothing loaded', () => {
    const directives = IconPolicy.split(';').map((d) => d.trim());
    expect(directives).toContain('sandbox');
    expect(directives).toContain("default-src 'none'");
    expect(IconPolicy).not.toMatch(/script-src|connect-src|allow-scripts|unsafe-eval|\*/);
  });
});
