/**
 * Two managers serving the PackageManifest API together, as deploy/ runs them: both
 * `bosun operator run --leader-elect --package-api-service-port 5443`, behind one Service
 * `bosun-packageserver`. The local control plane has no kubelet to make Pod endpoints, so the
 * managers run as processes on this host and the test plays the EndpointSlice controller: the
 * Service has no selector, and one EndpointSlice per manager names its address, marked not ready
 * when that manager is killed (what the controller does once the Pod fails its readiness probe).
 *
 * What it proves, through the real aggregator: both serve one certificate (the Secret's, whose CA
 * the APIService trusts) and each alone answers `kubectl get packagemanifests`; nothing but the
 * aggregator's status writes changes the APIService, and the Secret's resourceVersion stays put,
 * over a minute of both running and when the Lease changes hands;
 * killing either manager (the leader, then the other) leaves the API answering; a manager started
 * again serves the same certificate; stopping one removes nothing.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { createInterface } from 'node:readline';
import { connect } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { catalogConfigMapData } from '../../../src/cli/commands/start.js';
import { Builtin } from '../../../src/kube/resources.js';
import { CertSecretName } from '../../../src/server/packageserver/cert-secret.js';
import { defaultPackageApiAddress } from '../../../src/server/packageserver/listen.js';
import {
  APIServiceName,
  apiServiceAvailable,
  ServiceName,
} from '../../../src/server/packageserver/register.js';
import { spawnBosun } from '../../support/bosun-process.js';
import { eventually } from '../support.js';
import { client, create } from '../controllers/support.js';
import { configMapCatalog, repoCatalogs } from '../packages/support.js';

const run = promisify(execFile);
const ns = `ha-${randomBytes(3).toString('hex')}`;
const catalog = 'ha-samples';
const hostIP = defaultPackageApiAddress().split(':')[0]!;
const apiServicePath = `/apis/apiregistration.k8s.io/v1/apiservices/${APIServiceName}`;
const secretPath = `/api/v1/namespaces/${ns}/secrets/${CertSecretName}`;
const slicesPath = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;

interface Replica {
  name: string;
  child: ChildProcess;
  identity?: string;
  /** The PackageManifest API's port. */
  port?: number;
  /** The web catalog, /healthz and /readyz. */
  web?: string;
  log: string[];
  exited: Promise<void>;
}

function startReplica(name: string, globalNamespace = ns): Replica {
  const args = [
    'operator',
    'run',
    '--kubeconfig',
    inject('kubeconfig'),
    '--install-crds',
    '--metrics-addr',
    '127.0.0.1:0',
    '--global-namespace',
    globalNamespace,
    '--leader-elect',
    '--package-api-addr',
    `${hostIP}:0`,
    '--package-api-service-port',
    '5443',
    '--log-format',
    'json',
  ];
  const child = spawnBosun(args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const r: Replica = { name, child, log: [], exited: new Promise((res) => child.once('exit', () => res())) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    r.log.push(line);
    try {
      const rec = JSON.parse(line) as { identity?: string; msg?: string; url?: string };
      r.identity ??= rec.identity;
      if (rec.msg?.startsWith('serving the PackageManifest API') && rec.url)
        r.port = Number(new URL(rec.url).port);
      if (rec.msg?.startsWith('serving the web catalog') && rec.url) r.web = rec.url;
    } catch {
      // not a log record
    }
  });
  return r;
}

const serving = (r: Replica) =>
  eventually(
    `${r.name} to serve the PackageManifest API`,
    async () => {
      if (r.child.exitCode !== null) throw new Error(`${r.name} exited:\n${r.log.join('\n')}`);
      return r.port && r.identity ? r.port : undefined;
    },
    120_000,
  );

