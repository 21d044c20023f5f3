import {
  DefaultGlobalNamespace,
  DefaultLeaderElectionId,
  DefaultMetricsAddress,
} from '../../manager/defaults.js';
import type { Logger } from 'pino';
import { globalPullSecretOf, type SecretRef } from '../../manager/registry-settings.js';
import { UserError } from '../../util/errors.js';
import { createLogger, defaultLogFormat, type LogFormat, LogLevels } from '../../util/log.js';
import { bool, type Command, type CommandContext, str, type Values } from '../command.js';

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

export const managerOptions = {
  kubeconfig: {
    type: 'string',
    valueName: 'FILE',
    description: 'The cluster to manage (default: KUBECONFIG, ~/.kube/config or in-cluster)',
  },
  'global-namespace': {
    type: 'string',
    valueName: 'NS',
    default: DefaultGlobalNamespace,
    description: 'Catalogs in this namespace are visible from every namespace',
  },
  'metrics-addr': {
    type: 'string',
    valueName: 'HOST:PORT',
    default: DefaultMetricsAddress,
    description: 'Where to serve /healthz, /readyz and /metrics',
  },
  'web-hosts': {
    type: 'string',
    valueName: 'NAMES',
    description:
      'Host names (comma-separated) the web catalog and /metrics answer to besides IP addresses and localhost, e.g. an Ingress host; requests naming any other host are refused, which keeps DNS-rebinding pages out',
  },
  'package-api-addr': {
    type: 'string',
    valueName: 'HOST:PORT',
    description:
      'Serve the PackageManifest API (kubectl get packagemanifests) here, registered with the API server, which must reach this address: an IPv4 address of this host, or 0.0.0.0 for every interface (the API server then dials the first non-loopback IPv4 address); not loopback, which the API server cannot reach; port 0: any free port',
  },
  'catalogd-url': {
    type: 'string',
    valueName: 'URL',
    description:
      "Where OLM v1 clients reach the catalogd API this manager serves for ClusterCatalogs (their status.urls.base is this URL, /catalogs/ and the name), e.g. http://bosun.olm.svc:8080 (default: the --metrics-addr server's own address)",
  },
  'global-pull-secret': {
    type: 'string',
    valueName: 'NS/NAME',
    description:
      "The pull Secret (kubernetes.io/dockerconfigjson) ClusterCatalog images are pulled with, as catalogd's --global-pull-secret (default: BOSUN_GLOBAL_PULL_SECRET, else none)",
  },
  'log-level': {
    type: 'string',
    valueName: 'LEVEL',
    default: 'info',
    description: 'debug, info, warn or error',
  },
  'log-format': {
    type: 'string',
    valueName: 'FORMAT',
    description:
      'text (one readable line per record) or json (JSON lines); default: text on a terminal, else json',
  },
} as const;

/** --catalogd-url and --global-pull-secret, checked before the manager starts. */
function catalogdOptions(values: Values): { catalogdUrl?: string; globalPullSecret?: SecretRef } {
  const url = str(values, 'catalogd-url');
  if (url !== undefined && !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(url))
    throw new UserError(`--catalogd-url: "${url}" is not an http(s) URL like http://bosun.olm.svc:8080`);
  const secret = str(values, 'global-pull-secret');
  const globalPullSecret =
    secret === undefined
      ? undefined
      : globalPullSecretOf({ BOSUN_GLOBAL_PULL_SECRET: secret }, '--global-pull-secret');
  return { ...(url ? { catalogdUrl: url } : {}), ...(globalPullSecret ? { globalPullSecret } : {}) };
}

