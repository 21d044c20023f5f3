/**
 * A rollback under way, the I/O both front ends share (Subscriptions, ./subscription-rollback.ts,
 * and ClusterExtensions, ./clusterextension-rollback.ts): read what the cluster holds of it, take
 * the one next step ../install/rollback-step.ts decides from that, and say where it stands. What
 * differs between the front ends is given in a RollbackJob: whose InstallPlans these are, how
 * the rollback InstallPlan is made, and whom Events are about. Deciding and reporting the
 * rollback (its status, its hold) stays with each front end.
 *
 * Nothing here remembers an earlier reconcile: a manager stopped between any two writes finds
 * the same next step on its next reconcile as one never stopped.
 */
import type { KubeObject } from '../apis/meta.js';
import { type ClusterServiceVersion, CSVPhase, type InstallPlan, Resources } from '../apis/operators.js';
import { csvOwnerOf } from '../install/ownership.js';
import {
  type LiveObject,
  type LostObject,
  nextRollbackStep,
  objectFate,
  type RollbackState,
  RollbackStepKind,
} from '../install/rollback-step.js';
import { objectKey } from '../kube/cache.js';
import { objectPath } from '../kube/client.js';
import { apiVersionFor } from '../olm/kinds.js';
import type { Deployment, ScopedContext } from './context.js';
import { deleteIfPresent, getIfPresent } from './objects.js';

/** What a rollback step reads and writes. */
export type RollbackIO = ScopedContext<'installPlans' | 'deployments', 'client' | 'applier' | 'events'>;

/** How soon to look again while a rollback waits for the failed CSV to go. */
export const stepPollMs = 1_000;

/** One front end's rollback, as the shared steps need it. */
export interface RollbackJob {
  /** Whom the rollback's Events are about (the Subscription, the ClusterExtension). */
  owner: KubeObject;
  namespace: string;
  /** The CSV rolled back from. */
  from: string;
  /** The CSV reinstated. */
  to: string | undefined;
  /** The rollback's own InstallPlan: the same name for the same rollback. */
  planName: string;
  /** Whether an InstallPlan of the namespace is the front end's own (the rollback's own is left out anyway). */
  ownsPlan: (ip: InstallPlan) => boolean;
  /** Creates the rollback InstallPlan `planName` (an existing one is no error). */
  makePlan: () => Promise<void>;
}

export type StepOutcome =
  /** Under way: look again after this long (none: the rollback's own objects' events will tell). */
  | { kind: 'pending'; requeueAfterMs?: number }
  /** The rollback InstallPlan failed: the rollback stops and says why. */
  | { kind: 'failed'; message: string }
  /** The version rolled back to runs again, and nothing of the version rolled back from is left. */
  | { kind: 'done'; to: ClusterServiceVersion };

/** Takes the next step of a rollback under way, the one the cluster's state calls for now. */
export async function takeRollbackStep(
  io: RollbackIO,
  job: RollbackJob,
  csvs: readonly ClusterServiceVersion[],
): Promise<StepOutcome> {
  const { namespace, planName } = job;
  const from = csvs.find((c) => c.metadata.name === job.from);
  const to = job.to
    ? csvs.find((c) => c.metadata.name === job.to && !c.metadata.deletionTimestamp)
    : undefined;
  const plan = io.informers.installPlans.get(objectKey(namespace, planName));
  const state: RollbackState = {
    from: !from ? 'gone' : from.metadata.deletionTimestamp ? 'deleting' : 'present',
    to: !to ? 'gone' : reinstated(io, to) ? 'reinstated' : 'present',
    ...(plan
      ? {
          plan: {
            name: planName,
            ...(plan.status?.phase ? { phase: plan.status.phase } : {}),
            ...(plan.status?.message ? { message: plan.status.message } : {}),
          },
        }
      : {}),
    fromPlans: io.informers.installPlans
      .list(namespace)
      .filter(
        (ip) =>
          ip.metadata.name !== planName &&
          job.ownsPlan(ip) &&
          ip.spec.clusterServiceVersionNames.includes(job.from),
      )
      .map((ip) => ip.metadata.name!),
  };
  let next = nextRollbackStep(state);
  if (next.kind === RollbackStepKind.CheckObjects && plan)
    next = nextRollbackStep({ ...state, lost: await lostObjects(io, plan, csvs) });
  switch (next.kind) {
    case RollbackStepKind.MakePlan:
      await job.makePlan();
      return { kind: 'pending' };
    case RollbackStepKind.AwaitPlan:
      return { kind: 'pending' };
    case RollbackStepKind.Failed:
      return { kind: 'failed', message: next.message };
    case RollbackStepKind.RemakePlan:
      // The previous CSV went after its plan ran (retired as replaced: the failed one reached
      // Succeeded meanwhile, before it was removed), or objects the plan applied went after it
      // ran (`lost`). The plan runs again, made anew.
      if (next.lost) {
        io.log.info({ installPlan: next.plan, lost: next.lost }, 'rollback installplan runs again');
        void io.events.normal(
          job.owner,
          'RollbackReapplied',
          `${job.to}: InstallPlan ${next.plan} runs again, since objects it applied went or are being garbage collected: ${next.lost.join(', ')}`,
        );
      }
      await deleteIfPresent(io.client, objectPath(Resources.InstallPlan, next.plan, namespace));
      return { kind: 'pending', requeueAfterMs: stepPollMs };
    case RollbackStepKind.RemoveFrom:
      await removeFrom(io, namespace, job.from, next.csv, next.plans);
      return { kind: 'pending', requeueAfterMs: stepPollMs };
    case RollbackStepKind.AwaitObjects:
      io.log.info({ objects: next.objects }, 'rollback waits for objects being deleted, to put them back');
      return { kind: 'pending', requeueAfterMs: stepPollMs };
    case RollbackStepKind.CheckObjects:
    case RollbackStepKind.AwaitReinstated:
      return { kind: 'pending', requeueAfterMs: stepPollMs };
    case RollbackStepKind.Done:
      return { kind: 'done', to: to! };
  }
}

