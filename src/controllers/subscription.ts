/**
 * Subscription controller. The key is a namespace: like OLM, Bosun resolves all Subscriptions of
 * a namespace together, since they share installed operators and the one-bundle-per-package and
 * one-provider-per-API rules.
 *
 * Steps per reconcile: read the namespace (Subscriptions, CSVs, visible catalogs) → resolve →
 * create generated Subscriptions for uncovered dependencies → create one InstallPlan per
 * Subscription that needs an install or upgrade (deterministic name, own approval) → write each
 * Subscription's status if it changed.
 *
 * InstallPlans are created, never applied: an admin approving a Manual plan edits
 * `spec.approved`, and re-applying the desired plan would undo that.
 */
import type { KubeObject } from '../apis/meta.js';
import { SubscriptionConditionReason } from '../apis/conditions.js';
import type { ClusterExtension } from '../apis/olmv1.js';
import { MigratedFromAnnotation } from './clusterextension-plan.js';
import {
  type CatalogSource,
  type ClusterServiceVersion,
  type InstallPlan,
  InstallPlanPhase,
  Resources,
  type Subscription,
  type SubscriptionCatalogHealth,
} from '../apis/operators.js';
import { withOwner } from '../install/ownership.js';
import { objectKey } from '../kube/cache.js';
import { collectionPath } from '../kube/client.js';
import { formatTime } from '../kube/conditions.js';
import { RecentWrites } from '../kube/recent-writes.js';
import { writeStatus } from '../kube/status.js';
import { isAlreadyExists } from '../kube/errors.js';
import { explainText, resolve } from '../resolver/index.js';
import type { ResolutionResult, SubscriptionOutcome } from '../resolver/types.js';
import type { CatalogSnapshot } from '../catalog/content/store.js';
import type { Controller, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';
import { guardUpgrades, type RollbackView, rollingBack } from './subscription-rollback.js';
import {
  type CatalogState,
  desiredInstallPlan,
  type GeneratedSubscription,
  generatedSubscriptions,
  installPlanName,
  nextGeneration,
  resolutionInput,
  type StatusInput,
  SubscriptionLabel,
  subscriptionStatus,
} from './subscription-plan.js';

const uses = {
  informers: [
    'catalogSources',
    'clusterExtensions',
    'crds',
    'csvs',
    'deployments',
    'installPlans',
    'operatorGroups',
    'subscriptions',
  ] as const,
  ports: [
    'applier',
    'bundles',
    'catalogs',
    'client',
    'clock',
    'events',
    'globalNamespace',
    'metrics',
  ] as const,
};

/** What this controller reads and writes through; the manager gives it nothing else. */
export type SubscriptionContext = ScopedContext<(typeof uses.informers)[number], (typeof uses.ports)[number]>;

const subscriptionControllerOwn: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> = {
  ...uses,
  name: 'subscription',
  kind: 'Subscription',
  keyScope: 'namespace',
  watch(ctx, enqueue) {
    const byNamespace = { add: enqueueNs, update: (_: unknown, o: Obj) => enqueueNs(o), delete: enqueueNs };
    type Obj = { metadata?: { namespace?: string } };
    function enqueueNs(o: Obj): void {
      if (o.metadata?.namespace) enqueue(o.metadata.namespace);
    }
    ctx.informers.subscriptions.on(byNamespace);
    ctx.informers.csvs.on(byNamespace);
    ctx.informers.installPlans.on(byNamespace);
    ctx.informers.operatorGroups.on(byNamespace);
    // A catalog's content or health changed: every namespace that can see it resolves again.
    const catalogChanged = (namespace: string) => {
      if (namespace !== ctx.globalNamespace) {
        enqueue(namespace);
        return;
      }
      const namespaces = new Set(ctx.informers.subscriptions.list().map((s) => s.metadata.namespace!));
      for (const ns of namespaces) enqueue(ns);
    };
    ctx.catalogs.onChange((ref) => catalogChanged(ref.namespace));
    // A ClusterExtension taking a package, or letting it go, changes who may install it.
    const extensionChanged = (ext: ClusterExtension) => {
      const pkg = ext.spec?.source.catalog?.packageName;
      for (const sub of ctx.informers.subscriptions.list())
        if (sub.spec.name === pkg) enqueue(sub.metadata.namespace!);
    };
    ctx.informers.clusterExtensions.on({ add: extensionChanged, delete: extensionChanged });
    ctx.informers.catalogSources.on({
      add: (cs) => catalogChanged(cs.metadata.namespace!),
      delete: (cs) => catalogChanged(cs.metadata.namespace!),
    });
  },
  reconcile(ctx) {
    const recent = new RecentWrites();
    return async (namespace) => reconcileNamespace(ctx, namespace, recent);
  },
};

/**
 * One reconcile of a namespace's Subscriptions, as named steps: guard upgrades (roll back a
 * failed one, ./subscription-rollback.ts), resolve them together, create the Subscriptions
 * generated for dependencies, make sure each target has its InstallPlan, then write each
 * Subscription's status.
 */
async function reconcileNamespace(
  ctx: SubscriptionContext,
  namespace: string,
  recent: RecentWrites,
): Promise<{ requeueAfter: number } | undefined> {
  // Each with the status this controller last wrote, should the cache not have it yet.
  const subs = ctx.informers.subscriptions
    .list(namespace)
    .filter((s) => !s.metadata.deletionTimestamp)
    .map((s) => recent.freshest(s));
  if (subs.length === 0) return undefined;
  // An operator is owned by one front end: a Subscription to a package a ClusterExtension
  // manages is neither resolved nor installed, and says why.
  const refused = ownedByExtensions(ctx, subs);
  const rollbacks = await guardUpgrades(ctx, subs, ctx.informers.csvs.list(namespace), recent);
  // A version rolled back from is out of resolution: as if it were neither installed nor offered.
  const held = new Set([...rollbacks.values()].flatMap((v) => v.held.map((h) => h.csv)));
  const csvs = ctx.informers.csvs.list(namespace).filter((c) => !held.has(c.metadata.name!));
  const resolvable = subs.filter((s) => !refused.has(s.metadata.name!));
  const result = resolvable.length > 0 ? resolveNamespace(ctx, namespace, resolvable, csvs, held) : undefined;
  if (result?.ok) {
    for (const g of generatedSubscriptions(result, resolvable))
      await createGeneratedSubscription(ctx, namespace, g);
  }
  // A Subscription rolling back gets no new InstallPlan until its rollback is done.
  const planned = resolvable.filter((s) => !rollingBack(rollbacks.get(s.metadata.name!)));
  const installPlans = result?.ok
    ? await ensureInstallPlans(ctx, planned, result)
    : new Map<string, InstallPlan>();
  await writeStatuses(ctx, namespace, subs, csvs, result, installPlans, rollbacks, recent, refused);
  if (result && !result.ok) {
    for (const sub of resolvable) void ctx.events.warning(sub, 'ResolutionFailed', result.message);
  }
  const due = [...rollbacks.values()].flatMap((v) =>
    v.requeueAfterMs !== undefined ? [v.requeueAfterMs] : [],
  );
  return due.length > 0 ? { requeueAfter: Math.max(0, Math.min(...due)) } : undefined;
}

/** The catalogs without the bundles held back after a rollback (the same objects when none are). */
function withoutHeld(catalogs: CatalogSnapshot[], held: ReadonlySet<string>): CatalogSnapshot[] {
  if (held.size === 0) return catalogs;
  return catalogs.map((c) => ({
    ...c,
    config: {
      ...c.config,
      bundles: c.config.bundles.filter((b) => !held.has(b.name)),
      channels: c.config.channels.map((ch) => ({
        ...ch,
        entries: ch.entries.filter((e) => !held.has(e.name)),
      })),
    },
  }));
}

/**
 * The Subscriptions whose package a ClusterExtension manages, each with why it is not installed.
 * The extension being migrated from a Subscription (MigratedFromAnnotation) leaves that one alone:
 * it goes once the extension has adopted its operator.
 */
function ownedByExtensions(ctx: SubscriptionContext, subs: readonly Subscription[]): Map<string, string> {
  const refused = new Map<string, string>();
  const extensions = ctx.informers.clusterExtensions.list().filter((e) => !e.metadata.deletionTimestamp);
  for (const sub of subs) {
    const ext = extensions.find(
      (e) =>
        e.spec?.source.catalog?.packageName === sub.spec.name &&
        !(
          e.spec.namespace === sub.metadata.namespace &&
          e.metadata.annotations?.[MigratedFromAnnotation] === sub.metadata.name
        ),
    );
    if (ext)
      refused.set(
        sub.metadata.name!,
        `package ${JSON.stringify(sub.spec.name)} is managed by ClusterExtension ${ext.metadata.name}; Subscription ${sub.metadata.namespace}/${sub.metadata.name} cannot install it too (an operator is owned by one front end: delete one of them)`,
      );
  }
  return refused;
}

/**
 * Step 1: the resolution, once every catalog the Subscriptions name has been read at least once;
 * before that a "no such catalog" failure would only be the manager starting up (undefined).
 */
function resolveNamespace(
  ctx: SubscriptionContext,
  namespace: string,
  subs: readonly Subscription[],
  csvs: readonly ClusterServiceVersion[],
  held: ReadonlySet<string>,
): ResolutionResult | undefined {
  const syncing = subs.some((s) => {
    const ref = { namespace: s.spec.sourceNamespace, name: s.spec.source };
    return (
      ctx.informers.catalogSources.get(objectKey(ref.namespace, ref.name)) !== undefined &&
      !ctx.catalogs.get(ref) &&
      !ctx.catalogs.health(ref)
    );
  });
  if (syncing) return undefined;
  const catalogs = withoutHeld(ctx.catalogs.visibleFrom(namespace), held);
  const input = resolutionInput(namespace, subs, csvs, catalogs, ctx.catalogs);
  const started = performance.now();
  // Resolved once, with the explanation: it says which bundle needs each dependency (for
  // inherited approvals), and a failure's message comes from it.
  const result = resolve(input, { explain: true });
  ctx.metrics.resolution((performance.now() - started) / 1000);
  return result;
}

/** Step 3: the InstallPlan of each Subscription's target, by Subscription name. */
async function ensureInstallPlans(
  ctx: SubscriptionContext,
  subs: readonly Subscription[],
  result: Extract<ResolutionResult, { ok: true }>,
): Promise<Map<string, InstallPlan>> {
  const installPlans = new Map<string, InstallPlan>();
  for (const outcome of result.subscriptions) {
    const sub = subs.find((s) => s.metadata.name === outcome.subscription);
    if (!sub) continue;
    const ip = await ensureInstallPlan(ctx, sub, outcome);
    if (ip) installPlans.set(outcome.subscription, ip);
  }
  return installPlans;
}

/** Step 4: each Subscription's status, written where it changed. */
async function writeStatuses(
  ctx: SubscriptionContext,
  namespace: string,
  subs: readonly Subscription[],
  csvs: readonly ClusterServiceVersion[],
  result: ResolutionResult | undefined,
  installPlans: ReadonlyMap<string, InstallPlan>,
  rollbacks: ReadonlyMap<string, RollbackView>,
  recent: RecentWrites,
  refused: ReadonlyMap<string, string>,
) {
  const now = ctx.clock.now();
  const csvByName = new Map(csvs.map((c) => [c.metadata.name!, c]));
  const health = catalogHealth(ctx, namespace, now);
  for (const sub of subs) {
    const name = sub.metadata.name!;
    const ip =
      installPlans.get(name) ??
      (sub.status?.installPlanRef?.name
        ? ctx.informers.installPlans.get(objectKey(namespace, sub.status.installPlanRef.name))
        : undefined);
    const input: StatusInput = {
      sub,
      now,
      resolution: refused.has(name)
        ? {
            ok: false,
            reason: SubscriptionConditionReason.ConstraintsNotSatisfiable,
            message: refused.get(name)!,
          }
        : subscriptionResolution(result, name),
      catalogHealth: health,
      catalog: catalogState(ctx, sub),
      ...(ip ? { installPlan: ip } : {}),
      csvs: csvByName,
      completedPlans: ctx.informers.installPlans
        .list(namespace)
        .filter(
          (p) =>
            p.metadata.labels?.[SubscriptionLabel] === name && p.status?.phase === InstallPlanPhase.Complete,
        ),
      rollback: rollbacks.get(name) ?? {
        rollback: undefined,
        history: sub.status?.history ?? [],
        held: sub.status?.heldBack ?? [],
      },
    };
    const status = subscriptionStatus(input);
    const written = (stored: KubeObject) => recent.remember(stored);
    if (
      await writeStatus(ctx.applier, { resource: Resources.Subscription, object: sub, next: status, written })
    ) {
      ctx.log.debug(
        { subscription: name, state: status.state, currentCSV: status.currentCSV },
        'subscription status',
      );
    }
  }
}

function subscriptionResolution(
  result: ResolutionResult | undefined,
  name: string,
): StatusInput['resolution'] {
  if (!result) return { ok: 'skipped' };
  if (!result.ok) {
    const reason =
      result.reason === 'ConstraintsNotSatisfiable'
        ? SubscriptionConditionReason.ConstraintsNotSatisfiable
        : SubscriptionConditionReason.ErrorPreventedResolution;
    return { ok: false, reason, message: explainText(result) };
  }
  const outcome = result.subscriptions.find((o) => o.subscription === name);
  return outcome ? { ok: true, outcome } : { ok: 'skipped' };
}

/** Finds or creates the InstallPlan for the Subscription's target; none when nothing is to be installed. */
async function ensureInstallPlan(
  ctx: SubscriptionContext,
  sub: Subscription,
  outcome: SubscriptionOutcome,
): Promise<InstallPlan | undefined> {
  const namespace = sub.metadata.namespace!;
  const name = installPlanName(namespace, sub.metadata.name!, outcome.bundle);
  const existing = ctx.informers.installPlans.get(objectKey(namespace, name));
  if (existing || outcome.state === 'at-latest') return existing;
  const generation = nextGeneration(ctx.informers.installPlans.list(namespace));
  const desired = withOwner(desiredInstallPlan(sub, outcome, generation), sub, {
    controller: false,
    blockOwnerDeletion: false,
  });
  try {
    const created = await ctx.client.request<InstallPlan>({
      method: 'POST',
      path: collectionPath(Resources.InstallPlan, namespace),
      body: desired,
    });
    ctx.log.info(
      { installPlan: name, csv: outcome.bundle, approval: desired.spec.approval },
      'installplan created',
    );
    void ctx.events.normal(
      sub,
      'InstallPlanCreated',
      `InstallPlan ${name} created for ${outcome.bundle} (${desired.spec.approval})`,
    );
    return created;
  } catch (err) {
    // Made by an earlier run whose informer event has not arrived yet: the same plan.
    if (!isAlreadyExists(err)) throw err;
    return ctx.client.request<InstallPlan>({
      path: `${collectionPath(Resources.InstallPlan, namespace)}/${name}`,
    });
  }
}

async function createGeneratedSubscription(
  ctx: SubscriptionContext,
  namespace: string,
  g: GeneratedSubscription,
): Promise<void> {
  if (ctx.informers.subscriptions.get(objectKey(namespace, g.name))) return;
  const body: Subscription = {
    apiVersion: `${Resources.Subscription.group}/${Resources.Subscription.version}`,
    kind: 'Subscription',
    metadata: { name: g.name, namespace },
    spec: {
      name: g.package,
      channel: g.channel,
      source: g.source,
      sourceNamespace: g.sourceNamespace,
      installPlanApproval: g.approval,
    },
  };
  try {
    await ctx.client.request({
      method: 'POST',
      path: collectionPath(Resources.Subscription, namespace),
      body,
    });
    ctx.log.info(
      { subscription: g.name, package: g.package, requiredBy: g.requiredBy },
      'dependency subscription created',
    );
    const by = g.requiredBy ? ctx.informers.subscriptions.get(objectKey(namespace, g.requiredBy)) : undefined;
    if (by) {
      void ctx.events.normal(
        by,
        'DependencySubscriptionCreated',
        `Subscription ${g.name} created for dependency ${g.package}`,
      );
    }
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** Every CatalogSource the namespace can see, with its health. */
function catalogHealth(
  ctx: SubscriptionContext,
  namespace: string,
  now: number,
): SubscriptionCatalogHealth[] {
  const sources: CatalogSource[] = [...ctx.informers.catalogSources.list(namespace)];
  if (namespace !== ctx.globalNamespace)
    sources.push(...ctx.informers.catalogSources.list(ctx.globalNamespace));
  return sources
    .map((cs) => ({
      catalogSourceRef: {
        apiVersion: cs.apiVersion,
        kind: 'CatalogSource',
        name: cs.metadata.name,
        namespace: cs.metadata.namespace,
        uid: cs.metadata.uid,
      },
      lastUpdated: formatTime(now),
      healthy:
        ctx.catalogs.health({ namespace: cs.metadata.namespace!, name: cs.metadata.name! })?.healthy ?? false,
    }))
    .sort((a, b) =>
      `${a.catalogSourceRef.namespace}/${a.catalogSourceRef.name}`.localeCompare(
        `${b.catalogSourceRef.namespace}/${b.catalogSourceRef.name}`,
      ),
    );
}

/** The health of the catalog a Subscription names, with a message saying what to fix. */
function catalogState(ctx: SubscriptionContext, sub: Subscription): CatalogState {
  const ref = { namespace: sub.spec.sourceNamespace, name: sub.spec.source };
  const where = `CatalogSource ${ref.namespace}/${ref.name}`;
  if (!ctx.informers.catalogSources.get(objectKey(ref.namespace, ref.name))) {
    return {
      healthy: false,
      message: `${where} (spec.source, spec.sourceNamespace) does not exist: create it, or fix the Subscription's spec.source and spec.sourceNamespace`,
    };
  }
  const health = ctx.catalogs.health(ref);
  if (!health) return { healthy: false, message: `${where} has not been read yet` };
  if (!health.healthy)
    return { healthy: false, message: `${where} is unhealthy: ${health.message ?? 'unknown error'}` };
  return { healthy: true };
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const subscriptionController = reportingForbidden(subscriptionControllerOwn, (ctx, namespace) =>
  ctx.informers.subscriptions.list(namespace),
);
