/**
 * Certificates for tests of TLS client authentication: a CA, and client certificates from it with
 * the name, key usage and validity a test wants (to forge what an aggregator would never present).
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface TestCA {
  certPEM: string;
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
}

export interface KeyPairPEM {
  cert: string;
  key: string;
}

const keyPair = async () =>
  (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;

const privatePEM = async (key: webcrypto.CryptoKey) =>
  x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

const serial = () =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
    .toString('hex')
    .replace(/^./, '1');

export async function testCA(commonName: string): Promise<TestCA> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  return { certPEM: cert.toString('pem'), cert, keys };
}

/** A client certificate from `ca` (or self-signed when `ca` is undefined). */
export async function clientCertificate(
  ca: TestCA | undefined,
  commonName: string,
  opts: { usage?: 'client' | 'server'; expired?: boolean } = {},
): Promise<KeyPairPEM> {
  const keys = await keyPair();
  const notBefore = new Date(Date.now() - (opts.expired ? 3 : 1) * 86_400_000);
  const notAfter = new Date(opts.expired ? Date.now() - 86_400_000 : Date.now() + 86_400_000);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${commonName}`,
    issuer: ca ? ca.cert.subject : `CN=${commonName}`,
    notBefore,
    notAfter,
    signingAlgorithm: alg,
    publicKey: keys.publicKey,
    signingKey: ca ? ca.keys.privateKey : keys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([
        opts.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
      ]),
    ],
  });
  return { cert: cert.toString('pem'), key: await privatePEM(keys.privateKey) };
}

/** A serving certificate from `ca` for these IP addresses and DNS names (subjectAltName). */
export async function serverCertificate(
  ca: TestCA,
  names: { ips?: string[]; dns?: string[] },
): Promise<KeyPairPEM> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${names.dns?.[0] ?? names.ips?.[0] ?? 'server'}`,
    issuer: ca.cert.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: alg,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...(names.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
        ...(names.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
      ]),
    ],
  });
  return { cert: cert.toString('pem'), key: await privatePEM(keys.privateKey) };
}
