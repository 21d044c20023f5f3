/**
 * The serving certificate that every replica of the manager shares when the PackageManifest API
 * is reached through one Service selecting them all (deploy/'s `bosun-packageserver`): kept in
 * the Secret `<global namespace>/bosun-packageserver-cert`, in the layout OLM keeps its
 * packageserver's (`tls.crt`, `tls.key` and the CA as `olmCAKey`, a `kubernetes.io/tls` Secret).
 *
 * One replica writes (the leader, or the only one): it creates the Secret when there is none and
 * replaces it a day before the certificate expires (OLM's `DefaultCertMinFresh`), each time naming
 * the resourceVersion it read, so two writers never both win. Every replica serves what the
 * Secret holds and follows it when it changes. Pure: what to do with what was read.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { KubeObject } from '../../apis/meta.js';
import { CAPEMKey, checkServingCertificate, type ServingCertificate } from '../../install/certificates.js';

export const CertSecretName = 'bosun-packageserver-cert';

export interface CertSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** What a replica does with the Secret it read (undefined: there is none). */
export type CertAction =
  /** Serve this certificate; `due` when the writer should replace it (it is still valid). */
  | { kind: 'serve'; certificate: ServingCertificate; rotateAt?: number; due?: string }
  /** There is nothing servable: the writer issues one, a reader waits for it. */
  | { kind: 'missing'; reason: string };

/**
 * The Secret's verdict: a fresh certificate is served until its rotation time; one that is due
 * for rotation but still valid and matching is served on until the writer has replaced it (so a
 * reader never stops serving while waiting); anything else (absent, malformed, expired, not
 * naming the Service, a key of another certificate) is missing.
 */
export function certAction(
  secret: CertSecret | undefined,
  hosts: readonly string[],
  now: number,
): CertAction {
  if (!secret) return { kind: 'missing', reason: `the Secret ${CertSecretName} does not exist` };
  const verdict = checkServingCertificate(secret.data, hosts, now);
  if (verdict.fresh) return { kind: 'serve', certificate: verdict.certificate, rotateAt: verdict.rotateAt };
  if (verdict.current && stillServable(verdict.current, hosts, now))
    return { kind: 'serve', certificate: verdict.current, due: verdict.reason };
  return { kind: 'missing', reason: `the Secret ${CertSecretName}: ${verdict.reason}` };
}

/**
 * Valid now (not only before its rotation time), for every host, signed by the CA, and the key is
 * the certificate's: everything checkServingCertificate checks but the rotation time.
 */
function stillServable(c: ServingCertificate, hosts: readonly string[], now: number): boolean {
  try {
    const ca = new X509Certificate(c.caPEM);
    const cert = new X509Certificate(c.certPEM);
    const valid = (x: X509Certificate) => now >= Date.parse(x.validFrom) && now < Date.parse(x.validTo);
    return (
      valid(ca) &&
      valid(cert) &&
      cert.checkIssued(ca) &&
      cert.verify(ca.publicKey) &&
      hosts.every((h) => cert.checkHost(h) !== undefined) &&
      cert.checkPrivateKey(createPrivateKey(c.keyPEM))
    );
  } catch {
    return false;
  }
}

/**
 * The Secret holding `cert`; `resourceVersion` (of the Secret read) makes the write conditional:
 * the API server refuses it with 409 when another replica wrote meanwhile.
 */
export function certSecret(
  namespace: string,
  cert: ServingCertificate,
  resourceVersion?: string,
): CertSecret {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: CertSecretName,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'bosun' },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(cert.certPEM), 'tls.key': b64(cert.keyPEM), [CAPEMKey]: b64(cert.caPEM) },
  };
}

/** The PEM certificates of a bundle, each ending with a line break. */
export function pemBlocks(bundle: string): string[] {
  return [...bundle.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map(
    (m) => `${m[0]}\n`,
  );
}

/**
 * The APIService's `caBundle` for a Secret's CA: the bundle it has when that already trusts the
 * CA (so replicas reading the same Secret never rewrite it), else the CA alone. A rotation sets
 * the new CA and the old one together first (rotationBundle), so connections made with either are
 * accepted while replicas move over; the next rotation drops the old one.
 */
export function caBundleFor(live: string | undefined, caPEM: string): string {
  const want = normalize(caPEM);
  if (live && pemBlocks(live).some((b) => normalize(b) === want)) return live;
  return caPEM;
}

/** The bundle written before a new certificate is served: the new CA, then the one it replaces. */
export function rotationBundle(nextCA: string, currentCA: string | undefined): string {
  return currentCA && normalize(currentCA) !== normalize(nextCA) ? nextCA + currentCA : nextCA;
}

const normalize = (pem: string) => pem.replace(/\s+/g, '');
