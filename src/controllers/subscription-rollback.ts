/**
 * Health-gated upgrades and rollback, the Subscription controller's I/O side (the rules are in
 * src/install/rollback.ts, the order of a rollback's steps in src/install/rollback-step.ts, and the
 * steps' I/O, shared with ClusterExtensions, in ./rollback-steps.ts).
 * Before a namespace is resolved, each Subscription is looked at:
 *
 * - a user's request (annotations set by `bosun rollback` and `bosun upgrade retry`);
 * - an upgrade whose new CSV failed or missed its deadline starts a rollback;
 * - a rollback under way takes its next step: reinstate the previous CSV (it is still there,
 *   Replacing, after an upgrade that never succeeded; otherwise a rollback InstallPlan installs it
 *   from the catalog, keeping every live CRD), remove the failed CSV and its InstallPlans, and
 *   finish once the previous CSV is Succeeded again and every object its InstallPlan applied is
 *   still there (one taken by the garbage collection of the failed CSV is applied again).
 *
 * The rollback is written to the Subscription's status before anything is removed, and each step
 * is decided from what the cluster holds on that reconcile, so a manager that stops half way
 * finds the rollback there and takes the step a manager never stopped would. The version rolled
 * back from is held back from resolution until the catalog's bundle of it changes or a user asks
 * for a retry.
 */
import { createHash } from 'node:crypto';
import type { BundleDoc } from '../apis/fbc.js';
import {
  Approval,
  type ClusterServiceVersion,
  type HeldVersion,
  HistoryOutcome,
  Resources,
  RollbackPhase,
  type Subscription,
  type SubscriptionHistoryEntry,
  type SubscriptionRollback,
} from '../apis/operators.js';
import { BundleContentReason } from '../catalog/content/bundles.js';
import type { CatalogRef } from '../catalog/content/store.js';
import { decodeBundle } from '../install/bundle-objects.js';
import { withOwner } from '../install/ownership.js';
import {
  bundleContentDigest,
  type LiveCRD,
  type NeededAPI,
  pushHistory,
  RollbackAnnotations,
  rollbackCRDProblems,
  stillHeld,
  upgradeDeadline,
  upgradeHealth,
} from '../install/rollback.js';
import { objectKey } from '../kube/cache.js';
import { collectionPath, objectPath } from '../kube/client.js';
import { formatTime } from '../kube/conditions.js';
import { isAlreadyExists } from '../kube/errors.js';
import type { RecentWrites } from '../kube/recent-writes.js';
import { writeStatus } from '../kube/status.js';
import { mergePatch } from './objects.js';
import type { SubscriptionContext } from './subscription.js';
import { desiredInstallPlan, nextGeneration, SubscriptionLabel } from './subscription-plan.js';
import { stepPollMs, takeRollbackStep } from './rollback-steps.js';

/** What the rest of the reconcile needs to know of one Subscription's rollback. */
export interface RollbackView {
  rollback: SubscriptionRollback | undefined;
  history: SubscriptionHistoryEntry[];
  /** The versions kept out of resolution (rolled back from, their catalog bundles unchanged). */
  held: HeldVersion[];
  /** Look again after this long (an upgrade's deadline, or a rollback step under way). */
  requeueAfterMs?: number;
}

/** Whether a rollback is under way: the Subscription gets no new InstallPlan meanwhile. */
export const rollingBack = (v: RollbackView | undefined) => v?.rollback?.phase === RollbackPhase.RollingBack;

/** Each Subscription's rollback, after acting on it; by Subscription name. */
export async function guardUpgrades(
  ctx: SubscriptionContext,
  subs: readonly Subscription[],
  csvs: readonly ClusterServiceVersion[],
  recent: RecentWrites,
): Promise<Map<string, RollbackView>> {
  const views = new Map<string, RollbackView>();
  for (const sub of subs) views.set(sub.metadata.name!, await guardOne({ ctx, recent }, sub, csvs));
  return views;
}

