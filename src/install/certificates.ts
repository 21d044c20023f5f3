/**
 * Serving certificates for operators that serve admission webhooks, conversion webhooks or
 * aggregated API services, as OLM issues them (pkg/controller/install/certresources.go):
 * - one self-signed CA and one serving certificate signed by it per Deployment that serves, for
 *   the hosts `<service>.<namespace>`, `<service>.<namespace>.svc` and
 *   `<service>.<namespace>.svc.cluster.local`, ECDSA P-256 keys;
 * - both valid for two years from the moment they are issued, and rotated one day before either
 *   expires (or at once when they are missing, malformed, not yet valid, not signed by the CA, do
 *   not name every host, or the key does not match the certificate);
 * - kept in a Secret as `tls.crt`, `tls.key` and the CA as `olmCAKey`; the CA's hash
 *   (`olmcahash`, the SHA-256 of its PEM) goes on the Secret and the Deployment's pod template, so
 *   a new CA rolls the Deployment.
 * Pure: the clock comes in as `now` (milliseconds) and the randomness (keys, serial numbers) as a
 * `CertificateEntropy`, so tests can pin both.
 */
// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API.
import { createHash, createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

const hour = 3_600_000;
/** How long a certificate is valid: two years, as OLM's `DefaultCertValidFor`. */
export const CertificateValidityMs = 730 * 24 * hour;
/** How long before expiry a certificate is replaced: one day, as OLM's `DefaultCertMinFresh`. */
export const CertificateMinFreshMs = 24 * hour;

/** The Secret key holding the CA certificate (OLM's name). */
export const CAPEMKey = 'olmCAKey';
/** The annotation carrying the CA's hash, on the Secret and on the pod template. */
export const CAHashAnnotation = 'olmcahash';
/** The organization named in the certificates Bosun issues. */
export const CertificateOrganization = 'Bosun';

/** A CA and the serving certificate it signed, as PEM. */
export interface ServingCertificate {
  caPEM: string;
  certPEM: string;
  /** The serving certificate's private key (SEC1 `EC PRIVATE KEY`, as OLM writes it). */
  keyPEM: string;
}

/** A serving certificate and when it has to be replaced (clock milliseconds). */
export interface IssuedCertificate extends ServingCertificate {
  notAfter: number;
  rotateAt: number;
}

/** The hosts a Service's serving certificate names. */
export function servingHostnames(service: string, namespace: string): string[] {
  return [
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
  ];
}

/** OLM's CA hash: the hex SHA-256 of the CA's PEM text. */
export function caHash(caPEM: string): string {
  return createHash('sha256').update(caPEM, 'utf8').digest('hex');
}

/** When a certificate valid until `notAfter` is replaced. */
export function rotationTime(notAfter: number): number {
  return notAfter - CertificateMinFreshMs;
}

export type CertificateVerdict =
  | {
      fresh: true;
      certificate: ServingCertificate;
      rotateAt: number;
      /** When the certificate was issued (its notBefore, clock milliseconds). */
      issuedAt: number;
    }
  | {
      fresh: false;
      /** Why a new certificate is needed, for logs and the CSV's message. */
      reason: string;
      /**
       * The certificate as stored, when it could be read at all: what the running Deployment
       * mounts until the rotation is done.
       */
      current?: ServingCertificate;
    };

/**
 * Whether the certificate stored in a Secret's `data` (base64 values, as the API returns them)
 * can still be served for `hosts` at `now`, or has to be replaced, and why (OLM's
 * `shouldRotateCerts`, which also checks the private key here).
 */
export function checkServingCertificate(
  data: Readonly<Record<string, string>> | undefined,
  hosts: readonly string[],
  now: number,
): CertificateVerdict {
  const text = (key: string) => {
    const v = data?.[key];
    return v === undefined || v === '' ? undefined : Buffer.from(v, 'base64').toString('utf8');
  };
  const caPEM = text(CAPEMKey);
  const certPEM = text('tls.crt');
  const keyPEM = text('tls.key');
  if (caPEM === undefined) return { fresh: false, reason: `the Secret has no CA (${CAPEMKey})` };
  if (certPEM === undefined) return { fresh: false, reason: 'the Secret has no certificate (tls.crt)' };
  if (keyPEM === undefined) return { fresh: false, reason: 'the Secret has no private key (tls.key)' };
  const current: ServingCertificate = { caPEM, certPEM, keyPEM };
  const stale = (reason: string): CertificateVerdict => ({ fresh: false, reason, current });

  let ca: X509Certificate;
  let cert: X509Certificate;
  try {
    ca = new X509Certificate(caPEM);
  } catch {
    return stale(`the CA (${CAPEMKey}) is not a PEM certificate`);
  }
  try {
    cert = new X509Certificate(certPEM);
  } catch {
    return stale('the certificate (tls.crt) is not a PEM certificate');
  }
  for (const [what, c] of [
    ['CA', ca],
    ['certificate', cert],
  ] as const) {
    const from = Date.parse(c.validFrom);
    const to = Date.parse(c.validTo);
    if (now < from) return stale(`the ${what} is not valid before ${c.validFrom}`);
    if (now >= rotationTime(to)) return stale(`the ${what} expires at ${c.validTo} and is due for rotation`);
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) {
    return stale('the certificate is not signed by the CA');
  }
  for (const host of hosts) {
    if (cert.checkHost(host) === undefined) return stale(`the certificate does not name ${host}`);
  }
  try {
    if (!cert.checkPrivateKey(createPrivateKey(keyPEM))) {
      return stale('the private key (tls.key) does not belong to the certificate');
    }
  } catch {
    return stale('the private key (tls.key) is not a PEM private key');
  }
  const rotateAt = rotationTime(Math.min(Date.parse(ca.validTo), Date.parse(cert.validTo)));
  return { fresh: true, certificate: current, rotateAt, issuedAt: Date.parse(cert.validFrom) };
}

/** Where new keys and serial numbers come from. */
export interface CertificateEntropy {
  /** A new ECDSA P-256 key pair (extractable, for signing). */
  keyPair(): Promise<webcrypto.CryptoKeyPair>;
  /** `n` random bytes. */
  bytes(n: number): Uint8Array;
}

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const crypto = webcrypto as unknown as Parameters<typeof X509.X509CertificateGenerator.create>[1];

/** The platform's cryptographic randomness. */
export const systemEntropy: CertificateEntropy = {
  keyPair: async () =>
    (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair,
  bytes: (n) => webcrypto.getRandomValues(new Uint8Array(n)),
};

/**
 * The certificate library (@peculiar/x509, with the reflect-metadata polyfill it needs first),
 * loaded when a certificate is first issued: 4 MiB of the manager's memory once loaded, which a
 * manager that installs no webhook or API service and serves no PackageManifest API never needs.
 */
async function loadX509(): Promise<typeof X509> {
  await import('reflect-metadata');
  return import('@peculiar/x509');
}

/**
 * A new CA and a serving certificate it signs for `hosts` (the first is the subject's common
 * name), valid from `now` (to the second) for two years.
 */
export async function issueServingCertificate(
  input: { hosts: readonly string[]; now: number },
  entropy: CertificateEntropy = systemEntropy,
): Promise<IssuedCertificate> {
  const { hosts } = input;
  if (hosts.length === 0) throw new Error('a serving certificate needs at least one host');
  const notBefore = new Date(Math.floor(input.now / 1000) * 1000);
  const notAfter = new Date(notBefore.getTime() + CertificateValidityMs);
  const organization = `O=${CertificateOrganization}`;

  const x509 = await loadX509();
  const caKeys = await entropy.keyPair();
  const caSerial = serialNumber(entropy);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: caSerial,
      name: `CN=bosun-selfsigned-${caSerial}, ${organization}`,
      notBefore,
      notAfter,
      signingAlgorithm: algorithm,
      keys: caKeys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  const keys = await entropy.keyPair();
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(entropy),
      subject: `CN=${hosts[0]}, ${organization}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      signingAlgorithm: algorithm,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(hosts.map((value) => ({ type: 'dns' as const, value }))),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const keyPEM = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' })
    .export({ format: 'pem', type: 'sec1' })
    .toString();
  return {
    caPEM: withNewline(ca.toString('pem')),
    certPEM: withNewline(cert.toString('pem')),
    keyPEM,
    notAfter: notAfter.getTime(),
    rotateAt: rotationTime(notAfter.getTime()),
  };
}

/** A positive 63-bit serial number in hex, as OLM draws one. */
function serialNumber(entropy: CertificateEntropy): string {
  const b = entropy.bytes(8);
  b[0] = (b[0] ?? 0) & 0x7f;
  if (b[0] === 0) b[0] = 1; // no leading zero byte: the DER integer stays 8 bytes and positive
  return Buffer.from(b).toString('hex');
}

/** PEM text ends with a line break, as Go's encoder writes it. */
function withNewline(pem: string): string {
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}
