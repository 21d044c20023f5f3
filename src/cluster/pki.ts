// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * Certificates for a local control plane: one cluster CA (serving and client certificates), a
 * front-proxy CA for the aggregation layer, and a service-account signing key. ECDSA P-256 keeps
 * generation instant. Everything lives only as long as the control plane's state folder.
 */

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const validityDays = 365;

export interface KeyPairPem {
  cert: string;
  key: string;
}

export interface Pki {
  ca: KeyPairPem;
  apiserver: KeyPairPem;
  admin: KeyPairPem;
  controllerManager: KeyPairPem;
  scheduler: KeyPairPem;
  frontProxyCA: KeyPairPem;
  frontProxyClient: KeyPairPem;
  serviceAccount: { publicKey: string; privateKey: string };
}

interface Issued {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privatePem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function publicPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('spki', key);
  return x509.PemConverter.encode(der, 'PUBLIC KEY');
}

function serial(): string {
  // Positive 16-byte serial (first bit clear), as RFC 5280 asks.
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = b[0]! & 0x7f;
  return Buffer.from(b).toString('hex');
}

function validity(): { notBefore: Date; notAfter: Date } {
  const notBefore = new Date(Date.now() - 60_000);
  return { notBefore, notAfter: new Date(notBefore.getTime() + validityDays * 86_400_000) };
}

async function selfSignedCA(commonName: string): Promise<Issued> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    ...validity(),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys };
}

interface LeafSpec {
  commonName: string;
  organization?: string;
  server?: { dns: string[]; ips: string[] };
  client?: boolean;
}

async function issue(ca: Issued, spec: LeafSpec): Promise<Issued> {
  const keys = await keyPair();
  const usages: string[] = [];
  if (spec.server) usages.push(x509.ExtendedKeyUsage.serverAuth);
  if (spec.client) usages.push(x509.ExtendedKeyUsage.clientAuth);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension(usages),
    await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
  ];
  if (spec.server) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension([
        ...spec.server.dns.map((value) => ({ type: 'dns' as const, value })),
        ...spec.server.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    );
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: spec.organization ? `CN=${spec.commonName}, O=${spec.organization}` : `CN=${spec.commonName}`,
    issuer: ca.cert.subject,
    ...validity(),
    signingAlgorithm: alg,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions,
  });
  return { cert, keys };
}

async function pem(i: Issued): Promise<KeyPairPem> {
  return { cert: i.cert.toString('pem'), key: await privatePem(i.keys.privateKey) };
}

/** The in-cluster address of the `kubernetes` Service: the first address of the service range. */
export const kubernetesServiceIP = '10.0.0.1';

export async function generatePki(): Promise<Pki> {
  const ca = await selfSignedCA('bosun-local-ca');
  const frontProxyCA = await selfSignedCA('bosun-front-proxy-ca');
  const sa = await keyPair();
  const [apiserver, admin, controllerManager, scheduler, frontProxyClient] = await Promise.all([
    issue(ca, {
      commonName: 'kube-apiserver',
      server: {
        dns: [
          'localhost',
          'kubernetes',
          'kubernetes.default',
          'kubernetes.default.svc',
          'kubernetes.default.svc.cluster.local',
        ],
        ips: ['127.0.0.1', kubernetesServiceIP],
      },
    }),
    issue(ca, { commonName: 'bosun-admin', organization: 'system:masters', client: true }),
    issue(ca, { commonName: 'system:kube-controller-manager', client: true }),
    issue(ca, { commonName: 'system:kube-scheduler', client: true }),
    issue(frontProxyCA, { commonName: 'front-proxy-client', client: true }),
  ]);
  return {
    ca: await pem(ca),
    apiserver: await pem(apiserver),
    admin: await pem(admin),
    controllerManager: await pem(controllerManager),
    scheduler: await pem(scheduler),
    frontProxyCA: await pem(frontProxyCA),
    frontProxyClient: await pem(frontProxyClient),
    serviceAccount: { publicKey: await publicPem(sa.publicKey), privateKey: await privatePem(sa.privateKey) },
  };
}
