/**
 * What the manager's web catalog shows to whom (src/web/scope.ts, src/server/web-access.ts), over
 * the sample catalog served as a global catalog and as one namespace's, with installs and
 * OperatorGroups in two namespaces, and a fake API server that knows two tokens: an admin's, and
 * one whose user may list OLM's kinds in namespace team-a only.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Subscription } from '../../../src/apis/operators.js';
import { withPayloadsAll } from '../../../src/catalog/payloads.js';
import { loadServedCatalog } from '../../../src/catalog/serve.js';
import { packageManifests } from '../../../src/packages/projection.js';
import type { AccessAttributes, TokenResult } from '../../../src/server/packageserver/auth.js';
import { webAccess } from '../../../src/server/web-access.js';
import type { IndexView, InstallContext, PackageDetail } from '../../../src/web/client/api.js';
import type { WebState } from '../../../src/web/scope.js';
import { type WebCatalog, type WebRequest, type WebResponse, webCatalog } from '../../../src/web/server.js';
import { SessionCookie } from '../../../src/web/session.js';
import { repo } from '../cli/run-bosun.js';

const operatorGroups = [
  { namespace: 'team-a', name: 'team-a', targetNamespaces: ['team-a'] },
  { namespace: 'team-b', name: 'team-b', targetNamespaces: ['team-b'] },
  { namespace: 'operators', name: 'global-operators', targetNamespaces: [] },
];
const namespaces = ['olm', 'operators', 'team-a', 'team-b', 'kube-system'];
/** What only someone allowed to see more than the global catalogs may see: none in an anonymous answer. */
const secrets = ['team-a', 'team-b', 'kube-system', 'private', 'global-operators'];

function subscription(namespace: string, source: string, sourceNamespace: string): Subscription {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: 'bosun-sample', namespace },
    spec: { name: 'bosun-sample', source, sourceNamespace, channel: 'stable' },
    status: {
      state: 'AtLatestKnown',
      installedCSV: 'bosun-sample.v0.2.1',
      currentCSV: 'bosun-sample.v0.2.1',
    },
  } as Subscription;
}

let state: WebState;
let revoked = new Set<string>();
let reviews = 0;

const tokens: Record<string, string> = { 'admin-token': 'admin', 'alice-token': 'alice' };
const reviewer = {
  token: async (token: string): Promise<TokenResult> => {
    reviews++;
    const username = revoked.has(token) ? undefined : tokens[token];
    return username
      ? { ok: true, user: { username, groups: ['system:authenticated'], extra: {} } }
      : { ok: false, reason: 'unauthenticated' };
  },
  access: async (user: { username: string }, attrs: AccessAttributes) => {
    if (user.username === 'admin') return { allowed: true, reason: '' };
    const a = 'resourceAttributes' in attrs ? attrs.resourceAttributes : undefined;
    return { allowed: a?.verb === 'list' && a.namespace === 'team-a', reason: '' };
  },
};

let web: WebCatalog;
let access: ReturnType<typeof webAccess>;

beforeAll(async () => {
  const loaded = await loadServedCatalog(join(repo, 'catalogs/bosun-samples'));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const config = loaded.value.config;
  const catalog = async (namespace: string, name: string) => ({
    info: { id: `${namespace}/${name}`, name, namespace, displayName: name },
    config,
    manifests: await packageManifests(config, { name, namespace, displayName: name }, withPayloadsAll),
  });
  state = {
    revision: 'r1',
    catalogs: [await catalog('olm', 'samples'), await catalog('team-a', 'private')],
    cluster: {
      subscriptions: [
        subscription('team-a', 'samples', 'olm'),
        subscription('team-b', 'samples', 'olm'),
        subscription('team-a', 'private', 'team-a'),
      ],
      csvs: [],
      installPlans: [],
      operatorGroups,
      namespaces,
      globalNamespace: 'olm',
    },
    installContext: (c): InstallContext => ({
      source: { name: c.info.name, namespace: c.info.namespace! },
      ...(c.info.namespace !== 'olm' ? { onlyNamespace: c.info.namespace! } : {}),
      globalOperatorsNamespace: 'operators',
      cluster: { operatorGroups, namespaces },
    }),
  };
  access = webAccess({ reviewer, globalNamespace: 'olm' });
  web = webCatalog({ mode: 'cluster', state: async () => state }, undefined, access);
});

const host = '127.0.0.1:8080';
const get = async (url: string, extra: Partial<WebRequest> = {}): Promise<WebResponse> =>
  (await web.handle({ method: 'GET', url, host, ...extra }))!;
