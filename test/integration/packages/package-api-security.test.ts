/**
 * The PackageManifest API's listener against what reaches it directly: it binds where it is told
 * (and refuses loopback, which the API server cannot reach, rather than bind elsewhere); every path
 * (discovery, OpenAPI, health, resources, malformed targets) answers 401 to every request the API
 * server would not have authenticated, however it forges an identity; a flood of made-up bearer
 * tokens reaches the API server as a handful of TokenReviews (the figure is printed); and a user
 * whose only permission is `view` in one namespace uses `kubectl get packagemanifests` there, with
 * a real token and a fresh discovery cache, and is refused elsewhere, also when forging headers.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { layoutFor } from '../../../src/cluster/layout.js';
import { stateRoot } from '../../../src/cluster/paths.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { startManager } from '../../../src/manager/manager.js';
import { defaultPackageApiAddress } from '../../../src/server/packageserver/listen.js';
import { tempDir } from '../../support/temp-dir.js';
import { rawHttps } from '../../support/raw-request.js';
import { adminTls, serviceAccountToken, tokenKubeconfig, tokenReviewsServed } from '../../support/users.js';
import { client } from '../controllers/support.js';
import { eventually, freshNamespace } from '../support.js';
import { managerWithPackageApi } from './support.js';

const run = promisify(execFile);
const base = '/apis/packages.operators.coreos.com/v1';
const catalog = `security-${process.pid}`;

let manager: RunningManager;
let stopManager: () => Promise<void>;
/** The package server as the API server dials it. */
let direct: string;

beforeAll(async () => {
  ({ manager, stop: stopManager } = await managerWithPackageApi({
    packageApiAddr: defaultPackageApiAddress(),
    catalog,
    displayName: 'Security samples',
  }));
  direct = manager.packageApi!.url;
  await eventually('the global catalog to be listed', async () => {
    const list = await client().request<{ items: unknown[] }>({
      path: `${base}/namespaces/default/packagemanifests`,
      query: { labelSelector: `catalog=${catalog}` },
    });
    return list.items.length > 0 ? true : undefined;
  });
});

afterAll(async () => {
  await stopManager?.();
});

/** Whether anything accepts a TCP connection at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Every kind of path the server knows, and targets a parser could be fooled by. */
const targets = [
  '/',
  '/healthz',
  '/readyz',
  '/livez',
  '/healthz?verbose',
  '/metrics',
  '/version',
  '/api',
  '/apis',
  '/apis/',
  '/openapi/v2',
  '/openapi/v3',
  `/openapi/v3${base}`,
  '/apis/packages.operators.coreos.com',
  base,
  `${base}/packagemanifests`,
  `${base}/namespaces/default/packagemanifests`,
  `${base}/namespaces/default/packagemanifests?watch=true`,
  `${base}/watch/namespaces/default/packagemanifests`,
  `${base}/namespaces/default/packagemanifests/bosun-sample`,
  `${base}/namespaces/default/packagemanifests/bosun-sample/icon`,
  `${base}/namespaces/default/widgets`,
  // Malformed: broken and non-UTF-8 escapes, dot segments plain and encoded, doubled slashes.
  `${base}/namespaces/%zz/packagemanifests`,
  '/healthz%',
  `${base}/namespaces/%E0%A4/packagemanifests`,
  `${base}/namespaces/default/packagemanifests/../../../../../healthz`,
  '/apis/%2e%2e/healthz',
  '/healthz/..',
  '//healthz',
  '/healthz%2F..%2F',
  // Long: past the server's own limit, still under Node's header limit.
  `/${'a'.repeat(5000)}`,
  `${base}/namespaces/${'x'.repeat(12_000)}/packagemanifests`,
];

