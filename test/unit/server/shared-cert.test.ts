import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Values } from '../../../src/cli/command.js';
import { packageApiServiceOption } from '../../../src/cli/commands/operator.js';
import { UserError } from '../../../src/util/errors.js';
import type { KubeObject } from '../../../src/apis/meta.js';
import {
  CAPEMKey,
  CertificateValidityMs,
  issueServingCertificate,
  type IssuedCertificate,
  type ServingCertificate,
} from '../../../src/install/certificates.js';
import { ApiError, type KubeClient, type RequestOptions } from '../../../src/kube/client.js';
import {
  caBundleFor,
  certAction,
  type CertSecret,
  certSecret,
  CertSecretName,
  pemBlocks,
  rotationBundle,
} from '../../../src/server/packageserver/cert-secret.js';
import { APIServiceName, sharedRegistrationObjects } from '../../../src/server/packageserver/register.js';
import { startSharedCert, type SharedCert } from '../../../src/server/packageserver/shared-cert.js';
import { FakeClock } from '../kube/fake-clock.js';

const ns = 'olm';
const hosts = ['bosun-packageserver.olm', 'bosun-packageserver.olm.svc', 'localhost'];
const t0 = Date.UTC(2026, 0, 1);
const day = 24 * 3_600_000;
const issue = (now = t0, h: readonly string[] = hosts) => issueServingCertificate({ hosts: h, now });

describe('certAction', () => {
  it('serves a fresh certificate until a day before it expires, then serves it on while asking for a new one', async () => {
    const cert = await issue();
    const secret = certSecret(ns, cert);
    const fresh = certAction(secret, hosts, t0 + day);
    expect(fresh).toMatchObject({
      kind: 'serve',
      certificate: { certPEM: cert.certPEM },
      rotateAt: cert.rotateAt,
    });
    expect(fresh.kind === 'serve' && fresh.due).toBeUndefined();
    const due = certAction(secret, hosts, cert.rotateAt + 3_600_000);
    expect(due).toMatchObject({ kind: 'serve', certificate: { certPEM: cert.certPEM } });
    expect(due.kind === 'serve' && due.due).toMatch(/due for rotation/);
  });

  it('never serves what it cannot: no Secret, an expired, foreign, forged or broken certificate', async () => {
    const good = await issue();
    const other = await issue();
    const forHost = await issue(t0, ['evil.example.com']);
    const data = (c: ServingCertificate) => certSecret(ns, c).data!;
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const cases: [string, CertSecret | undefined, number, RegExp][] = [
      ['no Secret', undefined, t0, /does not exist/],
      ['expired', certSecret(ns, good), t0 + CertificateValidityMs + 1, /expires|not valid/],
      ['not yet valid', certSecret(ns, good), t0 - day, /not valid before/],
      ['for another host', certSecret(ns, forHost), t0, /does not name bosun-packageserver.olm/],
      [
        'signed by another CA',
        { ...certSecret(ns, good), data: { ...data(good), [CAPEMKey]: data(other)[CAPEMKey]! } },
        t0,
        /not signed by the CA/,
      ],
      [
        'the key of another certificate',
        { ...certSecret(ns, good), data: { ...data(good), 'tls.key': data(other)['tls.key']! } },
        t0,
        /private key/,
      ],
      [
        'a certificate that is not PEM',
        { ...certSecret(ns, good), data: { ...data(good), 'tls.crt': b64('<script>') } },
        t0,
        /not a PEM/,
      ],
      [
        'no key',
        {
          ...certSecret(ns, good),
          data: { 'tls.crt': data(good)['tls.crt']!, [CAPEMKey]: data(good)[CAPEMKey]! },
        },
        t0,
        /no private key/,
      ],
      ['no data', { ...certSecret(ns, good), data: {} }, t0, /no CA/],
    ];
    for (const [what, secret, now, reason] of cases) {
      const action = certAction(secret, hosts, now);
      expect(action.kind, what).toBe('missing');
      expect(action.kind === 'missing' && action.reason, what).toMatch(reason);
    }
  });
});