/** One EndpointSlice per replica, as the EndpointSlice controller would write for its Pod. */
async function putSlice(r: Replica, ready: boolean) {
  const body = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${ServiceName}-${r.name}`,
      namespace: ns,
      labels: { 'kubernetes.io/service-name': ServiceName },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [hostIP], conditions: { ready } }],
    ports: [{ name: 'https', port: r.port, protocol: 'TCP' }],
  };
  await client()
    .request({ method: 'DELETE', path: `${slicesPath}/${body.metadata.name}` })
    .catch(() => undefined);
  await client().request({ method: 'POST', path: slicesPath, body });
}

/** The certificate a replica presents, as PEM. */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: hostIP, port, rejectUnauthorized: false, servername: `${ServiceName}.${ns}.svc` },
      () => {
        const raw = socket.getPeerCertificate().raw;
        socket.end();
        resolve(new X509Certificate(raw).toString());
      },
    );
    socket.once('error', reject);
  });
}

async function kubectlGet(): Promise<string[]> {
  const { stdout } = await run('kubectl', [
    '--kubeconfig',
    inject('kubeconfig'),
    'get',
    'packagemanifests',
    '-n',
    ns,
    '-l',
    `catalog=${catalog}`,
    '-o',
    'name',
  ]);
  return stdout.trim().split('\n').sort();
}

const expected = [
  'packagemanifest.packages.operators.coreos.com/bosun-sample',
  'packagemanifest.packages.operators.coreos.com/bosun-sample-dashboard',
];

/** `times` kubectl gets in a row, every one answered in full. */
async function answersEveryTime(times: number) {
  for (let i = 0; i < times; i++) expect(await kubectlGet()).toEqual(expected);
}

const rvOf = async (path: string) =>
  (await client().request<{ metadata: { resourceVersion: string } }>({ path })).metadata.resourceVersion;
/**
 * What has been written to the APIService other than its status. The aggregator writes the status
 * (Available) itself, and flips it when a check of the endpoints is slow, which changes the
 * resourceVersion without anyone touching what Bosun owns.
 */
const writtenOf = async (path: string) => {
  const o = await client().request<{
    metadata: {
      generation?: number;
      labels?: unknown;
      annotations?: unknown;
      managedFields?: { manager?: string; operation?: string; subresource?: string; time?: string }[];
    };
    spec: unknown;
  }>({ path });
  const { generation, labels, annotations, managedFields = [] } = o.metadata;
  const writes = managedFields.filter((f) => f.subresource !== 'status');
  return JSON.stringify({ generation, labels, annotations, spec: o.spec, writes });
};
const holder = async () =>
  (
    await client().request<{ spec?: { holderIdentity?: string } }>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/bosun-manager`,
    })
  ).spec?.holderIdentity;

const replicas: Replica[] = [];

beforeAll(async () => {
  await create(Builtin.Namespace, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  // The Service deploy/ makes, without its selector: the test writes its endpoints.
  await create({ group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true }, ns, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ServiceName, namespace: ns },
    spec: { ports: [{ name: 'https', port: 5443, protocol: 'TCP' }] },
  } as never);
}, 120_000);

afterAll(async () => {
  for (const r of replicas)
    if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exited));
  for (const path of [apiServicePath, `/api/v1/namespaces/${ns}`])
    await client()
      .request({ method: 'DELETE', path })
      .catch(() => undefined);
}, 120_000);

