/**
 * The package server's authentication over real TLS, in-process, with its own front-proxy CA and a
 * fake API server that answers (and records) reviews: which client certificates make a request
 * the aggregator's, which identity headers it then believes, that the anonymous user it forwards
 * never becomes authenticated, and the headers its icons are served with.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageManifest } from '../../../src/apis/packages.js';
import { issueServingCertificate } from '../../../src/install/certificates.js';
import type { IndexedPackage } from '../../../src/packages/index.js';
import { Reviewer } from '../../../src/server/packageserver/auth.js';
import { type RunningPackageServer, startPackageServer } from '../../../src/server/packageserver/server.js';
import { IconPolicy } from '../../../src/web/icon-policy.js';
import { clientCertificate, type KeyPairPEM, testCA } from '../../support/certs.js';
import { rawHttps } from '../../support/raw-request.js';

const base = '/apis/packages.operators.coreos.com/v1';

function manifest(name: string, icon?: { base64data: string; mediatype: string }): PackageManifest {
  return {
    apiVersion: 'packages.operators.coreos.com/v1',
    kind: 'PackageManifest',
    metadata: { name, namespace: 'olm', labels: {} },
    spec: {},
    status: {
      catalogSource: 'c',
      catalogSourceDisplayName: 'c',
      catalogSourcePublisher: '',
      catalogSourceNamespace: 'olm',
      packageName: name,
      defaultChannel: 'stable',
      channels: [
        {
          name: 'stable',
          currentCSV: `${name}.v1.0.0`,
          currentCSVDesc: icon ? { icon: [icon] } : {},
          entries: [],
        },
      ],
    },
  } as unknown as PackageManifest;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const packages: IndexedPackage[] = [
  manifest('plain'),
  manifest('html', { base64data: b64('<script>fetch("/api/v1/secrets")</script>'), mediatype: 'text/html' }),
  manifest('svg', {
    base64data: b64('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    mediatype: 'image/svg+xml',
  }),
  manifest('png', { base64data: b64('\x89PNG\r\n\x1a\n'), mediatype: 'IMAGE/PNG' }),
].map((m) => ({ manifest: m, catalog: { namespace: 'olm', name: 'c' }, resourceVersion: 1 }));

const index = {
  visible: () => packages,
  get: (_ns: string, name: string) => packages.find((p) => p.manifest.metadata.name === name),
  resourceVersion: () => 1,
  eventsSince: () => [],
  isVisible: () => true,
  onEvent: () => () => undefined,
};

/** Reviews the fake API server was asked for. */
const reviews: { kind: string; spec: Record<string, unknown> }[] = [];
const apiServer = {
  request: async <T>(opts: { path: string; body?: unknown }): Promise<T> => {
    const body = opts.body as { kind: string; spec: Record<string, unknown> };
    reviews.push(body);
    if (body.kind === 'TokenReview')
      return { status: { authenticated: body.spec.token === 'good', user: { username: 'alice' } } } as T;
    return { status: { allowed: true } } as T;
  },
};

let server: RunningPackageServer;
let frontProxy: KeyPairPEM;
const forged: [string, KeyPairPEM][] = [];

beforeAll(async () => {
  const ca = await testCA('front-proxy-ca');
  const otherCA = await testCA('front-proxy-ca');
  frontProxy = await clientCertificate(ca, 'front-proxy-client');
  forged.push(
    ['a name the front-proxy settings do not allow', await clientCertificate(ca, 'intruder')],
    [
      'the right name from another CA of the same name',
      await clientCertificate(otherCA, 'front-proxy-client'),
    ],
    ['the right name, self-signed', await clientCertificate(undefined, 'front-proxy-client')],
    [
      'a server certificate of the right name',
      await clientCertificate(ca, 'front-proxy-client', { usage: 'server' }),
    ],
    ['an expired certificate', await clientCertificate(ca, 'front-proxy-client', { expired: true })],
  );
  const tls = await issueServingCertificate({ hosts: ['localhost'], now: Date.now() });
  server = await startPackageServer({
    address: '127.0.0.1:0',
    index: index as never,
    reviewer: new Reviewer(apiServer),
    tls,
    requestHeader: {
      clientCA: ca.certPEM,
      allowedNames: ['front-proxy-client'],
      usernameHeaders: ['X-Remote-User'],
      groupHeaders: ['X-Remote-Group'],
      extraHeaderPrefixes: ['X-Remote-Extra-'],
    },
    log: pino({ level: 'silent' }),
  });
});