describe('caBundleFor and rotationBundle', () => {
  it('keeps a bundle that trusts the CA, replaces one that does not, and a rotation trusts both CAs', async () => {
    const a = (await issue()).caPEM;
    const b = (await issue()).caPEM;
    const c = (await issue()).caPEM;
    expect(caBundleFor(b + a, a)).toBe(b + a);
    expect(caBundleFor(a.replace(/\n/g, '\r\n'), a)).toBe(a.replace(/\n/g, '\r\n'));
    expect(caBundleFor(b, a)).toBe(a);
    expect(caBundleFor(undefined, a)).toBe(a);
    expect(caBundleFor('not a certificate', a)).toBe(a);
    expect(pemBlocks(rotationBundle(b, a))).toEqual([b, a]);
    expect(rotationBundle(a, a)).toBe(a);
    expect(rotationBundle(a, undefined)).toBe(a);
    // The next rotation drops the oldest CA.
    expect(pemBlocks(rotationBundle(c, b))).toEqual([c, b]);
  });
});

/** The API server's part: one Secret and one APIService, with resourceVersions and 409s. */
class FakeApi {
  rv = 0;
  secret?: CertSecret;
  apiService?: KubeObject & { spec: { caBundle: string } };
  /** Every write, in order, naming who made it. */
  writes: { who: string; what: string; caBundle?: string[]; cert?: string }[] = [];

  client(who: string): KubeClient {
    return {
      request: async <T>(r: RequestOptions): Promise<T> => {
        await Promise.resolve();
        const method = r.method ?? 'GET';
        if (r.path.endsWith(`/secrets/${CertSecretName}`) && method === 'GET') return this.found(this.secret);
        if (r.path.endsWith(`/apiservices/${APIServiceName}`) && method === 'GET')
          return this.found(this.apiService);
        const body = r.body as CertSecret;
        if (r.path === `/api/v1/namespaces/${ns}/secrets` && method === 'POST') {
          if (this.secret) throw status(409, 'AlreadyExists');
          return this.storeSecret(who, body) as T;
        }
        if (r.path.endsWith(`/secrets/${CertSecretName}`) && method === 'PUT') {
          if (body.metadata?.resourceVersion !== this.secret?.metadata?.resourceVersion)
            throw status(409, 'Conflict');
          return this.storeSecret(who, body) as T;
        }
        throw new Error(`unexpected ${method} ${r.path}`);
      },
    } as unknown as KubeClient;
  }

  apply(who: string) {
    return async (obj: KubeObject) => {
      await Promise.resolve();
      if (obj.kind !== 'APIService') return;
      const next = structuredClone(obj) as NonNullable<FakeApi['apiService']>;
      // Server-side apply of the same content changes nothing, resourceVersion included.
      if (this.apiService && JSON.stringify(this.apiService.spec) === JSON.stringify(next.spec)) return;
      this.apiService = { ...next, metadata: { ...next.metadata, resourceVersion: String(++this.rv) } };
      this.writes.push({
        who,
        what: 'APIService',
        caBundle: pemBlocks(Buffer.from(next.spec.caBundle, 'base64').toString()),
      });
    };
  }

  caBundle(): string[] {
    return pemBlocks(Buffer.from(this.apiService?.spec.caBundle ?? '', 'base64').toString());
  }

  secretCert(): string | undefined {
    const v = this.secret?.data?.['tls.crt'];
    return v ? Buffer.from(v, 'base64').toString() : undefined;
  }

  private storeSecret(who: string, body: CertSecret) {
    this.secret = {
      ...structuredClone(body),
      metadata: { ...body.metadata, resourceVersion: String(++this.rv) },
    };
    this.writes.push({ who, what: 'Secret', cert: this.secretCert() });
    return this.secret;
  }

  private found<T>(o: unknown): T {
    if (!o) throw status(404, 'NotFound');
    return structuredClone(o) as T;
  }
}

const status = (code: number, reason: string) =>
  new ApiError(code, reason, JSON.stringify({ kind: 'Status', code, reason, message: reason }), {});

interface Replica {
  cert: SharedCert;
  served: ServingCertificate[];
}

