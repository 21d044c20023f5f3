import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clusterAccess } from '../../../src/kube/access.js';
import {
  inClusterKubeconfig,
  KubeconfigError,
  parseKubeconfig,
  readKubeconfigFiles,
} from '../../../src/kube/kubeconfig.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bosun-kubeconfig-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

function config(user: string, cluster = 'server: https://10.0.0.1:6443'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: ctx',
    'contexts:',
    '- name: ctx',
    '  context: {cluster: c, user: u, namespace: team-a}',
    'clusters:',
    '- name: c',
    '  cluster:',
    ...cluster.split('\n').map((l) => `    ${l}`),
    'users:',
    '- name: u',
    '  user:',
    ...user.split('\n').map((l) => `    ${l}`),
    '',
  ].join('\n');
}

describe('reading a kubeconfig as kubectl does', () => {
  it('reads the current context, its cluster, its user and its namespace', () => {
    const c = parseKubeconfig(
      config('token: abc', 'server: https://10.0.0.1:6443/\ninsecure-skip-tls-verify: true'),
      'k',
    );
    expect(c.context).toEqual({ name: 'ctx', cluster: 'c', user: 'u', namespace: 'team-a' });
    expect(c.cluster).toEqual({ server: 'https://10.0.0.1:6443', insecureSkipTLSVerify: true });
    expect(c.user).toEqual({ token: 'abc' });
  });

  it('reads certificates from data fields, or from files relative to the kubeconfig', async () => {
    await mkdir(join(dir, 'pki'));
    await writeFile(join(dir, 'pki', 'ca.crt'), 'CA FROM FILE');
    await writeFile(join(dir, 'pki', 'client.key'), 'KEY FROM FILE');
    const path = join(dir, 'config');
    await writeFile(
      path,
      config(
        `client-certificate-data: ${b64('CERT FROM DATA')}\nclient-certificate: missing.crt\nclient-key: pki/client.key`,
        'server: https://10.0.0.1:6443\ncertificate-authority: pki/ca.crt\ntls-server-name: api.internal',
      ),
    );
    const c = readKubeconfigFiles([path]);
    expect(c.cluster.ca?.toString()).toBe('CA FROM FILE');
    expect(c.cluster.tlsServerName).toBe('api.internal');
    expect(c.user.clientCertificate?.toString()).toBe('CERT FROM DATA');
    expect(c.user.clientKey?.toString()).toBe('KEY FROM FILE');
  });

  it('names the file a certificate cannot be read from', async () => {
    const path = join(dir, 'config');
    await writeFile(path, config('client-key: nowhere.key'));
    expect(() => readKubeconfigFiles([path])).toThrow(
      new RegExp(`u: client-key ${join(dir, 'nowhere.key')}: ENOENT`),
    );
  });

  it('merges several files with the first winning, as KUBECONFIG lists them', async () => {
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    await writeFile(a, config('token: from-a', 'server: https://a:6443'));
    await writeFile(
      b,
      [
        'current-context: other',
        'contexts: [{name: other, context: {cluster: c2, user: u2}}, {name: ctx, context: {cluster: c2, user: u2}}]',
        'clusters: [{name: c, cluster: {server: "https://b:6443"}}, {name: c2, cluster: {server: "https://c2:6443"}}]',
        'users: [{name: u, user: {token: from-b}}, {name: u2, user: {token: u2}}]',
      ].join('\n'),
    );
    const c = readKubeconfigFiles([a, b]);
    expect(c.context.name).toBe('ctx');
    expect(c.cluster.server).toBe('https://a:6443');
    expect(c.user.token).toBe('from-a');
    // The second file's current-context is not used, but its definitions are there to be named.
    const onlyB = readKubeconfigFiles([b]);
    expect(onlyB.cluster.server).toBe('https://c2:6443');
  });

  it.each([
    ['no current context', 'clusters: []', /has no current-context/],
    ['an undefined context', 'current-context: nope', /current-context nope is not defined/],
    [
      'a cluster without a server',
      'current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {}}]',
      /context x names cluster c, which has no server/,
    ],
    [
      'an undefined user',
      'current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "https://x"}}]',
      /context x names user u, which is not defined/,
    ],
    ['a list that is not one', 'clusters: {a: b}', /clusters: expected a list/],
    ['text that is not YAML', 'clusters: [\n', /invalid YAML/],
  ])('refuses %s', (_, text, message) => {
    expect(() => parseKubeconfig(text, 'k')).toThrow(KubeconfigError);
    expect(() => parseKubeconfig(text, 'k')).toThrow(message);
  });
});

