/**
 * Kubeconfig files, read as kubectl reads them (client-go's `clientcmd` loading rules), into the
 * one context Bosun uses: its cluster (server, CA, TLS server name) and its user.
 *
 * Why not client-node's `KubeConfig`: importing it loads the whole generated API client (about a
 * thousand modules, some 80 MiB of the manager's memory) although Bosun sends its requests itself
 * (client.ts). So static credentials (a token, a token file, a client certificate, a user name and
 * password) and the in-cluster ServiceAccount are read here, and client-node is loaded only for a
 * user whose credentials come from running something: an `exec` plugin or an `auth-provider`
 * (access.ts). The rules followed:
 * - Several files (KUBECONFIG's list) merge with the first file winning: its `current-context`,
 *   and the first definition of each cluster, user and context name.
 * - Relative file paths (`certificate-authority`, `client-certificate`, `client-key`,
 *   `tokenFile`) are relative to the file that names them.
 * - `*-data` fields are base64 and win over the file they replace; `token` wins over `tokenFile`.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parseYamlStream } from '../bundle/yaml.js';
import { isRecord } from '../util/record.js';

export interface KubeconfigCluster {
  server: string;
  /** PEM of the CA to trust, when one is named (else the system's roots). */
  ca?: Buffer;
  insecureSkipTLSVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export interface KubeconfigUser {
  token?: string;
  /** Read again as it changes: projected ServiceAccount tokens are rotated on disk. */
  tokenFile?: string;
  clientCertificate?: Buffer;
  clientKey?: Buffer;
  username?: string;
  password?: string;
  /** Credentials come from running a plugin or an auth provider (client-node does it; access.ts). */
  dynamic?: 'exec' | 'auth-provider';
}

/** The context Bosun talks through, resolved to its cluster and user. */
export interface ResolvedKubeconfig {
  /** The files it came from, in order, or `in-cluster`. */
  files: string[];
  context: { name: string; cluster: string; user: string; namespace?: string };
  cluster: KubeconfigCluster;
  user: KubeconfigUser;
}

/** A kubeconfig that cannot be used, with what is wrong; loadKubeConfig words it for the user. */
export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

interface Named {
  name: string;
  value: Record<string, unknown>;
  /** The directory of the file that defined it, for relative paths. */
  dir: string;
  file: string;
}

interface Merged {
  currentContext?: string;
  clusters: Map<string, Named>;
  users: Map<string, Named>;
  contexts: Map<string, Named>;
}

/** Merges kubeconfig files (first wins) and resolves the current context. */
export function readKubeconfigFiles(paths: string[]): ResolvedKubeconfig {
  const merged: Merged = { clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const path of paths) mergeFile(merged, path, readFileSync(path, 'utf8'));
  return resolveContext(merged, paths);
}

/** The same, from text already read (tests, and files named by path for messages). */
export function parseKubeconfig(text: string, path: string): ResolvedKubeconfig {
  const merged: Merged = { clusters: new Map(), users: new Map(), contexts: new Map() };
  mergeFile(merged, path, text);
  return resolveContext(merged, [path]);
}

function mergeFile(merged: Merged, path: string, text: string): void {
  const parsed = parseYamlStream(text, path);
  if (!parsed.ok) throw new KubeconfigError(parsed.problem.message);
  const doc = parsed.docs[0]?.value ?? {};
  if (!isRecord(doc)) throw new KubeconfigError('not a kubeconfig: expected a mapping');
  const dir = dirname(path);
  if (
    merged.currentContext === undefined &&
    typeof doc['current-context'] === 'string' &&
    doc['current-context']
  )
    merged.currentContext = doc['current-context'];
  for (const [list, inner, into] of [
    ['clusters', 'cluster', merged.clusters],
    ['users', 'user', merged.users],
    ['contexts', 'context', merged.contexts],
  ] as const) {
    const entries = doc[list] ?? [];
    if (!Array.isArray(entries)) throw new KubeconfigError(`${list}: expected a list`);
    for (const [i, entry] of entries.entries()) {
      if (!isRecord(entry) || typeof entry.name !== 'string')
        throw new KubeconfigError(`${list}[${i}].name: expected a string`);
      const value = entry[inner] ?? {};
      if (!isRecord(value)) throw new KubeconfigError(`${list}[${i}].${inner}: expected a mapping`);
      if (!into.has(entry.name)) into.set(entry.name, { name: entry.name, value, dir, file: path });
    }
  }
}