describe('the PackageManifest API listener', () => {
  it('binds the address it is given, not loopback, and advertises it to the API server', async () => {
    const url = new URL(direct);
    expect(url.hostname).toBe(defaultPackageApiAddress().split(':')[0]);
    expect(await accepts(url.hostname, Number(url.port))).toBe(true);
    expect(await accepts('127.0.0.1', Number(url.port))).toBe(false);
    const slice = await client().request<{ endpoints: { addresses: string[] }[] }>({
      path: '/apis/discovery.k8s.io/v1/namespaces/olm/endpointslices/bosun-packageserver',
    });
    expect(slice.endpoints[0]!.addresses).toEqual([url.hostname]);
  });

  it('refuses a loopback address, saying why, instead of serving on another interface', async () => {
    for (const address of ['127.0.0.1:0', 'localhost:0']) {
      const started = startManager({
        kubeconfig: inject('kubeconfig'),
        metricsAddr: null,
        controllers: [],
        globalNamespace: 'olm',
        packageApiAddr: address,
        logger: (await import('pino')).pino({ level: 'silent' }),
      });
      await expect(started).rejects.toThrow(/loopback address, which the API server cannot reach/);
    }
    // The manager of this file still serves: a failed start took nothing of it away.
    const list = await client().request<{ items: unknown[] }>({
      path: `${base}/namespaces/default/packagemanifests`,
    });
    expect(list.items.length).toBeGreaterThan(0);
  });

  it('answers 401 on every path to a request that forges an identity the API server did not give', async () => {
    const admin = await adminTls(inject('kubeconfig'));
    const pki = pkiDir();
    const forged: [string, Parameters<typeof rawHttps>[2]][] = [
      ['no credentials', {}],
      ['X-Remote-User and X-Remote-Group', { headers: aggregatorHeaders() }],
      [
        'Impersonate-User',
        { headers: { 'Impersonate-User': 'system:admin', 'Impersonate-Group': 'system:masters' } },
      ],
      [
        'Basic credentials',
        { headers: { Authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` } },
      ],
      ['an empty bearer token', { headers: { Authorization: 'Bearer ' } }],
      ['a made-up bearer token', { headers: { Authorization: `Bearer ${randomBytes(16).toString('hex')}` } }],
      [
        "the cluster CA's admin certificate, with X-Remote-User",
        { headers: aggregatorHeaders(), cert: admin.cert!, key: admin.key! },
      ],
    ];
    if (pki) {
      const certs = await forgedCertificates(pki);
      forged.push(
        [
          'a self-signed certificate named front-proxy-client',
          { headers: aggregatorHeaders(), ...certs.selfSigned },
        ],
        [
          "the cluster CA's certificate named front-proxy-client",
          { headers: aggregatorHeaders(), ...certs.otherCA },
        ],
      );
    }
    const wrong: string[] = [];
    for (const [how, opts] of forged) {
      for (const target of targets) {
        const res = await rawHttps(direct, target, opts);
        // A made-up token may be turned away before its review, when they come too fast (429).
        const expected = how === 'a made-up bearer token' ? [401, 429] : [401];
        if (!expected.includes(res.status) || /"items"|^ok$|packageName/.test(res.body))
          wrong.push(`${how}: ${target.slice(0, 80)} → ${res.status} ${res.body.slice(0, 80)}`);
      }
    }
    expect(wrong).toEqual([]);
    if (!pki) console.warn('[security] no local control plane state: forged certificates not tried');
  });

  it.skipIf(!pkiDir())(
    'accepts the real front-proxy client certificate (so the refusals above are not for a broken setup)',
    async () => {
      const pki = pkiDir()!;
      const cert = await readFile(join(pki, 'front-proxy-client.crt'), 'utf8');
      const key = await readFile(join(pki, 'front-proxy-client.key'), 'utf8');
      const res = await rawHttps(direct, `${base}/namespaces/default/packagemanifests`, {
        headers: aggregatorHeaders(),
        cert,
        key,
      });
      expect(res.status).toBe(200);
      expect(res.body).toContain('bosun-sample');
    },
  );

  it('answers an authenticated user 400 or 414 for a malformed target, 404 for a path it does not serve, and health to anyone authenticated', async () => {
    const ns = await freshNamespace('sec');
    const token = await serviceAccountToken(client(), ns, 'nobody');
    const auth = { headers: { Authorization: `Bearer ${token}` } };
    const status = async (target: string) => (await rawHttps(direct, target, auth)).status;
    for (const target of ['/healthz', '/readyz', '/livez']) expect(await status(target), target).toBe(200);
    for (const target of [
      `${base}/namespaces/%zz/packagemanifests`,
      '/healthz%',
      `${base}/namespaces/%E0%A4/packagemanifests`,
      `${base}/namespaces/default/packagemanifests/../../../../../healthz`,
      '/apis/%2e%2e/healthz',
      '/healthz/..',
      '/healthz%2F..%2F',
    ])
      expect(await status(target), target).toBe(400);
    expect(await status(`/${'a'.repeat(5000)}`)).toBe(414);
    expect(await status('/metrics')).toBe(404);
    expect(await status('//healthz')).toBe(404);
    expect(await status(`${base}/namespaces/default/widgets`)).toBe(404);
    // Discovery for any authenticated user (system:discovery), the resource only where RBAC says.
    expect(await status('/apis')).toBe(200);
    expect(await status(base)).toBe(200);
    expect(await status(`${base}/namespaces/default/packagemanifests`)).toBe(403);
  });

  it('1,000 made-up bearer tokens reach the API server as a handful of TokenReviews', async () => {
    const before = await tokenReviewsServed(inject('kubeconfig'));
    const started = Date.now();
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < 1000) {
          next++;
          const res = await rawHttps(direct, `${base}/namespaces/default/packagemanifests`, {
            headers: { Authorization: `Bearer ${randomBytes(24).toString('base64url')}` },
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const reviews = (await tokenReviewsServed(inject('kubeconfig'))) - before;
    console.log(
      `[security] 1000 made-up bearer tokens in ${seconds.toFixed(1)} s: ${reviews} TokenReviews at the API server; answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect([...statuses.keys()].sort()).toEqual([401, 429]);
    // The per-source burst (10) and one a second after it.
    expect(reviews).toBeLessThanOrEqual(10 + Math.ceil(seconds) + 1);
    // The same unknown token again and again costs one review at most.
    const again = randomBytes(24).toString('base64url');
    await new Promise((r) => setTimeout(r, 2000)); // a token or two back in the bucket
    const before2 = await tokenReviewsServed(inject('kubeconfig'));
    for (let i = 0; i < 100; i++) {
      const res = await rawHttps(direct, '/healthz', { headers: { Authorization: `Bearer ${again}` } });
      expect(res.status).toBe(401);
    }
    expect((await tokenReviewsServed(inject('kubeconfig'))) - before2).toBe(1);
  });

  it('a user who may only view one namespace runs kubectl get packagemanifests there, with a real token, and is refused elsewhere', async () => {
    const mine = await freshNamespace('viewer');
    const other = await freshNamespace('viewer');
    const token = await serviceAccountToken(client(), mine, 'viewer', [{ role: 'view', namespace: mine }]);
    const kubeconfig = await tokenKubeconfig(inject('kubeconfig'), token);
    const cache = await tempDir('bosun-kubectl-cache-');
    const kubectl = async (...args: string[]) => {
      try {
        const { stdout, stderr } = await run('kubectl', [
          '--kubeconfig',
          kubeconfig,
          '--cache-dir',
          cache,
          ...args,
        ]);
        return { code: 0, out: stdout, err: stderr };
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; code?: number };
        return { code: e.code ?? 1, out: e.stdout ?? '', err: e.stderr ?? '' };
      }
    };
    expect((await kubectl('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}')).out).toBe(
      `system:serviceaccount:${mine}:viewer`,
    );
    const listed = await eventually('the viewer to list packagemanifests in its namespace', async () => {
      const r = await kubectl('get', 'packagemanifests', '-n', mine);
      return r.code === 0 ? r : undefined;
    });
    expect(listed.err).toBe('');
    expect(listed.out).toMatch(/^NAME\s+CATALOG\s+AGE$/m);
    expect(listed.out).toContain('bosun-sample');
    const one = await kubectl(
      'get',
      'packagemanifest',
      'bosun-sample',
      '-n',
      mine,
      '-o',
      'jsonpath={.status.packageName}',
    );
    expect(one.out).toBe('bosun-sample');
    const resources = await kubectl('api-resources', '--api-group=packages.operators.coreos.com');
    expect(resources.code, resources.err).toBe(0);
    expect(resources.out).toContain('packagemanifests');

    const elsewhere = await kubectl('get', 'packagemanifests', '-n', other);
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.err).toContain(
      `User "system:serviceaccount:${mine}:viewer" cannot list resource "packagemanifests" in API group "packages.operators.coreos.com" in the namespace "${other}"`,
    );
    const everywhere = await kubectl('get', 'packagemanifests', '-A');
    expect(everywhere.code).not.toBe(0);

    // Headers naming another user, sent through the API server with the viewer's token: the API
    // server's aggregator replaces them, so the request is still the viewer's.
    const admin = await adminTls(inject('kubeconfig'));
    for (const headers of [
      aggregatorHeaders(),
      { 'X-Remote-User': 'system:admin', 'X-Remote-Group': 'system:masters', 'X-Remote-Extra-Scopes': 'all' },
      { 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' },
    ]) {
      const res = await rawHttps(admin.server, `${base}/namespaces/${other}/packagemanifests`, {
        headers: { ...headers, Authorization: `Bearer ${token}` },
        ...(admin.ca ? { ca: admin.ca } : {}),
      });
      expect(res.status).toBe(403);
      expect(res.body).toContain(`system:serviceaccount:${mine}:viewer`);
    }
  });
});

function aggregatorHeaders(): Record<string, string> {
  return { 'X-Remote-User': 'system:admin', 'X-Remote-Group': 'system:masters' };
}

/** The local control plane's certificates, when the run started one. */
function pkiDir(): string | undefined {
  const name = inject('clusterName');
  if (!name) return undefined;
  const dir = layoutFor(stateRoot(), name).pkiDir;
  return existsSync(join(dir, 'front-proxy-client.key')) ? dir : undefined;
}

/**
 * Client certificates named as the aggregator's is, that the aggregator never holds: self-signed,
 * and signed by the cluster's CA (the one its users' certificates come from) rather than the
 * front-proxy CA. (A front-proxy CA certificate with another name is tried in the unit tests: the
 * local control plane does not keep that CA's key.)
 */
async function forgedCertificates(pki: string) {
  const dir = await tempDir('bosun-forged-');
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const subject = ['-subj', '/CN=front-proxy-client'];
  await writeFile(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  await openssl(
    'req',
    '-x509',
    ...curve,
    '-days',
    '1',
    ...subject,
    '-keyout',
    'self.key',
    '-out',
    'self.crt',
  );
  await openssl('req', '-new', ...curve, ...subject, '-keyout', 'other.key', '-out', 'other.csr');
  await openssl(
    ...['x509', '-req', '-in', 'other.csr', '-days', '1', '-extfile', 'client.ext', '-out', 'other.crt'],
    ...['-CA', join(pki, 'ca.crt'), '-CAkey', join(pki, 'ca.key'), '-CAcreateserial'],
  );
  const read = (f: string) => readFile(join(dir, f), 'utf8');
  return {
    selfSigned: { cert: await read('self.crt'), key: await read('self.key') },
    otherCA: { cert: await read('other.crt'), key: await read('other.key') },
  };
}
