import { createPrivateKey, X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CAPEMKey,
  caHash,
  CertificateMinFreshMs,
  CertificateValidityMs,
  checkServingCertificate,
  type IssuedCertificate,
  issueServingCertificate,
  servingHostnames,
} from '../../../src/install/certificates.js';
import { countingEntropy } from './webhooks-support.js';

const day = 24 * 3_600_000;
/** 2026-03-01T10:20:30.456Z: issuing truncates to the second. */
const now = Date.UTC(2026, 2, 1, 10, 20, 30, 456);
const issuedAt = Date.UTC(2026, 2, 1, 10, 20, 30);
const hosts = servingHostnames('gadget-controller-manager-service', 'team-a');

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const secretData = (c: { caPEM: string; certPEM: string; keyPEM: string }) => ({
  [CAPEMKey]: b64(c.caPEM),
  'tls.crt': b64(c.certPEM),
  'tls.key': b64(c.keyPEM),
});

let issued: IssuedCertificate;
let other: IssuedCertificate;
let entropy: ReturnType<typeof countingEntropy>;

beforeAll(async () => {
  entropy = countingEntropy();
  issued = await issueServingCertificate({ hosts, now }, entropy);
  other = await issueServingCertificate({ hosts: servingHostnames('other-service', 'team-a'), now });
});

describe('servingHostnames', () => {
  it('names the Service as OLM does: short, .svc and .svc.cluster.local', () => {
    expect(servingHostnames('svc', 'ns')).toEqual(['svc.ns', 'svc.ns.svc', 'svc.ns.svc.cluster.local']);
  });
});

describe('issueServingCertificate', () => {
  it('signs a serving certificate for exactly the Service hosts, with the first as common name', () => {
    const cert = new X509Certificate(issued.certPEM);
    expect(cert.subjectAltName?.split(', ')).toEqual(hosts.map((h) => `DNS:${h}`));
    expect(cert.subject).toContain(`CN=${hosts[0]}`);
    for (const h of hosts) expect(cert.checkHost(h)).toBe(h);
    expect(cert.checkHost('other-service.team-a.svc')).toBeUndefined();
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // serverAuth only
    expect(cert.ca).toBe(false);
  });

  it('is valid for two years from the second it was issued, as OLM issues them', () => {
    for (const pem of [issued.caPEM, issued.certPEM]) {
      const c = new X509Certificate(pem);
      expect(Date.parse(c.validFrom)).toBe(issuedAt);
      expect(Date.parse(c.validTo)).toBe(issuedAt + 730 * day);
    }
    expect(CertificateValidityMs).toBe(730 * day);
    expect(issued.notAfter).toBe(issuedAt + CertificateValidityMs);
    expect(issued.rotateAt).toBe(issued.notAfter - day);
  });

  it('comes with its own CA, which signed it, and an EC private key that matches it', () => {
    const ca = new X509Certificate(issued.caPEM);
    const cert = new X509Certificate(issued.certPEM);
    expect(ca.ca).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.verify(new X509Certificate(other.caPEM).publicKey)).toBe(false);
    expect(issued.keyPEM).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    const key = createPrivateKey(issued.keyPEM);
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(cert.checkPrivateKey(key)).toBe(true);
    for (const pem of [issued.caPEM, issued.certPEM, issued.keyPEM]) expect(pem.endsWith('\n')).toBe(true);
  });

  it('draws its keys and serial numbers from the entropy it is given', () => {
    expect(entropy.keys).toBe(2);
    expect(entropy.serials).toBe(2);
    expect(new X509Certificate(issued.caPEM).serialNumber).toBe('0100000000000001');
    expect(new X509Certificate(issued.certPEM).serialNumber).toBe('0100000000000002');
  });

  it('refuses to issue for no host', async () => {
    await expect(issueServingCertificate({ hosts: [], now })).rejects.toThrow(/at least one host/);
  });
});