const body = (r: WebResponse) => String(r.body);
const json = <T>(r: WebResponse) => JSON.parse(body(r)) as T;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Every API path the page uses, for the global catalog's package and the namespace's. */
const apiPaths = [
  '/api/index',
  '/api/packages/olm%2Fsamples/bosun-sample',
  '/api/icons/olm%2Fsamples/bosun-sample',
  '/api/packages/team-a%2Fprivate/bosun-sample',
  '/api/icons/team-a%2Fprivate/bosun-sample',
];

describe('an anonymous viewer of the manager`s web catalog', () => {
  it('sees the global catalogs` packages and nothing of the cluster, on every path', async () => {
    const index = json<IndexView>(await get('/api/index'));
    expect(index.catalogs.map((c) => c.id)).toEqual(['olm/samples']);
    expect(index.packages.every((p) => p.installs.length === 0)).toBe(true);
    expect(index.viewer).toEqual({ signIn: true });
    for (const path of apiPaths) {
      const r = await get(path);
      // A 404 names what was asked for, and nothing else.
      const said = body(r).replace(path.split('/').slice(3).join('/'), '');
      for (const s of secrets) expect(said, `${path} names ${s}`).not.toContain(s);
    }
  });

  it('cannot open a namespace`s catalog`s package page or icon: 404, as for a package that is not there', async () => {
    expect((await get('/api/packages/team-a%2Fprivate/bosun-sample')).status).toBe(404);
    expect((await get('/api/icons/team-a%2Fprivate/bosun-sample')).status).toBe(404);
    expect((await get('/api/packages/olm%2Fsamples/bosun-sample')).status).toBe(200);
  });

  it('gets install instructions written without the cluster`s state', async () => {
    const d = json<PackageDetail>(await get('/api/packages/olm%2Fsamples/bosun-sample'));
    expect(d.install).toEqual({
      source: { name: 'samples', namespace: 'olm' },
      globalOperatorsNamespace: 'operators',
    });
    expect(d.installs).toEqual([]);
  });

  it('cannot reuse a signed-in viewer`s ETag to learn anything: the answers differ', async () => {
    const alice = await get('/api/index', bearer('alice-token'));
    const anon = await get('/api/index', { ifNoneMatch: alice.headers.ETag! });
    expect(anon.status).toBe(200);
    expect(anon.headers.ETag).not.toBe(alice.headers.ETag);
    expect(anon.headers['Cache-Control']).toContain('private');
    expect(anon.headers.Vary).toContain('Cookie');
  });
});

describe('a viewer with a bearer token', () => {
  it.each([
    ['an unknown token', 'Bearer not-a-token'],
    ['an empty token', 'Bearer '],
    ['two words', 'Bearer alice-token extra'],
    ['Basic credentials', `Basic ${Buffer.from('alice:alice-token').toString('base64')}`],
    ['a bare token', 'alice-token'],
  ])('gets 401 with %s, never the anonymous view', async (_what, authorization) => {
    for (const path of apiPaths) {
      const r = await get(path, { authorization });
      expect(r.status, path).toBe(401);
      for (const s of [...secrets, 'bosun-sample-dashboard']) expect(body(r)).not.toContain(s);
    }
  });

  it('sees what Kubernetes lets the user list: alice, team-a only', async () => {
    const index = json<IndexView>(await get('/api/index', bearer('alice-token')));
    expect(index.viewer).toEqual({ signIn: true, user: 'alice' });
    expect(index.catalogs.map((c) => c.id)).toEqual(['olm/samples', 'team-a/private']);
    const installs = index.packages.flatMap((p) => p.installs.map((i) => `${p.catalog} ${i.namespace}`));
    expect(installs.sort()).toEqual(['olm/samples team-a', 'team-a/private team-a']);
    const d = json<PackageDetail>(
      await get('/api/packages/olm%2Fsamples/bosun-sample', bearer('alice-token')),
    );
    expect(d.install.cluster).toEqual({ operatorGroups: [operatorGroups[0]], namespaces: ['team-a'] });
    // The global OperatorGroup's namespace is not alice's to see: the page assumes OLM's convention.
    expect(d.install.globalOperatorsNamespace).toBe('operators');
    for (const s of ['team-b', 'kube-system', 'global-operators'])
      expect(body(await get('/api/index', bearer('alice-token')))).not.toContain(s);
  });

  it('sees everything as a cluster admin', async () => {
    const index = json<IndexView>(await get('/api/index', bearer('admin-token')));
    const installs = index.packages.flatMap((p) => p.installs.map((i) => `${p.catalog} ${i.namespace}`));
    expect(installs.sort()).toEqual(['olm/samples team-a', 'olm/samples team-b', 'team-a/private team-a']);
    const d = json<PackageDetail>(
      await get('/api/packages/olm%2Fsamples/bosun-sample', bearer('admin-token')),
    );
    expect(d.install.cluster).toEqual({ operatorGroups, namespaces });
  });
});

