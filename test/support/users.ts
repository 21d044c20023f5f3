/**
 * Real users for tests against the run's control plane: a ServiceAccount with the role bindings a
 * test gives it and a token the TokenRequest API issues for it, a kubeconfig that carries only that
 * token, and HTTPS requests with whatever headers and client certificate a test forges.
 */
import { request as httpsRequest } from 'node:https';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { tempDir } from './temp-dir.js';

export interface Binding {
  /** The ClusterRole to bind. */
  role: string;
  /** Bound in this namespace (a RoleBinding); cluster-wide (a ClusterRoleBinding) when absent. */
  namespace?: string;
}

/**
 * ServiceAccount `name` in `namespace`, bound as `bindings` say, and a token for it (an hour).
 * ClusterRoleBindings are named after the ServiceAccount and left for the caller to delete.
 */
export async function serviceAccountToken(
  client: KubeClient,
  namespace: string,
  name: string,
  bindings: Binding[] = [],
): Promise<string> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  for (const [i, b] of bindings.entries()) {
    const subject = { kind: 'ServiceAccount', name, namespace };
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: b.role };
    await client.request({
      method: 'POST',
      path: b.namespace
        ? `/apis/rbac.authorization.k8s.io/v1/namespaces/${b.namespace}/rolebindings`
        : '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: b.namespace ? 'RoleBinding' : 'ClusterRoleBinding',
        metadata: { name: b.namespace ? `${name}-${i}` : `${namespace}-${name}-${i}` },
        roleRef,
        subjects: [subject],
      },
    });
  }
  const issued = await client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    },
  });
  return issued.status.token;
}

/** A kubeconfig for the admin kubeconfig's cluster that authenticates with `token` only. */
export async function tokenKubeconfig(adminKubeconfig: string, token: string): Promise<string> {
  const { access } = loadKubeConfig({ path: adminKubeconfig });
  const { tls } = await access.credentials();
  const ca = tls.ca ? Buffer.from(String(tls.ca)).toString('base64') : undefined;
  const file = join(await tempDir('bosun-user-'), 'kubeconfig');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: { server: access.server, ...(ca ? { 'certificate-authority-data': ca } : {}) },
      },
    ],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  };
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

/** The admin kubeconfig's TLS material (its CA and client certificate), for forging requests. */
export async function adminTls(
  adminKubeconfig: string,
): Promise<{ server: string; ca?: string; cert?: string; key?: string }> {
  const { access } = loadKubeConfig({ path: adminKubeconfig });
  const { tls } = await access.credentials();
  const text = (v: unknown) => (v === undefined ? undefined : String(v));
  return {
    server: access.server,
    ...(tls.ca ? { ca: text(tls.ca)! } : {}),
    ...(tls.cert ? { cert: text(tls.cert)! } : {}),
    ...(tls.key ? { key: text(tls.key)! } : {}),
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTPS request exactly as given: the target sent as it is (no URL normalisation), any headers,
 * any client certificate. The server's certificate is checked against `ca` when given.
 */
export function rawHttps(
  base: string,
  target: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    cert?: string;
    key?: string;
    ca?: string;
  } = {},
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: url.hostname,
        port: url.port,
        method: opts.method ?? 'GET',
        path: target,
        headers: opts.headers ?? {},
        ...(opts.cert ? { cert: opts.cert, key: opts.key } : {}),
        ...(opts.ca ? { ca: opts.ca } : { rejectUnauthorized: false }),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
