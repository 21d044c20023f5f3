/**
 * A ClusterExtension's progress deadline and automatic rollback, the controller's I/O side (the
 * rules: ../olmv1/progress-deadline.ts, ../install/rollback.ts, and what is reported:
 * ./clusterextension-rollback-status.ts). Each reconcile of an extension, before it resolves:
 *
 * - an upgrade whose new CSV missed the deadline, or Failed for a reason reinstalling would not fix
 *   (upgradeHealth, as for Subscriptions), starts a rollback: written to the extension's status
 *   (`status.rollback`, and the version in `status.heldBack`) before anything is removed;
 * - a rollback under way takes its next step, decided from what the cluster holds
 *   (./rollback-steps.ts, shared with Subscriptions): the previous CSV, still there and Replacing,
 *   is reinstated by a rollback InstallPlan that keeps every live CRD, the failed CSV and its
 *   InstallPlans go, and custom resources stay;
 * - the versions held back are kept out of resolution until the extension's spec (generation) or
 *   the catalog's bundle of the version changes.
 * After it resolves, an install or upgrade still under way past its deadline is reported as v1
 * reports it (`Progressing` False, `ProgressDeadlineExceeded`), also when nothing can be rolled
 * back (a first install).
 */
import { createHash } from 'node:crypto';
import type { ClusterExtension } from '../apis/olmv1.js';
import { V1Resources } from '../apis/olmv1.js';
import { type ClusterServiceVersion, type InstallPlan, Resources, RollbackPhase } from '../apis/operators.js';
import {
  bundleContentDigest,
  healthClockStart,
  type LiveCRD,
  RollbackAnnotations,
  rollbackCRDProblems,
  upgradeHealth,
} from '../install/rollback.js';
import { collectionPath } from '../kube/client.js';
import { formatTime } from '../kube/conditions.js';
import { isAlreadyExists } from '../kube/errors.js';
import type { RecentWrites } from '../kube/recent-writes.js';
import { writeStatus } from '../kube/status.js';
import { packageContent, readServedPackage } from '../olmv1/package-content.js';
import {
  attemptStart,
  deadlineExceededMessage,
  deadlineState,
  extensionDeadline,
  ReasonProgressDeadlineExceeded,
} from './clusterextension-deadline.js';
import type { ClusterExtensionContext } from './clusterextension.js';
import {
  BundleImageAnnotation,
  desiredExtensionPlan,
  isExtensionObject,
  ownedByExtension,
  ReplacesAnnotation,
} from './clusterextension-plan.js';
import {
  type ExtensionHeldVersion,
  type ExtensionRollback,
  ExtensionRollbackReason,
  foreignCSVs,
  type ProgressReport,
  stillHeldBack,
  storedRollback,
} from './clusterextension-rollback-status.js';
import type { ExtensionOutcome } from './clusterextension-status.js';
import { takeRollbackStep } from './rollback-steps.js';
import { nextGeneration } from './subscription-plan.js';

/** The extension's rollback after acting on it, before resolution. */
export interface ExtensionGuard {
  rollback?: ExtensionRollback;
  held: ExtensionHeldVersion[];
  /** The bundles resolution must not pick. */
  heldNames: ReadonlySet<string>;
  requeueAfterMs?: number;
}

