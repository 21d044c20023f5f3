import { DefaultGlobalNamespace, DefaultMetricsAddress } from '../../controllers/defaults.js';
import { UserError } from '../../util/errors.js';
import { bool, type Command, str } from '../command.js';

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
  'log-level': {
    type: 'string',
    valueName: 'LEVEL',
    default: 'info',
    description: 'debug, info, warn or error (logs are JSON lines on stdout)',
  },
} as const;

const runCommand: Command = {
  name: 'run',
  summary: 'Run the manager: reconcile CatalogSources, Subscriptions, InstallPlans and CSVs',
  options: {
    ...managerOptions,
    'install-crds': { type: 'boolean', description: 'Install or update the CRDs from deploy/crds first' },
  },
  run: async ({ values, ctx }) => {
    const level = str(values, 'log-level') ?? 'info';
    if (!['debug', 'info', 'warn', 'error'].includes(level)) {
      throw new UserError(`--log-level: "${level}" is not one of debug, info, warn, error`, 2);
    }
    const { startManager } = await import('../../controllers/manager.js');
    const manager = await startManager({
      kubeconfig: str(values, 'kubeconfig'),
      env: ctx.env,
      globalNamespace: str(values, 'global-namespace'),
      metricsAddr: str(values, 'metrics-addr'),
      installCrds: bool(values, 'install-crds'),
      logLevel: level,
    });
    await untilSignal();
    await manager.stop();
    return 0;
  },
};

export const operatorCommand: Command = {
  name: 'operator',
  summary: 'Run the Bosun manager (the meta-operator) against a cluster',
  subcommands: [runCommand],
};

export const planCommand: Command = {
  name: 'plan',
  summary: 'Show an upgrade plan before it happens: target, manifest diff, CRD safety, RBAC delta',
  run: () => {
    throw new UserError('bosun plan is not available in this version yet');
  },
};