/** The names of --web-hosts. */
export function webHosts(values: Values): string[] {
  return (str(values, 'web-hosts') ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
}

/** The manager's logger from --log-level and --log-format, on stdout. */
export function managerLogger(values: Values, ctx: CommandContext): Logger {
  const level = str(values, 'log-level') ?? 'info';
  if (!(LogLevels as readonly string[]).includes(level)) {
    throw new UserError(`--log-level: "${level}" is not one of ${LogLevels.join(', ')}`, 2);
  }
  const format = str(values, 'log-format') ?? defaultLogFormat(ctx.stdout);
  if (format !== 'json' && format !== 'text') {
    throw new UserError(`--log-format: "${format}" is not one of text, json`, 2);
  }
  return createLogger({
    level,
    format: format as LogFormat,
    out: ctx.stdout,
    base: { component: 'bosun-manager' },
  });
}

const runCommand: Command = {
  name: 'run',
  summary: 'Run the manager: reconcile CatalogSources, Subscriptions, InstallPlans and CSVs',
  options: {
    ...managerOptions,
    'install-crds': { type: 'boolean', description: 'Install or update the CRDs from deploy/crds first' },
    'leader-elect': {
      type: 'boolean',
      description:
        'Reconcile only while holding a Lease, so several replicas can run: each serves the web catalog, /metrics and the PackageManifest API, one reconciles; /readyz says leader or standby',
    },
    'leader-election-namespace': {
      type: 'string',
      valueName: 'NS',
      description: 'The namespace of the Lease (default: the global namespace)',
    },
    'leader-election-id': {
      type: 'string',
      valueName: 'NAME',
      description: `The name of the Lease (default: ${DefaultLeaderElectionId})`,
    },
    'package-api-service-port': {
      type: 'string',
      valueName: 'PORT',
      description:
        'With --package-api-addr, in a cluster with several replicas: the API server reaches the PackageManifest API through the Service bosun-packageserver of the global namespace (deploy/ makes it, selecting every replica) at this port. The replicas serve one certificate kept in the Secret bosun-packageserver-cert, the leader writes it and the APIService, and a stopping replica leaves them registered',
    },
  },
  run: async ({ values, ctx }) => {
    const logger = managerLogger(values, ctx);
    const leaderElection = leaderElectionOption(values);
    packageApiServiceOption(values);
    const { startManager } = await import('../../manager/manager.js');
    const manager = await startManager({
      kubeconfig: str(values, 'kubeconfig'),
      env: ctx.env,
      globalNamespace: str(values, 'global-namespace'),
      metricsAddr: str(values, 'metrics-addr'),
      installCrds: bool(values, 'install-crds'),
      packageApiAddr: str(values, 'package-api-addr'),
      ...packageApiServiceOption(values),
      webHosts: webHosts(values),
      ...catalogdOptions(values),
      logger,
      ...(leaderElection ? { leaderElection } : {}),
    });
    const ended = await Promise.race([untilSignal(), manager.lost.then(() => 'lost' as const)]);
    if (ended === 'lost') {
      // As controller-runtime: the controllers are stopped and their writes refused; exit at once,
      // non-zero, so the Deployment starts this replica again as a clean standby.
      logger.error('leader election lost, exiting');
      logger.flush();
      process.exit(1);
    }
    // A stop (SIGTERM, Ctrl-C): no new work, running reconciles finish or are abandoned, the
    // Lease is released, then the process exits 0.
    await manager.stop();
    return 0;
  },
};

/** --package-api-service-port, checked before connecting. */
export function packageApiServiceOption(values: Values): { packageApiServicePort?: number } {
  const port = str(values, 'package-api-service-port');
  if (port === undefined) return {};
  if (str(values, 'package-api-addr') === undefined)
    throw new UserError('--package-api-service-port needs --package-api-addr', 2);
  const n = Number(port);
  if (!/^[0-9]{1,5}$/.test(port) || n < 1 || n > 65535)
    throw new UserError(`--package-api-service-port: ${JSON.stringify(port)} is not a port (1 to 65535)`, 2);
  return { packageApiServicePort: n };
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const dnsSubdomain = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** --leader-elect and its Lease, checked before connecting: a bad name is named, not sent. */
export function leaderElectionOption(values: Values): { namespace?: string; id?: string } | undefined {
  const namespace = str(values, 'leader-election-namespace');
  const id = str(values, 'leader-election-id');
  if (!bool(values, 'leader-elect')) {
    const given =
      namespace !== undefined
        ? '--leader-election-namespace'
        : id !== undefined
          ? '--leader-election-id'
          : '';
    if (given) throw new UserError(`${given} needs --leader-elect`, 2);
    return undefined;
  }
  if (namespace !== undefined && !dnsLabel.test(namespace))
    throw new UserError(
      `--leader-election-namespace: ${JSON.stringify(namespace)} is not a namespace name (a DNS label)`,
      2,
    );
  if (id !== undefined && !dnsSubdomain.test(id))
    throw new UserError(
      `--leader-election-id: ${JSON.stringify(id)} is not a Lease name (a DNS subdomain)`,
      2,
    );
  return { ...(namespace !== undefined ? { namespace } : {}), ...(id !== undefined ? { id } : {}) };
}

export const operatorCommand: Command = {
  name: 'operator',
  summary: 'Run the Bosun manager (the meta-operator) against a cluster',
  subcommands: [runCommand],
};