afterAll(async () => {
  await server?.close();
});

const asAggregator = (headers: Record<string, string>, cert = frontProxy) =>
  rawHttps(server.url, `${base}/namespaces/ns/packagemanifests`, { headers, ...cert });

describe('the package server authenticates', () => {
  it("the aggregator's certificate, as the user its headers name", async () => {
    reviews.length = 0;
    const res = await asAggregator({ 'X-Remote-User': 'alice', 'X-Remote-Group': 'dev' });
    expect(res.status).toBe(200);
    expect(reviews).toEqual([
      expect.objectContaining({
        kind: 'SubjectAccessReview',
        spec: expect.objectContaining({ user: 'alice', groups: ['dev', 'system:authenticated'] }),
      }),
    ]);
  });

  it('no other certificate, whatever its headers say', async () => {
    for (const [how, cert] of forged) {
      const res = await asAggregator(
        { 'X-Remote-User': 'system:admin', 'X-Remote-Group': 'system:masters' },
        cert,
      );
      expect(res.status, how).toBe(401);
    }
  });

  it('the anonymous user the aggregator forwards as anonymous, never in system:authenticated', async () => {
    for (const headers of [
      { 'X-Remote-User': 'system:anonymous', 'X-Remote-Group': 'system:unauthenticated' } as Record<
        string,
        string
      >,
      { 'X-Remote-User': 'system:anonymous' },
      { 'X-Remote-User': 'bob', 'X-Remote-Group': 'system:unauthenticated' },
    ]) {
      reviews.length = 0;
      await asAggregator(headers);
      const sar = reviews.find((r) => r.kind === 'SubjectAccessReview');
      expect(sar?.spec.groups, JSON.stringify(headers)).not.toContain('system:authenticated');
    }
  });

  it('nobody from an extra header the aggregator could not have written', async () => {
    const res = await asAggregator({ 'X-Remote-User': 'alice', 'X-Remote-Extra-%zz': 'x' });
    expect(res.status).toBe(401);
  });

  it('a bearer token the API server knows, and no request without one', async () => {
    expect(
      (await rawHttps(server.url, '/healthz', { headers: { Authorization: 'Bearer good' } })).status,
    ).toBe(200);
    expect(
      (await rawHttps(server.url, '/healthz', { headers: { Authorization: 'Bearer bad' } })).status,
    ).toBe(401);
    expect((await rawHttps(server.url, '/healthz')).status).toBe(401);
  });
});

describe('the package server serves icons', () => {
  const icon = (name: string) =>
    rawHttps(server.url, `${base}/namespaces/ns/packagemanifests/${name}/icon`, {
      headers: { 'X-Remote-User': 'alice' },
      ...frontProxy,
    });

  it('of a type that is no image as a download, sandboxed and not sniffed', async () => {
    const res = await icon('html');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toMatch(/^attachment/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe(IconPolicy);
  });

  it('SVG (its own or the default box) and PNG as themselves, sandboxed and not sniffed', async () => {
    for (const [name, type] of [
      ['svg', 'image/svg+xml'],
      ['plain', 'image/svg+xml'],
      ['png', 'image/png'],
    ]) {
      const res = await icon(name!);
      expect(res.headers['content-type'], name).toBe(type);
      expect(res.headers['content-disposition'], name).toBe('inline');
      expect(res.headers['x-content-type-options'], name).toBe('nosniff');
      expect(res.headers['content-security-policy'], name).toBe(IconPolicy);
    }
  });
});