describe('the credentials of each request', () => {
  it('sends a bearer token, and trusts the CA of the kubeconfig', async () => {
    const access = clusterAccess(
      parseKubeconfig(
        config('token: abc', `server: https://10.0.0.1:6443\ncertificate-authority-data: ${b64('CA')}`),
        'k',
      ),
    );
    const creds = await access.credentials();
    expect(creds.headers).toEqual({ Authorization: 'Bearer abc' });
    expect(creds.tls.ca?.toString()).toBe('CA');
    expect(creds.tls.rejectUnauthorized).toBe(true);
    expect(access.namespace).toBe('team-a');
  });

  it('sends a user name and password as basic auth', async () => {
    const access = clusterAccess(parseKubeconfig(config('username: ann\npassword: s3cret'), 'k'));
    expect((await access.credentials()).headers.Authorization).toBe(`Basic ${b64('ann:s3cret')}`);
  });

  it('reads a token file again once a minute, so a rotated token is used', async () => {
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'first\n');
    let now = 0;
    const access = clusterAccess(parseKubeconfig(config(`tokenFile: ${tokenFile}`), 'k'), () => now);
    expect((await access.credentials()).headers.Authorization).toBe('Bearer first');
    await writeFile(tokenFile, 'second\n');
    now = 59_000;
    expect((await access.credentials()).headers.Authorization).toBe('Bearer first');
    now = 60_000;
    expect((await access.credentials()).headers.Authorization).toBe('Bearer second');
  });

  it('runs an exec plugin through client-node, and uses the credential it prints', async () => {
    const plugin = join(dir, 'plugin.sh');
    await writeFile(
      plugin,
      '#!/bin/sh\necho \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}\'\n',
    );
    await chmod(plugin, 0o755);
    const path = join(dir, 'config');
    await writeFile(
      path,
      config(
        `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${plugin}\n  interactiveMode: Never`,
      ),
    );
    const c = readKubeconfigFiles([path]);
    expect(c.user.dynamic).toBe('exec');
    const creds = await clusterAccess(c).credentials();
    expect(creds.headers.Authorization).toBe('Bearer from-plugin');
  });
});

describe('in cluster', () => {
  it('uses the service address from the environment, the mounted CA and the mounted token', async () => {
    await writeFile(join(dir, 'token'), 'sa-token');
    await writeFile(join(dir, 'ca.crt'), 'MOUNTED CA');
    const c = inClusterKubeconfig(join(dir, 'token'), {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    });
    expect(c.cluster.server).toBe('https://10.96.0.1:443');
    expect(c.cluster.ca?.toString()).toBe('MOUNTED CA');
    const creds = await clusterAccess(c).credentials();
    expect(creds.headers.Authorization).toBe('Bearer sa-token');
  });

  it('brackets an IPv6 service address', () => {
    const c = inClusterKubeconfig(join(dir, 'token'), {
      KUBERNETES_SERVICE_HOST: 'fd00::1',
      KUBERNETES_SERVICE_PORT: '443',
    });
    expect(c.cluster.server).toBe('https://[fd00::1]:443');
  });

  it('says what is missing when the service address is not in the environment', () => {
    expect(() => inClusterKubeconfig(join(dir, 'token'), {})).toThrow(/KUBERNETES_SERVICE_HOST/);
  });
});

describe("the manager's memory", () => {
  it('never loads client-node with static credentials: its generated API client alone is some 80 MiB', async () => {
    // A child process records every module it resolves while it loads the manager and the CLI
    // and sends a request with a kubeconfig of static credentials.
    const path = join(dir, 'config');
    await writeFile(path, config('token: abc', 'server: https://127.0.0.1:1'));
    const root = new URL('../../../', import.meta.url).pathname;
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { seen.push(specifier); return next(specifier, context); } });
      await import(${JSON.stringify(join(root, 'dist/cli/main.js'))});
      await import(${JSON.stringify(join(root, 'dist/manager/manager.js'))});
      const { connectToCluster } = await import(${JSON.stringify(join(root, 'dist/kube/config.js'))});
      await connectToCluster({ path: ${JSON.stringify(path)}, timeoutMs: 2000 }).catch(() => undefined);
      console.log(JSON.stringify(seen));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    const seen = JSON.parse(stdout) as string[];
    expect(seen.length).toBeGreaterThan(100);
    expect(seen.filter((s) => s.includes('@kubernetes/client-node'))).toEqual([]);
  });
});
