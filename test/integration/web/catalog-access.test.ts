/**
 * The manager's HTTP port against a real control plane: it answers only requests that name it by
 * one of its names (DNS rebinding: several forged Host headers on every path), shows an anonymous
 * viewer the global catalogs and nothing of the cluster, and a viewer signed in with a real token
 * (TokenRequest API) what RBAC lets that user list, no more; made-up tokens reach the API server
 * as a handful of TokenReviews.
 */
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Resources } from '../../../src/apis/operators.js';
import { type RunningManager, startManager } from '../../../src/manager/manager.js';
import type { IndexView, PackageDetail } from '../../../src/web/client/api.js';
import { rawHttp } from '../../support/raw-request.js';
import { olmReaderRole, serviceAccountToken, tokenReviewsServed } from '../../support/users.js';
import { client, ConfigMapResource, create, remove, subscription } from '../controllers/support.js';
import { sampleCatalogsData, uniqueGroup } from '../controllers/operator-support.js';
import { configMapCatalog, GlobalNamespace } from '../packages/support.js';
import { eventually, freshNamespace } from '../support.js';

const globalCatalog = `web-global-${process.pid}`;
const reader = `bosun-web-reader-${process.pid}`;

let manager: RunningManager;
let base: string;
let port: string;
let teamA: string;
let teamB: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  manager = await startManager({
    kubeconfig: inject('kubeconfig'),
    installCrds: true,
    metricsAddr: '127.0.0.1:0',
    globalNamespace: GlobalNamespace,
    webHosts: ['catalog.test'],
    logger: pino({ level: process.env.BOSUN_TEST_LOG ?? 'silent' }),
  });
  base = manager.url!;
  port = new URL(base).port;
  await create({ group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false }, '', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: GlobalNamespace },
  }).catch(() => undefined);
  // Subscribed below: the operator's API in a group of this test's own, so the newest sample CRD it
  // installs meets no other test's install of an older one on the shared control plane.
  const samples = await sampleCatalogsData(uniqueGroup());
  await configMapCatalog(GlobalNamespace, globalCatalog, samples, { displayName: 'Everyone`s samples' });
  teamA = await freshNamespace('web-a');
  teamB = await freshNamespace('web-b');
  for (const ns of [teamA, teamB]) {
    await configMapCatalog(ns, 'private', samples, { displayName: `${ns} private` });
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'bosun-sample', {
        name: 'bosun-sample',
        source: globalCatalog,
        sourceNamespace: GlobalNamespace,
      }),
    );
  }
  await olmReaderRole(client(), reader);
  alice = await serviceAccountToken(client(), teamA, 'alice', [{ role: reader, namespace: teamA }]);
  bob = await serviceAccountToken(client(), teamB, 'bob', [{ role: reader, namespace: teamB }]);
  await eventually('every catalog in the web catalog', async () => {
    const index = (await (
      await fetch(`${base}/api/index`, { headers: { Authorization: `Bearer ${alice}` } })
    ).json()) as IndexView;
    const ids = index.catalogs.map((c) => c.id);
    return ids.includes(`${GlobalNamespace}/${globalCatalog}`) && ids.includes(`${teamA}/private`)
      ? true
      : undefined;
  });
});

