/**
 * The credentials and TLS material of each request to the API server, from a resolved kubeconfig.
 *
 * Static credentials are read here: a token, a token file (read again once a minute, as client-go
 * does, so a rotated ServiceAccount token is picked up), a client certificate and key, a user name
 * and password. A user whose credentials come from running something (an `exec` plugin, a legacy
 * `auth-provider`) gets them from client-node's KubeConfig, which runs the plugin, caches its
 * credential until it expires and refreshes OIDC tokens; client-node is imported only then, so a
 * manager with static credentials never pays for its generated API client (kubeconfig.ts says why).
 */
import { readFile } from 'node:fs/promises';
import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import type { Agent } from 'node:http';
import type { ResolvedKubeconfig } from './kubeconfig.js';

export interface TlsMaterial {
  ca?: Buffer | string;
  cert?: Buffer | string;
  key?: Buffer | string;
  rejectUnauthorized: boolean;
  servername?: string;
}

export interface Credentials {
  /** Authorization and any other header the credentials need. */
  headers: Record<string, string>;
  tls: TlsMaterial;
  /** An agent of client-node's own, for a cluster reached through a proxy (proxy-url). */
  agent?: Agent;
}

export interface ClusterAccess {
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  /** Where the configuration came from, for messages: file paths, or `in-cluster`. */
  readonly source: string;
  /** The context's default namespace, when it names one. */
  readonly namespace?: string;
  credentials(): Promise<Credentials>;
}

const tokenFileRefreshMs = 60_000;

/** Access as a resolved kubeconfig describes it. */
export function clusterAccess(config: ResolvedKubeconfig, now: () => number = Date.now): ClusterAccess {
  const source = config.files.join(', ');
  const base = {
    server: config.cluster.server,
    source,
    ...(config.context.namespace ? { namespace: config.context.namespace } : {}),
  };
  if (config.user.dynamic || config.cluster.proxyUrl)
    return { ...base, credentials: pluginCredentials(config) };
  const { cluster, user } = config;
  const tls: TlsMaterial = {
    ...(cluster.ca ? { ca: cluster.ca } : {}),
    ...(user.clientCertificate ? { cert: user.clientCertificate } : {}),
    ...(user.clientKey ? { key: user.clientKey } : {}),
    rejectUnauthorized: !cluster.insecureSkipTLSVerify,
    ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
  };
  let fileToken: { value: string; readAt: number } | undefined;
  const token = async (): Promise<string | undefined> => {
    if (user.token) return user.token;
    if (!user.tokenFile) return undefined;
    if (!fileToken || now() - fileToken.readAt >= tokenFileRefreshMs) {
      const value = (await readFile(user.tokenFile, 'utf8')).trim();
      fileToken = { value, readAt: now() };
    }
    return fileToken.value;
  };
  return {
    ...base,
    async credentials() {
      const headers: Record<string, string> = {};
      const bearer = await token();
      if (bearer) headers.Authorization = `Bearer ${bearer}`;
      else if (user.username !== undefined && user.password !== undefined)
        headers.Authorization = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
      return { headers, tls };
    },
  };
}

/**
 * Credentials computed by client-node's KubeConfig, loaded from the same files, for exec plugins,
 * auth providers and proxies. Imported on first use only.
 */
function pluginCredentials(config: ResolvedKubeconfig): () => Promise<Credentials> {
  let loaded: Promise<import('@kubernetes/client-node').KubeConfig> | undefined;
  const load = async () => {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    const [first, ...rest] = config.files;
    if (first !== undefined) kc.loadFromFile(first);
    for (const file of rest) {
      const more = new KubeConfig();
      more.loadFromFile(file);
      kc.mergeConfig(more, true);
    }
    kc.setCurrentContext(config.context.name);
    return kc;
  };
  return async () => {
    loaded ??= load();
    const kc = await loaded;
    const opts: HttpsRequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const tls: TlsMaterial = {
      ...(opts.ca ? { ca: opts.ca as Buffer | string } : {}),
      ...(opts.cert ? { cert: opts.cert as Buffer | string } : {}),
      ...(opts.key ? { key: opts.key as Buffer | string } : {}),
      rejectUnauthorized: opts.rejectUnauthorized !== false,
      ...(opts.servername ? { servername: opts.servername } : {}),
    };
    // client-node builds a fresh agent each time; only a proxy's is needed (client.ts keeps its own).
    const given = opts.agent as Agent | undefined;
    if (config.cluster.proxyUrl && given) return { headers, tls, agent: given };
    given?.destroy();
    return { headers, tls };
  };
}