/** The controller's context, and the statuses it wrote (so the next write builds on them). */
interface Guard {
  ctx: SubscriptionContext;
  recent: RecentWrites;
}

async function guardOne(
  g: Guard,
  sub: Subscription,
  csvs: readonly ClusterServiceVersion[],
): Promise<RollbackView> {
  const { ctx } = g;
  const now = ctx.clock.now();
  const csv = (name: string | undefined) =>
    name ? csvs.find((c) => c.metadata.name === name && !c.metadata.deletionTimestamp) : undefined;
  let view: RollbackView = {
    rollback: sub.status?.rollback,
    history: sub.status?.history ?? [],
    held: sub.status?.heldBack ?? [],
  };
  const annotations = sub.metadata.annotations ?? {};

  if (annotations[RollbackAnnotations.retry] !== undefined && !rollingBack(view)) {
    if (view.rollback || view.held.length > 0) {
      const versions = view.held.map((h) => h.csv).join(', ') || view.rollback?.from;
      void ctx.events.normal(
        sub,
        'UpgradeRetry',
        `no longer held back, tried again as the channel leads (asked for by ${RollbackAnnotations.retry}): ${versions}`,
      );
      view = { ...view, rollback: undefined, held: [] };
      await record(g, sub, view, now);
    }
    await dropAnnotation(ctx, sub, RollbackAnnotations.retry);
  }

  const request = annotations[RollbackAnnotations.rollback];
  if (request !== undefined && request !== view.rollback?.request && !rollingBack(view)) {
    const from = csv(sub.status?.installedCSV) ?? csv(sub.status?.currentCSV);
    const cause = `rollback asked for (${RollbackAnnotations.rollback}: ${request})`;
    view = await start(g, sub, csvs, view, from, cause, request);
  } else if (request !== undefined && !rollingBack(view)) {
    await dropAnnotation(ctx, sub, RollbackAnnotations.rollback);
  }

  // An upgrade under way: has its new CSV failed?
  const target = csv(sub.status?.currentCSV);
  if (target?.spec.replaces && view.rollback?.from !== target.metadata.name && !rollingBack(view)) {
    const deadline = upgradeDeadline(sub);
    if ('problem' in deadline) void ctx.events.warning(sub, 'InvalidUpgradeDeadline', deadline.problem);
    const health = upgradeHealth(target, deadline.ms, now);
    if (health.kind === 'failed') view = await start(g, sub, csvs, view, target, health.cause);
    else if (health.kind === 'waiting' && health.dueInMs !== undefined)
      view = { ...view, requeueAfterMs: health.dueInMs };
  }

  if (rollingBack(view)) view = await step(ctx, sub, csvs, view);
  return liftChanged(ctx, sub, view);
}

/**
 * Lifts the hold on each version whose catalog bundle changed (or went) since it was rolled back
 * from; judged only once the catalog has been read, so a manager just started keeps holding.
 * The version of a rollback under way stays held.
 */
async function liftChanged(ctx: SubscriptionContext, sub: Subscription, view: RollbackView) {
  if (view.held.length === 0 || ctx.catalogs.get(catalogOf(sub)) === undefined) return view;
  const digests = new Map<string, string | undefined>();
  for (const h of view.held) digests.set(h.csv, await catalogDigest(ctx, sub, h.csv));
  const keep = stillHeld(view.held, (name) => digests.get(name));
  const underWay = rollingBack(view) ? view.rollback?.from : undefined;
  const lifted = view.held.filter((h) => !keep.includes(h) && h.csv !== underWay);
  if (lifted.length === 0) return view;
  void ctx.events.normal(
    sub,
    'UpgradeRetry',
    `the catalog's ${lifted.map((h) => h.csv).join(', ')} changed since rolled back from: no longer held back`,
  );
  const names = new Set(lifted.map((h) => h.csv));
  const rollback = view.rollback && names.has(view.rollback.from) ? undefined : view.rollback;
  return { ...view, rollback, held: view.held.filter((h) => !names.has(h.csv)) };
}

/**
 * Starts a rollback of `from` to the version it replaced: checks there is one to go back to and
 * that its APIs are still served, then writes the rollback to status (before acting on it).
 */