describe('caHash', () => {
  it("is OLM's: the hex SHA-256 of the PEM text", () => {
    expect(caHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(caHash(issued.caPEM)).toMatch(/^[0-9a-f]{64}$/);
    expect(caHash(issued.caPEM)).not.toBe(caHash(other.caPEM));
  });
});

describe('checkServingCertificate', () => {
  const swap = (patch: Record<string, string | undefined>) => {
    const data: Record<string, string> = { ...secretData(issued) };
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) delete data[k];
      else data[k] = v;
    }
    return data;
  };

  it('finds a certificate it issued fresh, due one day before it expires', () => {
    const v = checkServingCertificate(secretData(issued), hosts, now);
    expect(v).toEqual({
      fresh: true,
      certificate: { caPEM: issued.caPEM, certPEM: issued.certPEM, keyPEM: issued.keyPEM },
      rotateAt: issued.rotateAt,
      issuedAt: Math.floor(now / 1000) * 1000,
    });
  });

  it.each([
    { name: 'no Secret data', data: undefined, at: now, reason: 'the Secret has no CA (olmCAKey)' },
    {
      name: 'no CA',
      data: () => swap({ [CAPEMKey]: undefined }),
      at: now,
      reason: 'the Secret has no CA (olmCAKey)',
    },
    {
      name: 'no certificate',
      data: () => swap({ 'tls.crt': undefined }),
      at: now,
      reason: 'the Secret has no certificate (tls.crt)',
    },
    {
      name: 'no key',
      data: () => swap({ 'tls.key': '' }),
      at: now,
      reason: 'the Secret has no private key (tls.key)',
    },
    {
      name: 'a malformed CA',
      data: () => swap({ [CAPEMKey]: b64('not a certificate') }),
      at: now,
      reason: 'the CA (olmCAKey) is not a PEM certificate',
    },
    {
      name: 'a malformed certificate',
      data: () => swap({ 'tls.crt': b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n') }),
      at: now,
      reason: 'the certificate (tls.crt) is not a PEM certificate',
    },
    {
      name: 'a malformed key',
      data: () => swap({ 'tls.key': b64('garbage') }),
      at: now,
      reason: 'the private key (tls.key) is not a PEM private key',
    },
    {
      name: 'a certificate another CA signed',
      data: () => swap({ [CAPEMKey]: b64(other.caPEM) }),
      at: now,
      reason: 'the certificate is not signed by the CA',
    },
    {
      name: 'a certificate for another Service',
      data: () => ({ ...secretData(other) }),
      at: now,
      reason: 'the certificate does not name gadget-controller-manager-service.team-a',
    },
    {
      name: "another certificate's key",
      data: () => swap({ 'tls.key': b64(other.keyPEM) }),
      at: now,
      reason: 'the private key (tls.key) does not belong to the certificate',
    },
    {
      name: 'a clock before the certificates were issued',
      data: () => secretData(issued),
      at: issuedAt - 1,
      reason: /^the CA is not valid before /,
    },
    {
      name: 'a clock one day before expiry',
      data: () => secretData(issued),
      at: issuedAt + CertificateValidityMs - CertificateMinFreshMs,
      reason: /^the CA expires at .* and is due for rotation$/,
    },
    {
      name: 'a clock past expiry',
      data: () => secretData(issued),
      at: issuedAt + CertificateValidityMs + day,
      reason: /due for rotation$/,
    },
  ])('asks for a new certificate given $name', ({ data, at, reason }) => {
    const v = checkServingCertificate(typeof data === 'function' ? data() : data, hosts, at);
    expect(v.fresh).toBe(false);
    if (v.fresh) return;
    if (typeof reason === 'string') expect(v.reason).toBe(reason);
    else expect(v.reason).toMatch(reason);
  });

  it('keeps what it could read of a stale certificate, for the Deployment that still mounts it', () => {
    const v = checkServingCertificate(secretData(issued), hosts, issued.rotateAt);
    expect(v.fresh).toBe(false);
    if (v.fresh) return;
    expect(v.current?.caPEM).toBe(issued.caPEM);
    const missing = checkServingCertificate(swap({ 'tls.crt': undefined }), hosts, now);
    expect(missing.fresh === false && missing.current).toBeUndefined();
  });

  it('is fresh exactly from issue until one day before expiry (property)', () => {
    const data = secretData(issued);
    const last = CertificateValidityMs - CertificateMinFreshMs;
    fc.assert(
      fc.property(fc.integer({ min: -day, max: CertificateValidityMs + day }), (offset) => {
        const v = checkServingCertificate(data, hosts, issuedAt + offset);
        expect(v.fresh).toBe(offset >= 0 && offset < last);
      }),
    );
  });
});
