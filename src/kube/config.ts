/**
 * Finding the cluster to talk to. The order is client-node's (an explicit path, then KUBECONFIG,
 * then ~/.kube/config, then the in-cluster ServiceAccount) but, unlike
 * `KubeConfig.loadFromDefault()`, finding nothing is an error that says what to do, never a
 * silent fallback to http://localhost:8080. `connectToCluster` also checks that the API server
 * answers before anything else starts.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { UserError } from '../util/errors.js';
import { type ClusterAccess, clusterAccess } from './access.js';
import { KubeClient } from './client.js';
import { formatApiError, parseApiError } from './errors.js';
import {
  inClusterKubeconfig,
  KubeconfigError,
  type ResolvedKubeconfig,
  readKubeconfigFiles,
  serviceAccountDir,
} from './kubeconfig.js';

export interface LoadOptions {
  /** A kubeconfig file named on the command line; it wins over everything else. */
  path?: string;
  env?: Record<string, string | undefined>;
  homeDir?: string;
  /** Where a pod's ServiceAccount token is mounted (the in-cluster case). */
  serviceAccountTokenPath?: string;
}

export interface LoadedKubeConfig {
  /** The cluster's address and the credentials of each request. */
  access: ClusterAccess;
  /** The context it resolved to. */
  config: ResolvedKubeconfig;
  /** Where it came from, for messages: a file path, or `in-cluster`. */
  source: string;
}

const defaultTokenPath = join(serviceAccountDir, 'token');

const howToFix =
  'Start the local control plane with `bosun cluster up` and export the KUBECONFIG it prints, ' +
  'or pass --kubeconfig or set KUBECONFIG to a cluster you can reach.';

function fromFiles(paths: string[], source: string): LoadedKubeConfig {
  try {
    const config = readKubeconfigFiles(paths);
    return { access: clusterAccess(config), config, source };
  } catch (err) {
    if (err instanceof KubeconfigError || (err as NodeJS.ErrnoException).code !== undefined)
      throw new UserError(`kubeconfig ${source}: ${(err as Error).message}`, 1, { cause: err });
    throw err;
  }
}

/** Loads the kubeconfig to use, or throws a UserError explaining that there is none. */
export function loadKubeConfig(opts: LoadOptions = {}): LoadedKubeConfig {
  const env = opts.env ?? process.env;
  if (opts.path !== undefined) {
    if (!existsSync(opts.path)) throw new UserError(`kubeconfig ${opts.path} does not exist. ${howToFix}`);
    return fromFiles([opts.path], opts.path);
  }
  if (env.KUBECONFIG !== undefined && env.KUBECONFIG !== '') {
    const listed = env.KUBECONFIG.split(delimiter).filter((p) => p !== '');
    const present = listed.filter((p) => existsSync(p));
    if (present.length === 0) {
      throw new UserError(`KUBECONFIG names ${listed.join(', ')}, and none of them exists. ${howToFix}`);
    }
    return fromFiles(present, present.join(delimiter));
  }
  const home = opts.homeDir ?? homedir();
  const defaultPath = join(home, '.kube', 'config');
  const tokenPath = opts.serviceAccountTokenPath ?? defaultTokenPath;
  if (existsSync(defaultPath)) return fromFiles([defaultPath], defaultPath);
  if (existsSync(tokenPath)) {
    try {
      const config = inClusterKubeconfig(tokenPath, env);
      return { access: clusterAccess(config), config, source: 'in-cluster' };
    } catch (err) {
      throw new UserError(`in-cluster configuration: ${(err as Error).message}`, 1, { cause: err });
    }
  }
  throw new UserError(
    `No Kubernetes cluster is configured: KUBECONFIG is not set and ${defaultPath} does not exist. ${howToFix}`,
  );
}

export interface ClusterConnection extends LoadedKubeConfig {
  client: KubeClient;
  server: string;
  /** The API server's version, e.g. v1.33.1. */
  version: string;
}

/**
 * Loads the kubeconfig and asks the API server for its version, so that a wrong or unreachable
 * cluster is reported at start-up, in one sentence, instead of as a stream of failed requests.
 */
export async function connectToCluster(
  opts: LoadOptions & { timeoutMs?: number } = {},
): Promise<ClusterConnection> {
  const loaded = loadKubeConfig(opts);
  const client = new KubeClient(loaded.access);
  const server = client.server;
  try {
    const info = await client.request<{ gitVersion?: string }>({
      path: '/version',
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
    return { ...loaded, client, server, version: info?.gitVersion ?? 'unknown' };
  } catch (err) {
    client.close();
    const apiError = parseApiError(err);
    const why = apiError ? formatApiError(apiError) : (err as Error).message;
    throw new UserError(
      `Cannot use the Kubernetes API server at ${server} (kubeconfig ${loaded.source}): ${why}. ${howToFix}`,
      1,
      { cause: err },
    );
  }
}
