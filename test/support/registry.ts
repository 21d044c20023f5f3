/**
 * Real OCI registries for the tests: Debian's `docker-registry` package (the distribution
 * project's registry, v2.8), started on free ports of 127.0.0.1 with a storage folder and a
 * config file of their own. Where the binary is missing and the tests run as root (CI does), it
 * is installed with apt-get, with `apache2-utils` for `htpasswd`, which writes the bcrypt
 * password file the registry's Basic auth reads (bcrypt is all it accepts, and Node has none).
 * Elsewhere `registryAvailable()` says how to install them, for the test to skip with.
 *
 * Kinds: plain HTTP; Basic auth; TLS with a certificate from a CA made here; and Docker's
 * bearer-token flow, with a token server in this process that signs JWTs the registry checks
 * against that server's certificate. Each starts in well under a second; `stop()` takes one down
 * (the registry-down case) and `start()` brings it back on the same port and storage.
 */
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { sign } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { freePort } from '../../src/cluster/ports.js';
import { aptInstalled } from './apt.js';
import { baseRegistryConfig, RegistryBinary, registryProcess } from './docker-registry.js';
import { serverCertificate, testCA } from './certs.js';
import { tempDir } from './temp-dir.js';

const Htpasswd = '/usr/bin/htpasswd';

export type RegistryKind =
  | { kind: 'plain' }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'tls' }
  | { kind: 'token'; username: string; password: string };

export interface TestRegistry {
  /** `127.0.0.1:<port>`: the registry part of an image reference. */
  host: string;
  /** The storage root (`rootdirectory`). */
  storage: string;
  /** The CA certificate (PEM) its TLS certificate is issued by (TLS only). */
  ca?: string;
  /** How many tokens the token server issued (token only). */
  tokensIssued?: () => number;
  /** Where the registry keeps a blob's bytes, to tamper with them. */
  blobPath(digest: string): string;
  /** Takes the registry down (the process ends); `start()` brings it back. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

const running: TestRegistry[] = [];
// Registered in the suite of each test file that imports this module: its registries and token
// servers end with it.
afterAll(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

let installing: Promise<string | undefined> | undefined;

/** Undefined when registries can be started here; otherwise why not and how to fix it. */
export function registryAvailable(log: (line: string) => void = console.log): Promise<string | undefined> {
  installing ??= aptInstalled(
    ['docker-registry', 'apache2-utils'],
    [RegistryBinary, Htpasswd],
    'the OCI registry tests need',
    log,
  );
  return installing;
}

/** Starts a registry of this kind; stop it with `stop()` (the test file's afterAll). */
export async function startRegistry(kind: RegistryKind): Promise<TestRegistry> {
  const dir = await tempDir(`bosun-registry-${kind.kind}-`);
  const storage = join(dir, 'storage');
  await mkdir(storage);
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const config = baseRegistryConfig(storage, host);
  let ca: string | undefined;
  let tokenServer: TokenServer | undefined;
  if (kind.kind === 'tls') {
    const authority = await testCA('bosun test registry CA');
    const serving = await serverCertificate(authority, { ips: ['127.0.0.1'], dns: ['localhost'] });
    await writeFile(join(dir, 'tls.crt'), serving.cert);
    await writeFile(join(dir, 'tls.key'), serving.key, { mode: 0o600 });
    config.push('  tls:', `    certificate: ${join(dir, 'tls.crt')}`, `    key: ${join(dir, 'tls.key')}`);
    ca = authority.certPEM;
  }
  if (kind.kind === 'basic') {
    const { stdout } = await promisify(execFile)(Htpasswd, ['-Bbn', kind.username, kind.password]);
    await writeFile(join(dir, 'htpasswd'), stdout);
    config.push('auth:', '  htpasswd:', '    realm: bosun-test', `    path: ${join(dir, 'htpasswd')}`);
  }
  if (kind.kind === 'token') {
    tokenServer = await startTokenServer(kind.username, kind.password);
    await writeFile(join(dir, 'token-ca.crt'), tokenServer.certPEM);
    config.push(
      'auth:',
      '  token:',
      `    realm: ${tokenServer.realm}`,
      `    service: ${TokenService}`,
      `    issuer: ${TokenIssuer}`,
      `    rootcertbundle: ${join(dir, 'token-ca.crt')}`,
    );
  }
  const { start, stop } = await registryProcess(dir, config, host);
  await start();
  const registry: TestRegistry = {
    host,
    storage,
    ...(ca !== undefined && { ca }),
    ...(tokenServer && { tokensIssued: () => tokenServer.issued }),
    blobPath: (digest) => {
      const hex = digest.slice(digest.indexOf(':') + 1);
      return join(
        storage,
        'docker/registry/v2/blobs',
        digest.slice(0, digest.indexOf(':')),
        hex.slice(0, 2),
        hex,
        'data',
      );
    },
    // The token server stays up with the test file: only the registry goes down.
    stop,
    start,
  };
  running.push(registry);
  return registry;
}

// ---- the token server of Docker's token flow ----

const TokenService = 'bosun-test-registry';
const TokenIssuer = 'bosun-test-token-issuer';

interface TokenServer {
  realm: string;
  certPEM: string;
  issued: number;
  server: Server;
}

const servers: Server[] = [];

/**
 * Answers `GET /token?service=...&scope=repository:<name>:<actions>` as Docker's token spec
 * says: a JWT (ES256, the certificate in `x5c`) granting the asked actions to the user whose
 * Basic credentials are right, pull only to anyone else, and 401 to wrong credentials.
 */
async function startTokenServer(username: string, password: string): Promise<TokenServer> {
  const authority = await testCA('bosun test token issuer');
  const key = await globalThis.crypto.subtle.exportKey('pkcs8', authority.keys.privateKey);
  const keyObject = { key: Buffer.from(key), format: 'der' as const, type: 'pkcs8' as const };
  const x5c = [Buffer.from(authority.cert.rawData).toString('base64')];
  const state: TokenServer = { realm: '', certPEM: authority.certPEM, issued: 0, server: undefined as never };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const auth = req.headers.authorization;
    let user = '';
    if (auth !== undefined) {
      const [u, p] = Buffer.from(auth.replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':');
      if (u !== username || p !== password) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'wrong username or password' }] }),
        );
        return;
      }
      user = u;
    }
    const access = url.searchParams.getAll('scope').flatMap((scope) => {
      const [type, name, actions] = scope.split(':');
      if (type !== 'repository' || !name || !actions) return [];
      const granted = actions.split(',').filter((a) => a === 'pull' || (user !== '' && a === 'push'));
      return [{ type, name, actions: granted }];
    });
    const now = Math.floor(Date.now() / 1000);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const input = `${b64({ typ: 'JWT', alg: 'ES256', x5c })}.${b64({
      iss: TokenIssuer,
      sub: user,
      aud: TokenService,
      exp: now + 300,
      nbf: now - 60,
      iat: now,
      jti: `${now}-${state.issued}`,
      access,
    })}`;
    const signature = sign('sha256', Buffer.from(input), { ...keyObject, dsaEncoding: 'ieee-p1363' });
    state.issued++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ token: `${input}.${signature.toString('base64url')}`, expires_in: 300 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  servers.push(server);
  state.server = server;
  state.realm = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  return state;
}
