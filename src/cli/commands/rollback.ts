/**
 * `bosun rollback` and `bosun upgrade retry`: a user's requests to the Subscription controller,
 * which does the work (the same steps as an automatic rollback). Each sets an annotation on the
 * Subscription (src/install/rollback.ts names them), then waits for the controller's answer in
 * `status.rollback`.
 */
import { Resources, RollbackPhase, type Subscription } from '../../apis/operators.js';
import { RollbackAnnotations } from '../../install/rollback.js';
import { type KubeClient, objectPath } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import { withClusterClient } from '../cluster-client.js';
import { UserError, UsageError } from '../../util/errors.js';
import { type Command, type CommandContext, str, type Values } from '../command.js';

const sharedOptions = {
  namespace: { type: 'string', short: 'n', valueName: 'NS', description: "The Subscription's namespace" },
  kubeconfig: {
    type: 'string',
    valueName: 'FILE',
    description: 'The cluster (default: KUBECONFIG, ~/.kube/config or in-cluster)',
  },
  timeout: {
    type: 'string',
    valueName: 'SECONDS',
    description: 'How long to wait for the answer (default 300; 0: do not wait)',
  },
} as const;

export const rollbackCommand: Command = {
  name: 'rollback',
  summary: "Roll a Subscription's operator back to the version it replaced",
  usage: '-n <namespace> <subscription>',
  description:
    'Asks Bosun to do what it does when an upgrade fails: remove the installed version and reinstate\n' +
    'the one it replaced (from the catalog if it is gone), keeping every CRD and custom resource. It\n' +
    'refuses, changing nothing, when the live CRDs no longer serve a version the older operator needs.\n' +
    'The version rolled back from is not installed again until the catalog changes it or\n' +
    '`bosun upgrade retry` asks for it. Waits until the rollback is done and prints the outcome.',
  args: { min: 1, max: 1 },
  options: sharedOptions,
  run: ({ values, positionals, ctx }) =>
    request(values, positionals[0]!, ctx, RollbackAnnotations.rollback, async (client, path, value) => {
      const sub = await waitFor(client, path, values, (s) => {
        const r = s.status?.rollback;
        return r?.request === value && r.phase !== RollbackPhase.RollingBack ? s : undefined;
      });
      if (!sub) return "rollback asked for; not finished yet (see the Subscription's RolledBack condition)";
      const r = sub.status!.rollback!;
      if (r.phase === RollbackPhase.Refused) throw new UserError(`rollback refused: ${r.message ?? r.cause}`);
      return `rolled back from ${r.from} to ${r.to}`;
    }),
};

const retryCommand: Command = {
  name: 'retry',
  summary: 'Try again the upgrade a rollback held back',
  usage: '-n <namespace> <subscription>',
  description:
    'After a rollback, the version rolled back from is held back until the catalog changes it.\n' +
    'This lifts the hold: the Subscription resolves again, and the upgrade is tried once more\n' +
    '(an InstallPlan is made, approved as the Subscription approves upgrades).',
  args: { min: 1, max: 1 },
  options: sharedOptions,
  run: ({ values, positionals, ctx }) =>
    request(values, positionals[0]!, ctx, RollbackAnnotations.retry, async (client, path) => {
      const sub = await waitFor(client, path, values, (s) =>
        s.metadata.annotations?.[RollbackAnnotations.retry] === undefined ? s : undefined,
      );
      if (!sub) return 'retry asked for; not taken up yet (is Bosun running?)';
      return sub.status?.rollback
        ? `${sub.status.rollback.from} is still held back: a rollback is under way`
        : 'the upgrade will be tried again';
    }),
};

export const upgradeCommand: Command = {
  name: 'upgrade',
  summary: 'Steer upgrades: retry one a rollback held back',
  description: "Commands that steer a Subscription's upgrades.",
  subcommands: [retryCommand],
};

/** Sets the request annotation on the Subscription, then reports what `answer` waits for. */
async function request(
  values: Values,
  name: string,
  ctx: CommandContext,
  annotation: string,
  answer: (client: KubeClient, path: string, value: string) => Promise<string>,
): Promise<number> {
  const namespace = str(values, 'namespace');
  if (!namespace) throw new UsageError('-n <namespace> is required');
  timeoutMs(values);
  const path = objectPath(Resources.Subscription, name, namespace);
  return withClusterClient(values, ctx, async (client) => {
    const value = new Date().toISOString();
    await client
      .request({
        method: 'PATCH',
        path,
        body: { metadata: { annotations: { [annotation]: value } } },
        contentType: 'application/merge-patch+json',
      })
      .catch((err: unknown) => {
        if (isNotFound(err)) throw new UserError(`Subscription ${namespace}/${name} does not exist`);
        throw err;
      });
    ctx.stdout.write(`${await answer(client, path, value)}\n`);
    return 0;
  });
}

function timeoutMs(values: Values): number {
  const text = str(values, 'timeout') ?? '300';
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`--timeout: "${text}" is not a number of seconds`);
  return seconds * 1_000;
}

/** Polls the Subscription until `done` returns it, or the timeout passes (undefined). */
async function waitFor(
  client: KubeClient,
  path: string,
  values: Values,
  done: (s: Subscription) => Subscription | undefined,
): Promise<Subscription | undefined> {
  const until = Date.now() + timeoutMs(values);
  for (;;) {
    const sub = await client.request<Subscription>({ path });
    const answer = done(sub);
    if (answer || Date.now() >= until) return answer;
    await new Promise((r) => setTimeout(r, 500));
  }
}