/**
 * The objects the completed rollback InstallPlan applied that are not safely there (gone, being
 * deleted, or owned only by CSVs that no longer exist), read from the API server: the caches hold
 * none of most of these kinds, and the garbage collector's work is seen only there. The plan's
 * own CSV is left out (the rollback judges it by itself). A namespaced step's object is in the
 * plan's namespace, where the plan applies it.
 */
async function lostObjects(
  io: RollbackIO,
  plan: InstallPlan,
  csvs: readonly ClusterServiceVersion[],
): Promise<LostObject[]> {
  const namespace = plan.metadata.namespace!;
  const liveCSVs = new Set(
    csvs
      .filter((c) => c.metadata.namespace === namespace && !c.metadata.deletionTimestamp)
      .map((c) => c.metadata.uid ?? ''),
  );
  const lost: LostObject[] = [];
  for (const { resource } of plan.status?.plan ?? []) {
    if (resource.kind === Resources.ClusterServiceVersion.kind) continue;
    const object = {
      apiVersion: apiVersionFor(resource.group, resource.version),
      kind: resource.kind,
      metadata: { name: resource.name, namespace },
    };
    const path = await io.applier.pathOf(object);
    const live = await getIfPresent<LiveObject>(io.client, path);
    const why = objectFate(live, liveCSVs);
    if (why !== undefined)
      lost.push({ object: `${resource.kind} ${describeName(path, resource.name)}`, why });
  }
  return lost;
}

/** `namespace/name` for an object at a namespaced path, else `name`. */
function describeName(path: string, name: string): string {
  const ns = /\/namespaces\/([^/]+)\//.exec(path)?.[1];
  return ns ? `${decodeURIComponent(ns)}/${name}` : name;
}

/**
 * Whether the previous version runs again: its CSV Succeeded, and each of its Deployments its own
 * again (by label and by ownerReference) and available (a CSV that was Replacing may pass for Succeeded for a moment, while the
 * Deployment it shares with the failed version is still the failed version's).
 */
function reinstated(io: RollbackIO, to: ClusterServiceVersion): boolean {
  if (to.status?.phase !== CSVPhase.Succeeded) return false;
  const namespace = to.metadata.namespace;
  return (to.spec.install?.spec?.deployments ?? []).every((d) => {
    const live = io.informers.deployments.get(objectKey(namespace, d.name)) as
      AvailableDeployment | undefined;
    return (
      live !== undefined &&
      !live.metadata?.deletionTimestamp &&
      csvOwnerOf(live.metadata?.labels)?.name === to.metadata.name &&
      // Owned by this CSV itself, not only labelled for it: a Deployment still owned by the CSV
      // rolled back from alone is the garbage collector's to delete.
      (live.metadata?.ownerReferences ?? []).some((o) => o.uid === to.metadata.uid) &&
      (live.status?.observedGeneration ?? 0) >= (live.metadata?.generation ?? 0) &&
      live.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true
    );
  });
}

type AvailableDeployment = Deployment & {
  status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
};

/** Deletes the CSV rolled back from (unless it is being deleted already), then its InstallPlans. */
async function removeFrom(
  io: RollbackIO,
  namespace: string,
  csv: string,
  deleteCSV: boolean,
  plans: readonly string[],
) {
  if (deleteCSV) {
    io.log.info({ csv }, 'removing the csv rolled back from');
    await deleteIfPresent(io.client, objectPath(Resources.ClusterServiceVersion, csv, namespace));
  }
  for (const name of plans)
    await deleteIfPresent(io.client, objectPath(Resources.InstallPlan, name, namespace));
}
