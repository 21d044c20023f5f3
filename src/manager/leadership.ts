/**
 * What leader election means for the manager. Every replica watches, keeps its catalogs loaded
 * and serves reads (the web catalog, the PackageManifest API, /metrics); only the holder of the
 * Lease `<namespace>/<id>` (default `olm/bosun-manager`) runs the controllers, and every write
 * they make passes a gate that is open only while it holds the Lease. So:
 * - losing the Lease closes the gate at once (a reconcile still running has its next write
 *   refused), and the process exits non-zero, as controller-runtime's does, to start again clean;
 * - a clean stop (SIGTERM) stops taking work, lets running reconciles finish for a bound, closes
 *   the gate on those that did not, then releases the Lease, so a standby takes over at once and
 *   never beside a writer.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { isWrite, type KubeClient, type RequestGuard } from '../kube/client.js';
import { type Clock, sleep } from '../kube/clock.js';
import { parseApiError } from '../kube/errors.js';
import { type ElectionTiming, LeaderElector } from '../kube/leader-election.js';
import { apiLeaseStore } from '../kube/lease-store.js';
import type { ReconcileResult, WorkQueue } from '../kube/workqueue.js';
import { escapeControls } from '../util/terminal.js';
import { DefaultLeaderElectionId } from './defaults.js';

export interface LeaderElectionOptions {
  /** The Lease's namespace; default the global namespace. */
  namespace?: string;
  /** The Lease's name; default `bosun-manager`. */
  id?: string;
  /** Who this manager is in the Lease; default `<hostname>_<random UUID>` (controller-runtime's). */
  identity?: string;
  timing?: ElectionTiming;
}

/** A write refused because this manager does not (or no longer) hold the Lease. */
export class NotLeading extends Error {
  override name = 'NotLeading';
}

/** A guard refusing every write, saying why. */
export function refuseWrites(why: string): RequestGuard {
  return (opts) => {
    if (isWrite(opts)) throw new NotLeading(`${opts.method} ${opts.path} refused: ${why}`);
  };
}

/**
 * The hostname (a Pod's name in a cluster) and a random id, as controller-runtime makes it: unique
 * even for two processes on one host, and a restarted process is a new candidate, never mistaken
 * for the leader it replaces.
 */
export function managerIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

export interface ManagerElection {
  readonly identity: string;
  readonly lease: string;
  isLeader(): boolean;
  /** For the controllers' client: writes pass only while leading and not stopping. */
  writeGate: RequestGuard;
  /** Resolves when leadership was lost (not when released). */
  lost: Promise<void>;
  start(on: { onStartedLeading: () => Promise<void> | void; onLost: () => void }): void;
  /** Closes the gate, releases the Lease if held, and resolves when the election has ended. */
  stop(): Promise<void>;
}

export function managerElection(
  o: {
    client: KubeClient;
    clock: Clock;
    log: Logger;
    globalNamespace: string;
  } & LeaderElectionOptions,
): ManagerElection {
  const namespace = o.namespace ?? o.globalNamespace;
  const id = o.id ?? DefaultLeaderElectionId;
  const identity = o.identity ?? managerIdentity();
  const lease = `${namespace}/${id}`;
  const log = o.log.child({ lease, identity });
  let closed = false;
  let signalLost!: () => void;
  const lost = new Promise<void>((resolve) => (signalLost = resolve));
  const stopper = new AbortController();
  let done: Promise<unknown> = Promise.resolve();
  let lastFailure = '';
  let hooks: { onStartedLeading: () => Promise<void> | void; onLost: () => void } | undefined;
  const elector = new LeaderElector({
    store: apiLeaseStore(o.client, namespace, id),
    identity,
    clock: o.clock,
    ...(o.timing ? { timing: o.timing } : {}),
    onStartedLeading: () => {
      log.info('became the leader: starting the controllers');
      void Promise.resolve(hooks?.onStartedLeading()).catch((err: unknown) =>
        log.error({ err }, 'controllers did not start'),
      );
    },
    onStoppedLeading: (why) => {
      closed = true;
      if (why === 'released') return log.info('released the leader Lease');
      log.error('lost the leader Lease: controllers stopped, writes refused');
      hooks?.onLost();
      signalLost();
    },
    onNewLeader: (holder) => {
      if (holder !== identity)
        log.info({ leader: holder ? shown(holder) : null }, 'the leader is another manager');
    },
    onAttemptFailed: (err) => {
      // A conflict is the election working (someone else wrote first); anything else, once per cause.
      const api = parseApiError(err);
      if (api?.code === 409) return log.debug('lease update conflicted');
      const message = shown(api?.message ?? (err instanceof Error ? err.message : String(err)));
      if (message !== lastFailure) log.warn({ err: message }, 'could not read or write the leader Lease');
      lastFailure = message;
    },
  });
  return {
    identity,
    lease,
    isLeader: () => elector.isLeader() && !closed,
    writeGate: (opts) => {
      if (isWrite(opts) && !(elector.isLeader() && !closed))
        throw new NotLeading(
          `${opts.method} ${opts.path} refused: this manager does not hold the Lease ${lease}`,
        );
    },
    lost,
    start(on) {
      hooks = on;
      log.info('waiting to acquire the leader Lease; serving reads meanwhile');
      done = elector.run(stopper.signal);
    },
    async stop() {
      closed = true;
      stopper.abort();
      await done;
    },
  };
}

/**
 * Text of the Lease (anyone allowed to write it chooses its holder) and of the API server, as a
 * log shows it: cut short, and with every control character escaped, so that it cannot move a
 * terminal's cursor, plant a link, or start a log line of its own.
 */
function shown(text: string): string {
  return escapeControls(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

/** A standby's reconcile whose write was refused is not a failure: it looks again in a minute. */
export async function standbyOutcome(
  result: Promise<ReconcileResult | undefined | void>,
): Promise<ReconcileResult | undefined | void> {
  try {
    return await result;
  } catch (err) {
    if (causedBy(err, NotLeading)) return { requeueAfter: 60_000 };
    throw err;
  }
}

function causedBy(err: unknown, kind: new (...args: never[]) => Error): boolean {
  let e: unknown = err;
  while (e instanceof Error) {
    if (e instanceof kind) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The stop of a manager (SIGTERM): its queues stop taking work at once; running reconciles get
 * `drainMs` to finish, then are abandoned, which is safe because every reconcile is level-based
 * and the next leader does it again, and because closing the gate refuses whatever they would
 * still write. Only then is the Lease released.
 */
export async function drainThenRelease(o: {
  queues: readonly WorkQueue[];
  election: ManagerElection | undefined;
  drainMs: number;
  clock: Clock;
  log: Logger;
}): Promise<void> {
  const drained = Promise.all(o.queues.map((q) => q.shutdown())).then(() => true);
  const finished = await Promise.race([drained, sleep(o.clock, o.drainMs).then(() => false)]);
  if (!finished) {
    const running = o.queues.reduce((n, q) => n + q.inFlight(), 0);
    o.log.warn({ running, drainMs: o.drainMs }, 'abandoning reconciles still running at stop');
  }
  await o.election?.stop();
}