describe('signing in and out', () => {
  const signIn = (extra: Partial<WebRequest>) =>
    web.handle({ method: 'POST', url: '/api/session', host, ...extra });
  const cookieOf = (r: WebResponse) => r.headers['Set-Cookie']!.split(';')[0]!;

  it('a known token gets an HttpOnly, SameSite=Strict session cookie that shows the user`s view', async () => {
    const r = (await signIn({ ...bearer('alice-token'), origin: 'http://127.0.0.1:8080' }))!;
    expect(r.status).toBe(200);
    expect(json<{ user: string }>(r)).toEqual({ user: 'alice' });
    const cookie = r.headers['Set-Cookie']!;
    expect(cookie).toMatch(new RegExp(`^${SessionCookie}=[A-Za-z0-9_-]{43}; `));
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const index = json<IndexView>(await get('/api/index', { cookie: cookieOf(r) }));
    expect(index.viewer?.user).toBe('alice');
    expect(index.catalogs.map((c) => c.id)).toContain('team-a/private');
    expect((await get('/api/icons/team-a%2Fprivate/bosun-sample', { cookie: cookieOf(r) })).status).toBe(200);
  });

  it.each([
    ['from another site`s page (Origin)', { origin: 'http://evil.example' }],
    ['from another port (Origin)', { origin: 'http://127.0.0.1:9999' }],
    ['from a page the browser calls cross-site', { secFetchSite: 'cross-site' }],
    ['from a page the browser calls same-site but not same-origin', { secFetchSite: 'same-site' }],
    ['from a null origin (a sandboxed frame, a data: page)', { origin: 'null' }],
  ])('is refused %s, even with a good token', async (_what, extra) => {
    const r = (await signIn({ ...bearer('alice-token'), ...extra }))!;
    expect(r.status).toBe(403);
    expect(r.headers['Set-Cookie']).toBeUndefined();
  });

  it('is refused without a token the API server knows', async () => {
    for (const extra of [{}, bearer('nope'), { authorization: 'Basic x' }]) {
      const r = (await signIn(extra))!;
      expect(r.status).toBe(401);
      expect(r.headers['Set-Cookie']).toBeUndefined();
    }
  });

  it('a made-up, ended or revoked session is anonymous, and its cookie is cleared', async () => {
    const forged = await get('/api/index', { cookie: `${SessionCookie}=${'A'.repeat(43)}` });
    expect(json<IndexView>(forged).viewer).toEqual({ signIn: true });
    expect(forged.headers['Set-Cookie']).toMatch(/Max-Age=0/);

    const bob = cookieOf((await signIn(bearer('admin-token')))!);
    const out = (await web.handle({ method: 'DELETE', url: '/api/session', host, cookie: bob }))!;
    expect(out.headers['Set-Cookie']).toMatch(/Max-Age=0/);
    expect(json<IndexView>(await get('/api/index', { cookie: bob })).viewer?.user).toBeUndefined();

    const alice = cookieOf((await signIn(bearer('alice-token')))!);
    revoked = new Set(['alice-token']);
    try {
      const after = await get('/api/index', { cookie: alice });
      expect(json<IndexView>(after).viewer?.user).toBeUndefined();
      expect(after.headers['Set-Cookie']).toMatch(/Max-Age=0/);
      for (const s of secrets) expect(body(after)).not.toContain(s);
    } finally {
      revoked = new Set();
    }
  });

  it('only POST and DELETE', async () => {
    expect((await web.handle({ method: 'GET', url: '/api/session', host }))!.status).toBe(405);
    expect((await web.handle({ method: 'PUT', url: '/api/session', host }))!.status).toBe(405);
  });

  it('keeps at most a bounded number of sessions', async () => {
    for (let i = 0; i < 1100; i++) await signIn(bearer('alice-token'));
    expect(access.sessions()).toBeLessThanOrEqual(1000);
    expect(reviews).toBeGreaterThan(0);
  });
});