function replica(
  api: FakeApi,
  who: string,
  clock: FakeClock,
  canWrite: () => boolean,
  issuer = (now: number) => issue(now),
): Replica {
  const served: ServingCertificate[] = [];
  const client = api.client(who);
  const cert = startSharedCert({
    client,
    writer: client,
    canWrite,
    namespace: ns,
    hosts,
    registration: (caPEM) => sharedRegistrationObjects({ namespace: ns, servicePort: 5443, caPEM }),
    clock,
    log: pino({ level: 'silent' }),
    onCertificate: (c) => served.push(c),
    issue: issuer,
    apply: api.apply(who),
    watch: () => ({ stop: () => Promise.resolve() }),
    resyncMs: 3_600_000,
  });
  return { cert, served };
}

describe('startSharedCert', () => {
  it('two replicas that start together and may both write agree on one certificate, which the APIService trusts', async () => {
    const api = new FakeApi();
    const clock = new FakeClock(t0);
    // Both read "no Secret" and issue a certificate before either writes: the write that names no
    // resourceVersion loses with 409, and the loser serves the winner's.
    let calls = 0;
    let release!: () => void;
    const both = new Promise<void>((r) => (release = r));
    const racing = async (now: number): Promise<IssuedCertificate> => {
      const c = await issue(now);
      if (++calls === 2) release();
      await both;
      return c;
    };
    const a = replica(api, 'a', clock, () => true, racing);
    const b = replica(api, 'b', clock, () => true, racing);
    const [ca, cb] = await Promise.all([a.cert.first, b.cert.first]);
    await Promise.all([a.cert.sync(), b.cert.sync()]);
    expect(calls).toBe(2);
    expect(ca.certPEM).toBe(cb.certPEM);
    expect(api.secretCert()).toBe(ca.certPEM);
    expect(api.writes.filter((w) => w.what === 'Secret')).toHaveLength(1);
    expect(api.caBundle()).toEqual([ca.caPEM]);
    await Promise.all([a.cert.stop(), b.cert.stop()]);
  });

  it('a replica that may not write waits for the Secret, serves it, and never writes', async () => {
    const api = new FakeApi();
    const clock = new FakeClock(t0);
    const reader = replica(api, 'reader', clock, () => false);
    await reader.cert.sync();
    expect(reader.served).toEqual([]);
    expect(api.writes).toEqual([]);
    const writer = replica(api, 'writer', clock, () => true);
    const written = await writer.cert.first;
    clock.advance(2_000); // the reader's next look while it has nothing to serve
    await reader.cert.first;
    await reader.cert.sync();
    expect(reader.served.map((c) => c.certPEM)).toEqual([written.certPEM]);
    expect(api.writes.every((w) => w.who === 'writer')).toBe(true);
    await Promise.all([reader.cert.stop(), writer.cert.stop()]);
  });

  it('replicas that agree leave the APIService and the Secret alone, however often they look', async () => {
    const api = new FakeApi();
    const clock = new FakeClock(t0);
    let leader = 'a';
    const a = replica(api, 'a', clock, () => leader === 'a');
    await a.cert.first;
    const b = replica(api, 'b', clock, () => leader === 'b');
    await b.cert.first;
    const rv = api.apiService?.metadata?.resourceVersion;
    const writes = api.writes.length;
    for (let i = 0; i < 10; i++) {
      leader = i % 2 === 0 ? 'a' : 'b'; // leadership moving between them changes nothing either
      clock.advance(3_600_000);
      await Promise.all([a.cert.sync(), b.cert.sync()]);
    }
    expect(api.apiService?.metadata?.resourceVersion).toBe(rv);
    expect(api.writes.length).toBe(writes);
    await Promise.all([a.cert.stop(), b.cert.stop()]);
  });

  it('a rotation makes the APIService trust the new CA beside the old before the Secret changes, and every replica follows', async () => {
    const api = new FakeApi();
    const clock = new FakeClock(t0);
    const writer = replica(api, 'writer', clock, () => true);
    const reader = replica(api, 'reader', clock, () => false);
    // What the writer serves is what it issued (with its rotation time).
    const first = (await writer.cert.first) as IssuedCertificate;
    await reader.cert.sync();
    expect(writer.cert.rotateAt()).toBe(first.rotateAt);

    clock.advance(first.rotateAt + 1 - clock.now());
    const before = api.writes.length;
    await writer.cert.sync();
    const rotation = api.writes.slice(before);
    expect(rotation.map((w) => w.what)).toEqual(['APIService', 'Secret']);
    const next = writer.served.at(-1)! as IssuedCertificate;
    expect(writer.cert.rotateAt()).toBe(next.rotateAt);
    expect(next.certPEM).not.toBe(first.certPEM);
    expect(rotation[0]!.caBundle).toEqual([next.caPEM, first.caPEM]);
    // Until the reader has looked, it serves the old certificate, which the APIService still trusts.
    expect(reader.served.at(-1)!.certPEM).toBe(first.certPEM);
    await reader.cert.sync();
    expect(reader.served.map((c) => c.certPEM)).toEqual([first.certPEM, next.certPEM]);

    // The next rotation drops the first CA.
    clock.advance(next.rotateAt + 1 - clock.now());
    await writer.cert.sync();
    const third = writer.served.at(-1)!;
    expect(api.caBundle()).toEqual([third.caPEM, next.caPEM]);
    await Promise.all([reader.cert.stop(), writer.cert.stop()]);
  });

  it('a Secret replaced with a certificate it must not serve is never served: readers keep theirs, the writer replaces it', async () => {
    const api = new FakeApi();
    const clock = new FakeClock(t0);
    const writer = replica(api, 'writer', clock, () => false);
    const reader = replica(api, 'reader', clock, () => false);
    let leading = true;
    const leader = replica(api, 'leader', clock, () => leading);
    const good = await leader.cert.first;
    await Promise.all([writer.cert.sync(), reader.cert.sync()]);
    const evil = await issue(t0, ['evil.example.com']);
    const other = await issue();
    const bad: CertSecret[] = [
      certSecret(ns, evil),
      {
        ...certSecret(ns, good),
        data: { ...certSecret(ns, good).data, 'tls.key': certSecret(ns, other).data!['tls.key']! },
      },
      {
        ...certSecret(ns, good),
        data: { ...certSecret(ns, good).data, [CAPEMKey]: certSecret(ns, other).data![CAPEMKey]! },
      },
      { ...certSecret(ns, good), data: { 'tls.crt': 'AAAA', 'tls.key': 'AAAA', [CAPEMKey]: 'AAAA' } },
    ];
    for (const secret of bad) {
      leading = false;
      api.secret = { ...secret, metadata: { ...secret.metadata, resourceVersion: String(++api.rv) } };
      await reader.cert.sync();
      expect(reader.served.map((c) => c.certPEM)).toEqual([good.certPEM]);
      // A replica starting now has nothing to serve until the writer has replaced it.
      const late = replica(api, 'late', clock, () => false);
      await late.cert.sync();
      expect(late.served).toEqual([]);
      await late.cert.stop();
      leading = true;
      await leader.cert.sync();
      const replaced = api.secretCert();
      expect(replaced).not.toBe(
        secret.data?.['tls.crt'] && Buffer.from(secret.data['tls.crt'], 'base64').toString(),
      );
      expect(certAction(api.secret, hosts, clock.now()).kind).toBe('serve');
      // The APIService trusts the certificate the writer put in place of the bad one.
      const served = leader.served.at(-1)!;
      expect(api.caBundle()).toContain(served.caPEM);
    }
    await Promise.all([writer.cert.stop(), reader.cert.stop(), leader.cert.stop()]);
  });
});

describe('--package-api-service-port', () => {
  it('gives the port with --package-api-addr', () => {
    expect(
      packageApiServiceOption({ 'package-api-addr': '0.0.0.0:8443', 'package-api-service-port': '5443' }),
    ).toEqual({ packageApiServicePort: 5443 });
    expect(packageApiServiceOption({ 'package-api-addr': '0.0.0.0:8443' })).toEqual({});
  });

  it.each<[Values, string | RegExp]>([
    [{ 'package-api-service-port': '5443' }, /--package-api-service-port needs --package-api-addr/],
    ...['0', '65536', '-1', '54.3', ' 5443', '0x10', '', '5443;rm'].map(
      (port) =>
        [
          { 'package-api-addr': '0.0.0.0:8443', 'package-api-service-port': port },
          `--package-api-service-port: ${JSON.stringify(port)} is not a port`,
        ] as [Values, string],
    ),
  ])('refuses %j, naming the flag', (values, message) => {
    expect(() => packageApiServiceOption(values)).toThrow(UserError);
    expect(() => packageApiServiceOption(values)).toThrow(message);
  });
});