async function start(
  g: Guard,
  sub: Subscription,
  csvs: readonly ClusterServiceVersion[],
  view: RollbackView,
  from: ClusterServiceVersion | undefined,
  cause: string,
  request?: string,
): Promise<RollbackView> {
  const { ctx } = g;
  const now = ctx.clock.now();
  const base = { cause, startedAt: formatTime(now), ...(request !== undefined ? { request } : {}) };
  const refuse = async (fromName: string, message: string, to?: string): Promise<RollbackView> => {
    const rollback: SubscriptionRollback = {
      phase: RollbackPhase.Refused,
      from: fromName,
      ...(to ? { to } : {}),
      ...base,
      message,
    };
    void ctx.events.warning(sub, 'RollbackRefused', `${cause}: ${message}`);
    const next = { ...view, rollback };
    await record(g, sub, next, now);
    if (request !== undefined) await dropAnnotation(ctx, sub, RollbackAnnotations.rollback);
    return next;
  };
  if (!from) return refuse('', 'no installed version to roll back from');
  const fromName = from.metadata.name!;
  const toName =
    from.spec.replaces ??
    view.history.find((h) => h.outcome !== HistoryOutcome.Failed && h.csv !== fromName)?.csv;
  if (!toName)
    return refuse(fromName, `${fromName} replaces no earlier version, so there is nothing to go back to`);
  const live = csvs.find((c) => c.metadata.name === toName && !c.metadata.deletionTimestamp);
  const bundle = ctx.catalogs.findBundle(catalogOf(sub), toName);
  if (!live && !bundle && catalogUnread(ctx, catalogOf(sub))) {
    // A manager just (re)started has not read the catalog yet: what it lacks is not known to be
    // missing. Wait for it rather than refuse (the request annotation stays until then), as the
    // resolution does; a catalog that fails to load has a health, and is refused below.
    return { ...view, requeueAfterMs: stepPollMs };
  }
  if (!live && !bundle) {
    return refuse(
      fromName,
      `${toName} is neither installed nor in catalog ${sub.spec.sourceNamespace}/${sub.spec.source}`,
      toName,
    );
  }
  const problems = rollbackCRDProblems(
    toName,
    neededAPIs(live, bundle, !live && bundle ? await readBundle(ctx, catalogOf(sub), toName) : undefined),
    ctx.informers.crds.list() as LiveCRD[],
  );
  if (problems.length > 0) return refuse(fromName, `nothing was changed: ${problems.join('; ')}`, toName);

  const rollback: SubscriptionRollback = {
    phase: RollbackPhase.RollingBack,
    from: fromName,
    to: toName,
    ...base,
  };
  const digest = await catalogDigest(ctx, sub, fromName);
  const held: HeldVersion[] = [
    ...view.held.filter((h) => h.csv !== fromName),
    { csv: fromName, ...(digest !== undefined ? { bundleDigest: digest } : {}), since: formatTime(now) },
  ];
  const history = pushHistory(view.history, {
    csv: fromName,
    ...(from.spec.version ? { version: from.spec.version } : {}),
    time: formatTime(now),
    outcome: HistoryOutcome.Failed,
    message: cause,
  });
  const next = { ...view, rollback, history, held };
  await record(g, sub, next, now);
  ctx.log.info({ from: fromName, to: toName, cause }, 'rolling back');
  void ctx.events.warning(sub, 'RollingBack', `${cause}; rolling back to ${toName}`);
  if (request !== undefined) await dropAnnotation(ctx, sub, RollbackAnnotations.rollback);
  return next;
}

/** Whether the catalog exists but has neither been read nor failed to load yet. */
function catalogUnread(ctx: SubscriptionContext, ref: CatalogRef): boolean {
  return (
    ctx.informers.catalogSources.get(objectKey(ref.namespace, ref.name)) !== undefined &&
    ctx.catalogs.get(ref) === undefined &&
    ctx.catalogs.health(ref) === undefined
  );
}