afterAll(async () => {
  await remove(Resources.CatalogSource, GlobalNamespace, globalCatalog).catch(() => undefined);
  await remove(ConfigMapResource, GlobalNamespace, globalCatalog).catch(() => undefined);
  await client()
    .request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${reader}` })
    .catch(() => undefined);
  await manager?.stop();
});

const index = async (headers: Record<string, string> = {}) =>
  JSON.parse((await rawHttp(base, '/api/index', { headers })).body) as IndexView;

describe('the manager`s HTTP port', () => {
  it('answers only requests that name it: a page whose name was rebound to it gets 421 on every path', async () => {
    const paths = [
      '/',
      '/api/index',
      `/api/packages/${encodeURIComponent(`${GlobalNamespace}/${globalCatalog}`)}/bosun-sample`,
      '/metrics',
      '/healthz',
      '/readyz',
      '/assets/app.js',
      '/nothing',
    ];
    const forged = [
      `evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `localhost.evil.example:${port}`,
      `localhost.:${port}`,
      `catalog.test.evil.example:${port}`,
      'kubernetes.default.svc',
    ];
    const wrong: string[] = [];
    for (const path of paths) {
      for (const host of forged) {
        const res = await rawHttp(base, path, { headers: { Host: host, Accept: 'text/html' } });
        if (res.status !== 421 || /bosun-sample|<html|bosun_reconcile|^ok/.test(res.body))
          wrong.push(`${host} ${path} → ${res.status}`);
      }
      for (const host of [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        `catalog.test:${port}`,
        `[::ffff:127.0.0.1]:${port}`,
      ]) {
        const res = await rawHttp(base, path, { headers: { Host: host } });
        if (res.status === 421 || res.status === 400) wrong.push(`${host} ${path} refused (${res.status})`);
      }
    }
    expect(wrong).toEqual([]);
    expect((await rawHttp(base, '/healthz', { headers: { Host: '' } })).status).toBe(400);
  });

  it('shows an anonymous viewer the global catalogs and nothing of the cluster', async () => {
    const anon = await index();
    expect(anon.viewer).toEqual({ signIn: true });
    expect(anon.catalogs.map((c) => c.id)).toContain(`${GlobalNamespace}/${globalCatalog}`);
    expect(anon.catalogs.every((c) => c.namespace === GlobalNamespace)).toBe(true);
    expect(anon.packages.every((p) => p.installs.length === 0)).toBe(true);
    const text = JSON.stringify(anon);
    for (const ns of [teamA, teamB]) expect(text).not.toContain(ns);
    const pkg = `/api/packages/${encodeURIComponent(`${teamA}/private`)}/bosun-sample`;
    expect((await rawHttp(base, pkg)).status).toBe(404);
    expect(
      (await rawHttp(base, `/api/icons/${encodeURIComponent(`${teamA}/private`)}/bosun-sample`)).status,
    ).toBe(404);
    const detail = JSON.parse(
      (
        await rawHttp(
          base,
          `/api/packages/${encodeURIComponent(`${GlobalNamespace}/${globalCatalog}`)}/bosun-sample`,
        )
      ).body,
    ) as PackageDetail;
    expect(detail.install.cluster).toBeUndefined();
    expect(detail.installs).toEqual([]);
  });

  it('shows a signed-in viewer what RBAC lets that user list, and no more', async () => {
    const a = await index({ Authorization: `Bearer ${alice}` });
    expect(a.viewer?.user).toBe(`system:serviceaccount:${teamA}:alice`);
    expect(a.catalogs.map((c) => c.id)).toContain(`${teamA}/private`);
    expect(a.catalogs.map((c) => c.id)).not.toContain(`${teamB}/private`);
    const installs = a.packages.flatMap((p) => p.installs.map((i) => i.namespace));
    expect(installs).toEqual([teamA]);
    expect(JSON.stringify(a)).not.toContain(teamB);

    const b = await index({ Authorization: `Bearer ${bob}` });
    expect(b.packages.flatMap((p) => p.installs.map((i) => i.namespace))).toEqual([teamB]);
    expect(JSON.stringify(b)).not.toContain(teamA);
  });

  it('signs a viewer in with a token and out again: the session cookie shows that user`s view', async () => {
    const origin = `http://127.0.0.1:${port}`;
    const signIn = await rawHttp(base, '/api/session', {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice}`, Origin: origin, 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(signIn.status).toBe(200);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const seen = await index({ Cookie: cookie });
    expect(seen.viewer?.user).toBe(`system:serviceaccount:${teamA}:alice`);
    expect(seen.catalogs.map((c) => c.id)).toContain(`${teamA}/private`);
    const foreign = await rawHttp(base, '/api/session', {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice}`, Origin: 'http://evil.example', Host: `127.0.0.1:${port}` },
    });
    expect(foreign.status).toBe(403);
    await rawHttp(base, '/api/session', { method: 'DELETE', headers: { Cookie: cookie, Origin: origin } });
    expect((await index({ Cookie: cookie })).viewer?.user).toBeUndefined();
  });

  it('a made-up bearer token is 401, and a flood of them costs the API server a handful of TokenReviews', async () => {
    const before = await tokenReviewsServed(inject('kubeconfig'));
    const statuses = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      const res = await rawHttp(base, '/api/index', {
        headers: { Authorization: `Bearer ${randomBytes(24).toString('base64url')}` },
      });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.body).not.toContain('bosun-sample');
    }
    const reviews = (await tokenReviewsServed(inject('kubeconfig'))) - before;
    console.log(
      `[web] 300 made-up bearer tokens: ${reviews} TokenReviews; answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect([...statuses.keys()].every((s) => s === 401 || s === 429)).toBe(true);
    expect(reviews).toBeLessThanOrEqual(20);
  });
});
