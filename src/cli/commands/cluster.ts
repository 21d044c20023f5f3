import { defaultClusterName } from '../../cluster/paths.js';
import { UsageError } from '../../util/errors.js';
import { bool, type Command, str } from '../command.js';
import { progressReporter } from '../progress.js';

const nameOption = {
  name: {
    type: 'string',
    short: 'n',
    valueName: 'NAME',
    default: defaultClusterName,
    description: 'Which local control plane (several may run at once)',
  },
} as const;

function parsePort(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new UsageError(`--port: "${v}" is not a port number (1-65535)`);
  return n;
}

const upCommand: Command = {
  name: 'up',
  summary: 'Build (first time) and start a local control plane on 127.0.0.1',
  description:
    'Starts etcd, kube-apiserver (RBAC, aggregation layer), kube-controller-manager, kube-scheduler and\n' +
    'kwok with one simulated node, built from Go modules on first use and cached. Returns once the\n' +
    'API server is healthy and the node is Ready; the control plane keeps running until `bosun cluster down`.',
  options: {
    ...nameOption,
    port: { type: 'string', valueName: 'PORT', description: 'API server port (default: a free one)' },
  },
  run: async ({ values, ctx }) => {
    const progress = progressReporter(ctx);
    const state = await (
      await controlPlane()
    ).up({
      name: str(values, 'name'),
      port: parsePort(str(values, 'port')),
      env: ctx.env,
      onProgress: progress.line,
      onBuildStatus: progress.build,
    });
    ctx.stdout.write(
      `Control plane "${state.name}" (Kubernetes ${state.kubernetesVersion}) is ready at ${state.server}.\n` +
        `Use it with:\n  export KUBECONFIG=${state.kubeconfig}\n  kubectl get nodes\n` +
        `Stop it with:\n  bosun cluster down${state.name === defaultClusterName ? '' : ` --name ${state.name}`}\n`,
    );
    return 0;
  },
};

const downCommand: Command = {
  name: 'down',
  summary: 'Stop a local control plane and remove its data',
  options: {
    ...nameOption,
    'keep-data': { type: 'boolean', description: 'Keep the data, certificates and logs' },
  },
  run: async ({ values, ctx }) => {
    const name = str(values, 'name');
    const wasRunning = await (
      await controlPlane()
    ).down({ name, env: ctx.env, keepData: bool(values, 'keep-data') });
    ctx.stdout.write(
      wasRunning ? `Control plane "${name}" stopped.\n` : `Control plane "${name}" was not running.\n`,
    );
    return 0;
  },
};

const statusCommand: Command = {
  name: 'status',
  summary: 'Show whether a local control plane runs, and its components',
  options: {
    ...nameOption,
    output: { type: 'string', short: 'o', valueName: 'FORMAT', description: 'text or json' },
  },
  run: async ({ values, ctx }) => {
    const s = await (await controlPlane()).status({ name: str(values, 'name'), env: ctx.env });
    if (str(values, 'output') === 'json') {
      ctx.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
    } else {
      ctx.stdout.write(
        `Control plane "${s.name}": ${s.healthy ? 'running, healthy' : s.running ? 'running, NOT healthy' : 'not running'}\n`,
      );
      if (s.state) ctx.stdout.write(`  server:     ${s.state.server}\n  kubeconfig: ${s.state.kubeconfig}\n`);
      for (const c of s.components) {
        ctx.stdout.write(
          `  ${c.component.padEnd(24)} ${c.alive ? `pid ${c.pid}` : 'stopped'}  log: ${c.log}\n`,
        );
      }
    }
    return s.healthy ? 0 : 1;
  },
};

const kubeconfigCommand: Command = {
  name: 'kubeconfig',
  summary: "Print the path of a running local control plane's admin kubeconfig",
  options: nameOption,
  run: async ({ values, ctx }) => {
    const s = await (await controlPlane()).status({ name: str(values, 'name'), env: ctx.env });
    if (!s.state || !s.running) {
      ctx.stderr.write(`error: control plane "${s.name}" is not running; start it with: bosun cluster up\n`);
      return 1;
    }
    ctx.stdout.write(`${s.state.kubeconfig}\n`);
    return 0;
  },
};

export const clusterCommand: Command = {
  name: 'cluster',
  summary: 'Run a local Kubernetes control plane (up, down, status, kubeconfig)',
  subcommands: [upCommand, downCommand, statusCommand, kubeconfigCommand],
};

/** Loaded when a command runs: the control plane code (certificates, processes) is not small. */
const controlPlane = () => import('../../cluster/controlplane.js');