function resolveContext(merged: Merged, files: string[]): ResolvedKubeconfig {
  const name = merged.currentContext;
  if (!name) throw new KubeconfigError('has no current-context. Run `kubectl config use-context <name>`.');
  const context = merged.contexts.get(name);
  if (!context) throw new KubeconfigError(`current-context ${name} is not defined.`);
  const clusterName = str(context.value, 'cluster') ?? '';
  const userName = str(context.value, 'user') ?? '';
  const cluster = merged.clusters.get(clusterName);
  const server = cluster && str(cluster.value, 'server');
  if (!cluster || !server)
    throw new KubeconfigError(`context ${name} names cluster ${clusterName}, which has no server.`);
  const user = merged.users.get(userName);
  if (!user) throw new KubeconfigError(`context ${name} names user ${userName}, which is not defined.`);
  const namespace = str(context.value, 'namespace');
  return {
    files,
    context: { name, cluster: clusterName, user: userName, ...(namespace ? { namespace } : {}) },
    cluster: readCluster(cluster, server),
    user: readUser(user),
  };
}

function readCluster(c: Named, server: string): KubeconfigCluster {
  const ca = bytes(c, 'certificate-authority-data', 'certificate-authority');
  const tlsServerName = str(c.value, 'tls-server-name');
  const proxyUrl = str(c.value, 'proxy-url');
  return {
    server: server.replace(/\/+$/, ''),
    ...(ca ? { ca } : {}),
    insecureSkipTLSVerify: c.value['insecure-skip-tls-verify'] === true,
    ...(tlsServerName ? { tlsServerName } : {}),
    ...(proxyUrl ? { proxyUrl } : {}),
  };
}

function readUser(u: Named): KubeconfigUser {
  const v = u.value;
  const token = str(v, 'token');
  const tokenFile = str(v, 'tokenFile');
  const clientCertificate = bytes(u, 'client-certificate-data', 'client-certificate');
  const clientKey = bytes(u, 'client-key-data', 'client-key');
  const username = str(v, 'username');
  const password = str(v, 'password');
  const dynamic = isRecord(v.exec) ? 'exec' : isRecord(v['auth-provider']) ? 'auth-provider' : undefined;
  return {
    ...(token ? { token } : tokenFile ? { tokenFile: absolute(u.dir, tokenFile) } : {}),
    ...(clientCertificate ? { clientCertificate } : {}),
    ...(clientKey ? { clientKey } : {}),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(dynamic ? { dynamic } : {}),
  };
}

function str(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A `*-data` field (base64) or, failing that, the file its sibling names. */
function bytes(n: Named, dataKey: string, fileKey: string): Buffer | undefined {
  const data = str(n.value, dataKey);
  if (data) return Buffer.from(data, 'base64');
  const file = str(n.value, fileKey);
  if (!file) return undefined;
  const path = absolute(n.dir, file);
  try {
    return readFileSync(path);
  } catch (err) {
    throw new KubeconfigError(`${n.name}: ${fileKey} ${path}: ${(err as Error).message}`, { cause: err });
  }
}

const absolute = (dir: string, file: string): string => (isAbsolute(file) ? file : join(dir, file));

/** Where a pod's ServiceAccount credentials are mounted. */
export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The in-cluster configuration, as client-go's `rest.InClusterConfig` builds it: the API server
 * from KUBERNETES_SERVICE_HOST and _PORT, the mounted CA, and the mounted token, read again as
 * the kubelet rotates it.
 */
export function inClusterKubeconfig(
  tokenPath: string,
  env: Record<string, string | undefined>,
): ResolvedKubeconfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    throw new KubeconfigError(
      'a ServiceAccount token is mounted but KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set',
    );
  const dir = dirname(tokenPath);
  let ca: Buffer | undefined;
  try {
    ca = readFileSync(join(dir, 'ca.crt'));
  } catch {
    // Without the mounted CA, the system's roots are used, as client-go does.
  }
  return {
    files: ['in-cluster'],
    context: { name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster' },
    cluster: {
      server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      ...(ca ? { ca } : {}),
      insecureSkipTLSVerify: false,
    },
    user: { tokenFile: tokenPath },
  };
}