/**
 * One step of a rollback under way, the one ../install/rollback-step.ts finds from what the
 * caches hold now (./rollback-steps.ts, shared with ClusterExtensions). Finished when the previous
 * CSV is Succeeded again and the objects of its InstallPlan are there to stay.
 */
async function step(
  ctx: SubscriptionContext,
  sub: Subscription,
  csvs: readonly ClusterServiceVersion[],
  view: RollbackView,
): Promise<RollbackView> {
  const rollback = view.rollback!;
  const planName = rollbackPlanName(sub, rollback);
  const outcome = await takeRollbackStep(
    ctx,
    {
      owner: sub,
      namespace: sub.metadata.namespace!,
      from: rollback.from,
      to: rollback.to,
      planName,
      ownsPlan: (ip) => ip.metadata.labels?.[SubscriptionLabel] === sub.metadata.name,
      makePlan: () => createRollbackPlan(ctx, sub, rollback, planName),
    },
    csvs,
  );
  switch (outcome.kind) {
    case 'pending':
      return outcome.requeueAfterMs === undefined
        ? view
        : { ...view, requeueAfterMs: outcome.requeueAfterMs };
    case 'failed':
      return failed(ctx, sub, view, outcome.message);
    case 'done':
      return finished(ctx, sub, view, outcome.to);
  }
}

/** The rollback finished: the version rolled back to runs again. */
function finished(
  ctx: SubscriptionContext,
  sub: Subscription,
  view: RollbackView,
  to: ClusterServiceVersion,
): RollbackView {
  const rollback = view.rollback!;
  const now = ctx.clock.now();
  const done: SubscriptionRollback = {
    ...rollback,
    phase: RollbackPhase.RolledBack,
    completedAt: formatTime(now),
  };
  const history = pushHistory(view.history, {
    csv: to.metadata.name!,
    ...(to.spec.version ? { version: to.spec.version } : {}),
    time: formatTime(now),
    outcome: HistoryOutcome.RolledBack,
  });
  ctx.log.info({ from: rollback.from, to: rollback.to }, 'rolled back');
  void ctx.events.normal(
    sub,
    'RolledBack',
    `${rollback.to} runs again in place of ${rollback.from} (${rollback.cause}); ${rollback.from} is held back until the catalog changes it or a retry is asked for`,
  );
  return { ...view, rollback: done, history };
}

/** A rollback that could not finish: said in status and in an Event, and not tried again by itself. */
async function failed(
  ctx: SubscriptionContext,
  sub: Subscription,
  view: RollbackView,
  message: string,
): Promise<RollbackView> {
  const rollback: SubscriptionRollback = { ...view.rollback!, phase: RollbackPhase.Refused, message };
  void ctx.events.warning(sub, 'RollbackFailed', `rolling back to ${rollback.to}: ${message}`);
  return { ...view, rollback };
}

/** The name of the InstallPlan that reinstates the version rolled back to: the same for the same rollback. */
function rollbackPlanName(sub: Subscription, rollback: SubscriptionRollback): string {
  const id = `${sub.metadata.namespace}/${sub.metadata.name}/${rollback.from}/${rollback.to}/${rollback.startedAt}`;
  return `rollback-${createHash('sha256').update(id).digest('hex').slice(0, 10)}`;
}