describe('two replicas behind the packageserver Service', () => {
  it('serve one certificate and answer together, leave the APIService alone, and survive the loss of either', async () => {
    const a = startReplica('a');
    const b = startReplica('b');
    replicas.push(a, b);
    await Promise.all([serving(a), serving(b)]);
    // The managers have installed the CRDs by now.
    await configMapCatalog(ns, catalog, await catalogConfigMapData(repoCatalogs), {
      displayName: 'HA samples',
    });
    await Promise.all([putSlice(a, true), putSlice(b, true)]);

    // One certificate, the Secret's, for the Service's name; the APIService trusts its CA.
    const secret = await client().request<{ data: Record<string, string> }>({ path: secretPath });
    const secretCert = Buffer.from(secret.data['tls.crt']!, 'base64').toString();
    const secretCA = Buffer.from(secret.data.olmCAKey!, 'base64').toString();
    const [certA, certB] = await Promise.all([presented(a.port!), presented(b.port!)]);
    expect(certA).toBe(new X509Certificate(secretCert).toString());
    expect(certB).toBe(certA);
    expect(new X509Certificate(certA).checkHost(`${ServiceName}.${ns}.svc`)).toBeDefined();
    const live = await client().request<{
      spec: { caBundle: string; service: { name: string; namespace: string; port: number } };
    }>({
      path: apiServicePath,
    });
    expect(live.spec.service).toEqual({ name: ServiceName, namespace: ns, port: 5443 });
    expect(
      new X509Certificate(certA).checkIssued(new X509Certificate(Buffer.from(live.spec.caBundle, 'base64'))),
    ).toBe(true);
    expect(new X509Certificate(secretCA).toString()).toBe(
      new X509Certificate(Buffer.from(live.spec.caBundle, 'base64')).toString(),
    );

    await eventually(
      'the APIService to be Available',
      async () => ((await apiServiceAvailable(client())).available ? true : undefined),
      120_000,
    );
    await eventually(
      'the packages to be listed',
      async () => ((await kubectlGet()).length === 2 ? true : undefined),
      60_000,
    );

    // Each replica alone answers through the aggregator.
    for (const down of [b, a]) {
      await putSlice(down, false);
      await answersEveryTime(5);
      await putSlice(down, true);
    }

    // A minute of both running: nobody rewrites the APIService or the Secret.
    const apiWritten = await writtenOf(apiServicePath);
    const secretRv = await rvOf(secretPath);
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      expect(await writtenOf(apiServicePath)).toBe(apiWritten);
      await new Promise((r) => setTimeout(r, 5_000));
    }
    expect(await rvOf(secretPath)).toBe(secretRv);

    // Kill the leader: the other answers at once (its slice alone is ready), then takes the Lease,
    // and still leaves the APIService as it was.
    const leaderId = await holder();
    const leader = [a, b].find((r) => r.identity === leaderId)!;
    const standby = leader === a ? b : a;
    expect(leader).toBeDefined();
    leader.child.kill('SIGKILL');
    await leader.exited;
    await putSlice(leader, false);
    await answersEveryTime(5);
    await eventually(
      'the standby to take the Lease',
      async () => ((await holder()) === standby.identity ? true : undefined),
      60_000,
    );
    await answersEveryTime(3);
    expect(await writtenOf(apiServicePath)).toBe(apiWritten);

    // Started again, the killed replica serves the same certificate.
    const again = startReplica(`${leader.name}2`);
    replicas.push(again);
    await serving(again);
    expect(await presented(again.port!)).toBe(certA);
    await putSlice(again, true);

    // Kill the other one, now the leader: the restarted replica answers alone.
    standby.child.kill('SIGKILL');
    await standby.exited;
    await putSlice(standby, false);
    await answersEveryTime(5);
    await eventually(
      'the restarted replica to take the Lease',
      async () => ((await holder()) === again.identity ? true : undefined),
      60_000,
    );
    await answersEveryTime(3);
    expect(await writtenOf(apiServicePath)).toBe(apiWritten);
    expect(await rvOf(secretPath)).toBe(secretRv);

    // A replica that stops cleanly takes nothing away: the others would go on serving.
    again.child.kill('SIGTERM');
    await again.exited;
    expect(await writtenOf(apiServicePath)).toBe(apiWritten);
  }, 600_000);

  it('a replica is not ready, and serves no PackageManifest API, until the leader has issued the certificate', async () => {
    // Another manager holds the Lease of this namespace and has issued nothing: the replica
    // started here is a standby with no certificate to serve.
    const other = `ha-${randomBytes(3).toString('hex')}`;
    await create(Builtin.Namespace, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: other } });
    const lease = `/apis/coordination.k8s.io/v1/namespaces/${other}/leases/bosun-manager`;
    await client().request({
      method: 'POST',
      path: `/apis/coordination.k8s.io/v1/namespaces/${other}/leases`,
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'bosun-manager', namespace: other },
        spec: {
          holderIdentity: 'another-manager',
          leaseDurationSeconds: 3600,
          renewTime: new Date().toISOString().replace('Z', '000Z'),
        },
      },
    });
    try {
      const c = startReplica('c', other);
      replicas.push(c);
      await eventually('c to serve /readyz', async () => (c.web ? true : undefined), 120_000);
      const readyz = async () => {
        const answer = await fetch(`${c.web}/readyz`);
        return { status: answer.status, body: await answer.text() };
      };
      // Synced or not, it is not ready for ten seconds: the Service would route to it otherwise.
      let last = { status: 0, body: '' };
      for (let i = 0; i < 10; i++) {
        last = await readyz();
        expect(last.status).toBe(503);
        await new Promise((r) => setTimeout(r, 1_000));
      }
      // Its informers synced long since: the 503 says what it still waits for.
      expect(last.body).toMatch(/^not serving the PackageManifest API yet: its certificate Secret/);
      expect(c.port).toBeUndefined();
      expect(c.log.some((l) => l.includes('waiting for the leader to issue'))).toBe(true);

      // The Lease is given up: the replica takes it, issues the certificate, serves and is ready.
      await client().request({
        method: 'PATCH',
        path: lease,
        body: { spec: { holderIdentity: null } },
        contentType: 'application/merge-patch+json',
      });
      await eventually(
        'c to serve the PackageManifest API',
        async () => (c.port ? true : undefined),
        120_000,
      );
      await eventually(
        'c to be ready',
        async () => ((await readyz()).status === 200 ? true : undefined),
        60_000,
      );
      const secret = await client().request<{ data: Record<string, string> }>({
        path: `/api/v1/namespaces/${other}/secrets/${CertSecretName}`,
      });
      expect(await presented(c.port!)).toBe(
        new X509Certificate(Buffer.from(secret.data['tls.crt']!, 'base64')).toString(),
      );
      c.child.kill('SIGTERM');
      await c.exited;
    } finally {
      await client()
        .request({ method: 'DELETE', path: `/api/v1/namespaces/${other}` })
        .catch(() => undefined);
    }
  }, 300_000);
});
