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
import { KubeConfig } from '@kubernetes/client-node';
import { UserError } from '../util/errors.js';
import { KubeClient } from './client.js';
import { formatApiError, parseApiError } from './errors.js';

export interface LoadOptions {
  /** A kubeconfig file named on the command line; it wins over everything else. */
  path?: string;
  env?: Record<string, string | undefined>;
  homeDir?: string;
  /** Where a pod's ServiceAccount token is mounted (the in-cluster case). */
  serviceAccountTokenPath?: string;
}

export interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  /** Where it came from, for messages: a file path, or `in-cluster`. */
  source: string;
}

const defaultTokenPath = '/var/run/secrets/kubernetes.io/serviceaccount/token';

const howToFix =
  'Start the local control plane with `bosun cluster up` and export the KUBECONFIG it prints, ' +
  'or pass --kubeconfig or set KUBECONFIG to a cluster you can reach.';

function loadFile(kc: KubeConfig, path: string): void {
  try {
    kc.loadFromFile(path);
  } catch (err) {
    throw new UserError(`kubeconfig ${path}: ${(err as Error).message}`, 1, { cause: err });
  }
}

function loadFiles(paths: string[]): KubeConfig {
  const [first, ...rest] = paths;
  const kc = new KubeConfig();
  if (first !== undefined) loadFile(kc, first);
  for (const path of rest) {
    const more = new KubeConfig();
    loadFile(more, path);
    // Like kubectl, later files add clusters, users and contexts but keep the first current-context.
    kc.mergeConfig(more, true);
  }
  return kc;
}

/** Loads the kubeconfig to use, or throws a UserError explaining that there is none. */
export function loadKubeConfig(opts: LoadOptions = {}): LoadedKubeConfig {
  const env = opts.env ?? process.env;
  let loaded: LoadedKubeConfig;
  if (opts.path !== undefined) {
    if (!existsSync(opts.path)) throw new UserError(`kubeconfig ${opts.path} does not exist. ${howToFix}`);
    loaded = { kubeConfig: loadFiles([opts.path]), source: opts.path };
  } else if (env.KUBECONFIG !== undefined && env.KUBECONFIG !== '') {
    const listed = env.KUBECONFIG.split(delimiter).filter((p) => p !== '');
    const present = listed.filter((p) => existsSync(p));
    if (present.length === 0) {
      throw new UserError(`KUBECONFIG names ${listed.join(', ')}, and none of them exists. ${howToFix}`);
    }
    loaded = { kubeConfig: loadFiles(present), source: present.join(delimiter) };
  } else {
    const home = opts.homeDir ?? homedir();
    const defaultPath = join(home, '.kube', 'config');
    const tokenPath = opts.serviceAccountTokenPath ?? defaultTokenPath;
    if (existsSync(defaultPath)) {
      loaded = { kubeConfig: loadFiles([defaultPath]), source: defaultPath };
    } else if (existsSync(tokenPath)) {
      const kc = new KubeConfig();
      kc.loadFromCluster();
      loaded = { kubeConfig: kc, source: 'in-cluster' };
    } else {
      throw new UserError(
        `No Kubernetes cluster is configured: KUBECONFIG is not set and ${defaultPath} does not exist. ${howToFix}`,
      );
    }
  }
  checkComplete(loaded);
  return loaded;
}

/** A kubeconfig can parse yet name no cluster; client-node would then quietly use localhost:8080. */
function checkComplete({ kubeConfig: kc, source }: LoadedKubeConfig): void {
  const contextName = kc.getCurrentContext();
  if (!contextName) {
    throw new UserError(
      `kubeconfig ${source} has no current-context. Run \`kubectl config use-context <name>\`.`,
    );
  }
  const context = kc.getContextObject(contextName);
  if (!context) throw new UserError(`kubeconfig ${source}: current-context ${contextName} is not defined.`);
  const cluster = kc.getCluster(context.cluster);
  if (!cluster?.server) {
    throw new UserError(
      `kubeconfig ${source}: context ${contextName} names cluster ${context.cluster}, which has no server.`,
    );
  }
  if (!kc.getCurrentUser()) {
    throw new UserError(
      `kubeconfig ${source}: context ${contextName} names user ${context.user}, which is not defined.`,
    );
  }
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
  const client = new KubeClient(loaded.kubeConfig);
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