/** Creates the InstallPlan that reinstates the version rolled back to, from the Subscription's catalog. */
async function createRollbackPlan(
  ctx: SubscriptionContext,
  sub: Subscription,
  rollback: SubscriptionRollback,
  name: string,
): Promise<void> {
  const namespace = sub.metadata.namespace!;
  const generation = nextGeneration(ctx.informers.installPlans.list(namespace));
  const to = { bundle: rollback.to!, catalog: sub.spec.source, catalogNamespace: sub.spec.sourceNamespace };
  const base = desiredInstallPlan(sub, to, generation);
  const plan = withOwner(
    {
      ...base,
      metadata: {
        ...base.metadata,
        name,
        annotations: { [RollbackAnnotations.rollbackFrom]: rollback.from },
      },
      // A rollback is itself the approval: automatic by the Subscription's deadline, or asked for.
      spec: { ...base.spec, approval: Approval.Automatic, approved: true },
    },
    sub,
    { controller: false, blockOwnerDeletion: false },
  );
  try {
    await ctx.client.request({
      method: 'POST',
      path: collectionPath(Resources.InstallPlan, namespace),
      body: plan,
    });
    ctx.log.info({ installPlan: name, csv: rollback.to }, 'rollback installplan created');
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/**
 * The APIs the version rolled back to needs: the CRDs its CSV owns, from the live CSV or else from
 * the CSV in its catalog bundle (`read`, with its manifests), and its bundle's olm.gvk properties
 * besides.
 */
function neededAPIs(
  live: ClusterServiceVersion | undefined,
  bundle: BundleDoc | undefined,
  read: BundleDoc | undefined,
): NeededAPI[] {
  const decoded = !live && read ? decodeBundle(read) : undefined;
  const csv = live ?? (decoded?.ok ? decoded.value.csv : undefined);
  const owned: NeededAPI[] = (csv?.spec.customresourcedefinitions?.owned ?? []).map((o) => ({
    name: o.name,
    kind: o.kind,
    version: o.version,
  }));
  const provided = (bundle?.properties ?? [])
    .filter((p) => p.type === 'olm.gvk')
    .map((p) => p.value as { group?: string; kind?: string; version?: string })
    .filter((v) => v.kind && v.version)
    .map((v) => ({ group: v.group ?? '', kind: v.kind!, version: v.version! }));
  const known = new Set(owned.map((o) => `${o.kind}/${o.version}`));
  return [...owned, ...provided.filter((p) => !known.has(`${p.kind}/${p.version}`))];
}

/**
 * The fingerprint of a bundle in the Subscription's catalog, over its content (inline manifests
 * read from the catalog's spool: where they are kept changes with every fetch, what they say does
 * not). Undefined when the catalog has no such bundle.
 */
async function catalogDigest(ctx: SubscriptionContext, sub: Subscription, name: string) {
  const bundle = await readBundle(ctx, catalogOf(sub), name);
  return bundle === undefined ? undefined : bundleContentDigest(bundle);
}

/**
 * A catalog bundle with its manifests read (bundle content), or undefined when the catalog has no
 * such bundle. Manifests that cannot be had (the catalog's content was replaced meanwhile) throw,
 * so the reconcile is tried again with the new content.
 */
async function readBundle(
  ctx: Pick<SubscriptionContext, 'bundles'>,
  catalog: CatalogRef,
  name: string,
): Promise<BundleDoc | undefined> {
  const found = await ctx.bundles.objects({ catalog, name });
  if (!found.ok) {
    if (found.reason === BundleContentReason.BundleNotFound) return undefined;
    throw new Error(found.message);
  }
  const read = await found.value.read();
  if (!read.ok) throw new Error(read.message);
  return read.value;
}

const catalogOf = (sub: Subscription) => ({ namespace: sub.spec.sourceNamespace, name: sub.spec.source });

/** Writes the rollback and history to status at once (before acting on them). */
async function record({ ctx, recent }: Guard, sub: Subscription, view: RollbackView, now: number) {
  const next = { ...sub.status, lastUpdated: formatTime(now), history: view.history } as NonNullable<
    Subscription['status']
  >;
  if (view.rollback) next.rollback = view.rollback;
  else delete next.rollback;
  if (view.held.length > 0) next.heldBack = view.held;
  else delete next.heldBack;
  await writeStatus(ctx.applier, {
    resource: Resources.Subscription,
    object: sub,
    next,
    written: (stored) => recent.remember(stored),
  });
}

async function dropAnnotation(ctx: SubscriptionContext, sub: Subscription, key: string) {
  await mergePatch(
    ctx.client,
    objectPath(Resources.Subscription, sub.metadata.name!, sub.metadata.namespace),
    {
      metadata: { annotations: { [key]: null } },
    },
  );
}