/** Looks at the extension's upgrade and rollback, and acts on them (see the top of this file). */
export async function guardExtension(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  plans: readonly InstallPlan[],
  recent: RecentWrites,
): Promise<ExtensionGuard> {
  const namespace = ext.spec!.namespace;
  const generation = ext.metadata.generation ?? 0;
  const now = ctx.clock.now();
  const stored = storedRollback(ext);
  let rollback = stored.rollback;
  const rollingBack = () => rollback?.phase === RollbackPhase.RollingBack;
  const digests = new Map<ExtensionHeldVersion, string | undefined | 'unknown'>();
  for (const h of stored.heldBack ?? []) digests.set(h, await catalogDigest(ctx, ext, h.catalog, h.csv));
  // The version of a rollback under way stays held, whatever changed meanwhile.
  let held = (stored.heldBack ?? []).filter(
    (h) =>
      (rollingBack() && h.csv === rollback?.from) ||
      stillHeldBack([h], generation, (x) => digests.get(x)).length > 0,
  );
  const csvs = ctx.informers.csvs.list(namespace);
  let requeueAfterMs: number | undefined;

  const deadline = extensionDeadline(ext);
  if ('problem' in deadline) void ctx.events.warning(ext, 'InvalidUpgradeDeadline', deadline.problem);
  const target = rollingBack() ? undefined : upgradeTarget(plans, csvs, ext);
  const last = stored.rollback;
  if (
    target &&
    // A version already rolled back from (or refused) under this spec is not judged again.
    !(last !== undefined && last.from === target.csv.metadata.name && last.generation === generation) &&
    deadline.ms !== null
  ) {
    const health = upgradeHealth(target.csv, deadline.ms, now);
    if (health.kind === 'waiting' && health.dueInMs !== undefined) requeueAfterMs = health.dueInMs;
    if (health.kind === 'failed') {
      const started = await start(ctx, ext, target, csvs, health.cause, deadline.ms, now);
      const r = started.rollback;
      rollback = r;
      if (started.held) {
        held = [...held.filter((h) => h.csv !== started.held!.csv), started.held];
        await writeStatus(ctx.applier, {
          resource: V1Resources.ClusterExtension,
          object: ext,
          next: { ...ext.status, rollback: r, heldBack: held },
          written: (s) => recent.remember(s),
        });
        ctx.log.info({ from: r.from, to: r.to, cause: r.cause }, 'rolling back');
        void ctx.events.warning(ext, 'RollingBack', `${r.cause}; rolling back to ${r.to}`);
      } else {
        void ctx.events.warning(ext, 'RollbackRefused', `${r.cause}: ${r.message ?? ''}`);
      }
    }
  }

  // A rollback under way acts only on CSVs the extension owns: its status is data anyone allowed
  // to write the status subresource can change, and must not steer the manager into deleting or
  // reinstating another operator's CSV.
  const foreign = rollingBack() ? foreignCSVs(rollback!, csvs, (c) => ownedByExtension(c, ext)) : [];
  if (foreign.length > 0) {
    const message = `status.rollback names ${foreign.map((n) => `ClusterServiceVersion ${namespace}/${n}`).join(' and ')}, which ClusterExtension ${ext.metadata.name} does not own; nothing was changed`;
    rollback = { ...rollback!, phase: RollbackPhase.Refused, message };
    void ctx.events.warning(ext, 'RollbackRefused', message);
  }

  if (rollingBack()) {
    const r = rollback!;
    const planName = rollbackPlanName(ext, r);
    const outcome = await takeRollbackStep(
      ctx,
      {
        owner: ext,
        namespace,
        from: r.from,
        to: r.to,
        planName,
        // Its labels and its ownerReference: labels alone anyone may put on a plan.
        ownsPlan: (ip) =>
          isExtensionObject(ip, ext.metadata.name) &&
          (ip.metadata.ownerReferences ?? []).some((o) => o.uid === ext.metadata.uid),
        makePlan: () => createRollbackPlan(ctx, ext, r, planName, plans),
      },
      csvs,
    );
    if (outcome.kind === 'pending') requeueAfterMs = outcome.requeueAfterMs;
    else if (outcome.kind === 'failed') {
      rollback = { ...r, phase: RollbackPhase.Refused, message: outcome.message };
      void ctx.events.warning(ext, 'RollbackFailed', `rolling back to ${r.to}: ${outcome.message}`);
    } else {
      rollback = { ...r, phase: RollbackPhase.RolledBack, completedAt: formatTime(now) };
      ctx.log.info({ from: r.from, to: r.to }, 'rolled back');
      void ctx.events.normal(
        ext,
        'RolledBack',
        `${r.to} runs again in place of ${r.from} (${r.cause}); ${r.from} is held back until the extension's spec or the catalog's bundle of it changes`,
      );
    }
  }
  return {
    ...(rollback ? { rollback } : {}),
    held,
    heldNames: new Set(held.map((h) => h.csv)),
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

/** The CSV of the extension's upgrade under way (its plan names what it replaces), and its plan. */
function upgradeTarget(
  plans: readonly InstallPlan[],
  csvs: readonly ClusterServiceVersion[],
  ext: ClusterExtension,
): { csv: ClusterServiceVersion; plan: InstallPlan } | undefined {
  const upgrades = plans
    .filter(
      (p) =>
        p.metadata.annotations?.[ReplacesAnnotation] !== undefined &&
        p.metadata.annotations[RollbackAnnotations.rollbackFrom] === undefined,
    )
    .sort((a, b) => (b.spec.generation ?? 0) - (a.spec.generation ?? 0));
  for (const plan of upgrades) {
    const csv = csvs.find(
      (c) =>
        c.metadata.name === plan.spec.clusterServiceVersionNames[0] &&
        !c.metadata.deletionTimestamp &&
        ownedByExtension(c, ext),
    );
    // `spec.replaces` is written by the plan only while the CSV it replaces is there.
    if (csv?.spec.replaces) return { csv, plan };
  }
  return undefined;
}

/** A rollback decided: under way (with the version to hold back), or refused (nothing changes). */
async function start(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  target: { csv: ClusterServiceVersion; plan: InstallPlan },
  csvs: readonly ClusterServiceVersion[],
  healthCause: string,
  deadlineMs: number,
  now: number,
): Promise<{ rollback: ExtensionRollback; held?: ExtensionHeldVersion }> {
  const { csv } = target;
  const from = csv.metadata.name!;
  const to = csv.spec.replaces!;
  // A CSV Failed for good fails whatever the deadline; past the deadline otherwise.
  const failedForGood = upgradeHealth(csv, Number.MAX_SAFE_INTEGER, now).kind === 'failed';
  const lastStatus = `ClusterServiceVersion ${from} is ${csv.status?.phase || 'not yet reconciled'}${csv.status?.message ? `: ${csv.status.message}` : ''}`;
  const rollback: ExtensionRollback = {
    phase: RollbackPhase.RollingBack,
    from,
    to,
    cause: failedForGood ? healthCause : deadlineExceededMessage(deadlineMs, lastStatus),
    reason: failedForGood ? ExtensionRollbackReason.RolledBack : ReasonProgressDeadlineExceeded,
    generation: ext.metadata.generation ?? 0,
    startedAt: formatTime(now),
  };
  const refuse = (message: string) => ({
    rollback: { ...rollback, phase: RollbackPhase.Refused, message },
  });
  const live = csvs.find((c) => c.metadata.name === to && !c.metadata.deletionTimestamp);
  if (!live) return refuse(`${to} is no longer installed, so there is nothing to go back to`);
  // A rollback never replaces a live CRD: going back is refused when the newer CRD no longer
  // serves a version the older operator needs.
  const needed = (live.spec.customresourcedefinitions?.owned ?? []).map((o) => ({
    name: o.name,
    kind: o.kind,
    version: o.version,
  }));
  const problems = rollbackCRDProblems(to, needed, ctx.informers.crds.list() as LiveCRD[]);
  if (problems.length > 0) return refuse(`nothing was changed: ${problems.join('; ')}`);
  const catalog = target.plan.spec.source ?? '';
  const digest = await catalogDigest(ctx, ext, catalog, from);
  return {
    rollback,
    held: {
      csv: from,
      ...(typeof digest === 'string' && digest !== 'unknown' ? { bundleDigest: digest } : {}),
      since: formatTime(now),
      generation: rollback.generation,
      catalog,
    },
  };
}

/**
 * The fingerprint of bundle `name` in ClusterCatalog `catalog` now: undefined when the catalog (or
 * its bundle) is gone, `unknown` while the catalog's content has not been read yet.
 */
async function catalogDigest(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  catalog: string,
  name: string,
): Promise<string | undefined | 'unknown'> {
  if (!ctx.informers.clusterCatalogs.get(catalog)) return undefined;
  const served = ctx.clusterCatalogContent.served.get(catalog);
  if (!served) return 'unknown';
  // The package is the extension's: another package means another spec, which lifts the hold anyway.
  const content = packageContent(
    await readServedPackage(served, ext.spec?.source.catalog?.packageName ?? ''),
  );
  return bundleContentDigest(content.bundles.find((b) => b.name === name));
}

/** The name of the InstallPlan that reinstates the version rolled back to: the same for the same rollback. */
function rollbackPlanName(ext: ClusterExtension, rollback: ExtensionRollback): string {
  const id = `ClusterExtension/${ext.metadata.uid ?? ''}/${rollback.from}/${rollback.to}/${rollback.startedAt}`;
  return `rollback-${createHash('sha256').update(id).digest('hex').slice(0, 10)}`;
}

/**
 * Creates the InstallPlan that reinstates the version rolled back to, as the extension's plans
 * are made (owned by it, from the catalog its earlier plan named), marked as a rollback so that
 * it keeps every live CRD.
 */
async function createRollbackPlan(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  rollback: ExtensionRollback,
  name: string,
  plans: readonly InstallPlan[],
): Promise<void> {
  const namespace = ext.spec!.namespace;
  const to = rollback.to!;
  const earlier =
    plans.find(
      (p) =>
        p.spec.clusterServiceVersionNames.includes(to) &&
        p.metadata.annotations?.[RollbackAnnotations.rollbackFrom] === undefined,
    ) ?? plans.find((p) => p.spec.clusterServiceVersionNames.includes(rollback.from));
  const base = desiredExtensionPlan(
    ext,
    { name: to, image: earlier?.metadata.annotations?.[BundleImageAnnotation] ?? '' },
    earlier?.spec.source ?? '',
    undefined,
    nextGeneration(ctx.informers.installPlans.list(namespace)),
  );
  const plan: InstallPlan = {
    ...base,
    metadata: {
      ...base.metadata,
      name,
      annotations: { ...base.metadata.annotations, [RollbackAnnotations.rollbackFrom]: rollback.from },
    },
  };
  try {
    await ctx.client.request({
      method: 'POST',
      path: collectionPath(Resources.InstallPlan, namespace),
      body: plan,
    });
    ctx.log.info({ installPlan: name, csv: to }, 'rollback installplan created');
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/**
 * What to report of the deadline and rollback after resolution: the install or upgrade under way
 * (`outcome` progressing) past its deadline, timed from the first of its InstallPlans and its CSV
 * to be created; and when to look again so the deadline is seen when it passes.
 */
export function progressReport(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  guard: ExtensionGuard,
  outcome: ExtensionOutcome,
  plans: readonly InstallPlan[],
): { report: ProgressReport; requeueAfterMs?: number } {
  const report: ProgressReport = {
    ...(guard.rollback ? { rollback: guard.rollback } : {}),
    held: guard.held,
  };
  const ms = extensionDeadline(ext).ms;
  if (outcome.kind !== 'progressing' || ms === null) return { report };
  const bundle = outcome.resolved.bundle.name;
  const csv = ctx.informers.csvs
    .list(ext.spec!.namespace)
    .find((c) => c.metadata.name === bundle && !c.metadata.deletionTimestamp);
  // A CSV that waits on its operator's upgrade gate is not late (as for Subscriptions).
  if (csv && healthClockStart(csv) === undefined) return { report };
  const start = attemptStart([
    ...plans
      .filter((p) => p.spec.clusterServiceVersionNames.includes(bundle))
      .map((p) => p.metadata.creationTimestamp),
    csv?.metadata.creationTimestamp,
  ]);
  const state = deadlineState(start, ms, ctx.clock.now());
  if (state.kind === 'waiting') return { report, requeueAfterMs: state.dueInMs };
  if (state.kind !== 'exceeded') return { report };
  const message = deadlineExceededMessage(ms, outcome.message);
  const previous = ext.status?.conditions?.find((c) => c.type === 'Progressing');
  if (previous?.reason !== ReasonProgressDeadlineExceeded)
    void ctx.events.warning(ext, ReasonProgressDeadlineExceeded, message);
  return { report: { ...report, deadlineExceeded: message } };
}

/** The soonest of the delays given, if any. */
export function soonest(...delays: (number | undefined)[]): number | undefined {
  const set = delays.filter((d): d is number => d !== undefined);
  return set.length > 0 ? Math.max(0, Math.min(...set)) : undefined;
}
