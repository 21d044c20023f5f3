/**
 * Real users for tests against the run's control plane: a ServiceAccount with the role bindings a
 * test gives it and a token the TokenRequest API issues for it, a kubeconfig that carries only that
 * token, and the TLS material of the admin kubeconfig.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { rawHttps } from './raw-request.js';
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

/**
 * A ClusterRole that reads what the web catalog shows of a namespace (OLM's kinds and
 * PackageManifests), as OLM's `aggregate-olm-view` grants it; bound in a namespace, it is what a
 * user there needs to see that namespace's installs; with `namespaces`, bound cluster-wide, it
 * also lists the namespaces. Deleted by the caller.
 */
export async function olmReaderRole(
  client: KubeClient,
  name: string,
  opts: { namespaces?: boolean } = {},
): Promise<void> {
  await client.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [
        {
          apiGroups: ['operators.coreos.com'],
          resources: [
            'subscriptions',
            'clusterserviceversions',
            'installplans',
            'operatorgroups',
            'catalogsources',
          ],
          verbs: ['get', 'list', 'watch'],
        },
        {
          apiGroups: ['packages.operators.coreos.com'],
          resources: ['packagemanifests', 'packagemanifests/icon'],
          verbs: ['get', 'list', 'watch'],
        },
        ...(opts.namespaces
          ? [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }]
          : []),
      ],
    },
  });
}

/** How many TokenReviews the API server has answered so far, from its own metrics. */
export async function tokenReviewsServed(adminKubeconfig: string): Promise<number> {
  const admin = await adminTls(adminKubeconfig);
  const res = await rawHttps(admin.server, '/metrics', {
    ...(admin.cert ? { cert: admin.cert, key: admin.key! } : {}),
    ...(admin.ca ? { ca: admin.ca } : {}),
  });
  if (res.status !== 200)
    throw new Error(`the API server's /metrics: ${res.status} ${res.body.slice(0, 200)}`);
  let total = 0;
  for (const line of res.body.split('\n'))
    if (line.startsWith('apiserver_request_total{') && line.includes('resource="tokenreviews"'))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}
