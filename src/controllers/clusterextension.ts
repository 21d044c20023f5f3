/**
 * ClusterExtension controller (OLM v1), on the engine Subscriptions use. Per reconcile:
 * resolve the extension's bundle with v1's rules (src/olmv1/resolve.ts) over the ClusterCatalogs
 * this manager serves; refuse a package a Subscription already manages; wait for the operators
 * the bundle needs (./clusterextension-needs.ts); check its configuration
 * (src/olmv1/bundle-config.ts); give the namespace an OperatorGroup if it has none; make sure the
 * InstallPlan for the resolved bundle exists (the InstallPlan and CSV controllers install, upgrade
 * and retire, as for a Subscription); hold an upgrade to its deadline and roll it back
 * (./clusterextension-rollback.ts); and report in v1's words (./clusterextension-status.ts). How
 * an extension maps onto the engine's objects is in ./clusterextension-plan.ts.
 *
 * No finalizer: what an extension installs is owned by it (ownerReferences on its InstallPlans,
 * its OperatorGroup and its CSVs), so deleting it lets the garbage collector uninstall the
 * operator even while no manager runs. CRDs stay, with every custom resource, as v0 leaves them.
 */
import type { BundleDoc } from '../apis/fbc.js';
import { RecentWrites } from '../kube/recent-writes.js';
import { guardExtension, progressReport, soonest } from './clusterextension-rollback.js';
import { storedRollback, withProgressReport } from './clusterextension-rollback-status.js';
import { bundleInstallModes, checkBundleConfig } from '../olmv1/bundle-config.js';
import { GeneratedByAnnotation } from './clusterextension-dependencies.js';
import { unmetDependencies } from './clusterextension-needs.js';
import type { OwnerReference } from '../apis/meta.js';
import type { ClusterExtension } from '../apis/olmv1.js';
import { ClusterCatalogConditionType, V1Resources } from '../apis/olmv1.js';
import type { InstallPlan } from '../apis/operators.js';
import { CSVPhase, InstallPlanPhase, Resources } from '../apis/operators.js';
import { objectKey } from '../kube/cache.js';
import { collectionPath, objectPath } from '../kube/client.js';
import { isConditionTrue } from '../kube/conditions.js';
import { isAlreadyExists } from '../kube/errors.js';
import { writeStatus } from '../kube/status.js';
import type { ReconcileResult } from '../kube/workqueue.js';
import { packageContent, readServedPackage } from '../olmv1/package-content.js';
import { resolveV1, type V1Catalog } from '../olmv1/resolve.js';
import {
  CatalogNameLabel,
  desiredExtensionPlan,
  extensionGroupStep,
  extensionOwner,
  givenGroup,
  installedBundle,
  isExtensionObject,
  failedPlanRetryAt,
  MigratedFromAnnotation,
  ownedByExtension,
  owningExtension,
} from './clusterextension-plan.js';
import {
  clusterExtensionStatus,
  type ExtensionOutcome,
  type InstalledBundle,
} from './clusterextension-status.js';
import type { Controller, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';
import { deleteIfPresent } from './objects.js';
import { nextGeneration } from './subscription-plan.js';

/** How soon an extension that failed to resolve, or waits for its install, is looked at again. */
const retryMs = 10_000;

const uses = {
  informers: [
    'clusterExtensions',
    'clusterCatalogs',
    'crds',
    'installPlans',
    'csvs',
    'operatorGroups',
    'subscriptions',
    // A rollback waits for the previous version's Deployments (./clusterextension-rollback.ts).
    'deployments',
  ] as const,
  ports: ['applier', 'client', 'clusterCatalogContent', 'clock', 'events'] as const,
};

export type ClusterExtensionContext = ScopedContext<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
>;

const clusterExtensionControllerOwn: Controller<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
> = {
  ...uses,
  name: 'clusterextension',
  kind: V1Resources.ClusterExtension.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    const all = () => {
      for (const ext of informers.clusterExtensions.list()) enqueue(ext.metadata.name ?? '');
    };
    informers.clusterExtensions.on({
      add: (ext) => enqueue(ext.metadata.name ?? ''),
      // Status writes (ours) leave the generation alone.
      update: (old, ext) => {
        if (old.metadata.generation !== ext.metadata.generation || ext.metadata.deletionTimestamp)
          enqueue(ext.metadata.name ?? '');
        // A dependency's progress is its dependent's.
        const dependent = ext.metadata.annotations?.[GeneratedByAnnotation];
        if (dependent !== undefined) enqueue(dependent);
      },
    });
    // New catalog content (a new digest served) or a catalog changing availability: resolve again.
    informers.clusterCatalogs.on({ add: all, update: all, delete: all });
    // The install's progress: the extension's plans and the CSVs it owns.
    const byOwner = (obj: { metadata: { ownerReferences?: OwnerReference[] } }) => {
      const name = owningExtension(obj);
      if (name !== undefined) enqueue(name);
    };
    informers.installPlans.on({ add: byOwner, update: (_, ip) => byOwner(ip), delete: byOwner });
    informers.csvs.on({ add: byOwner, update: (_, csv) => byOwner(csv), delete: byOwner });
    // A Subscription to the same package appearing or going changes who owns it.
    informers.subscriptions.on({ add: all, delete: all });
    // A namespace's OperatorGroup changing may settle or raise a conflict with watchNamespace.
    const inNamespace = (og: { metadata: { namespace?: string } }) => {
      for (const ext of informers.clusterExtensions.list())
        if (ext.spec?.namespace === og.metadata.namespace) enqueue(ext.metadata.name ?? '');
    };
    informers.operatorGroups.on({
      add: inNamespace,
      update: (_, og) => inNamespace(og),
      delete: inNamespace,
    });
  },
  reconcile: (ctx) => {
    // The rollback a reconcile writes is read back by the next even before the cache has it.
    const recent = new RecentWrites();
    return async (name) => reconcileExtension(ctx, name, recent);
  },
};

async function reconcileExtension(
  ctx: ClusterExtensionContext,
  name: string,
  recent: RecentWrites,
): Promise<ReconcileResult | undefined> {
  const cached = ctx.informers.clusterExtensions.get(name);
  const ext = cached && recent.freshest(cached);
  if (!ext || ext.metadata.deletionTimestamp || !ext.spec) return undefined;
  const namespace = ext.spec.namespace;
  const plans = ctx.informers.installPlans
    .list(namespace)
    .filter((ip) => isExtensionObject(ip, name) && !ip.metadata.deletionTimestamp);
  // An operator is owned by one front end: nothing is adopted or installed for a package a
  // Subscription manages.
  const conflict = subscribedElsewhere(ctx, ext);
  const adopted = conflict === undefined ? await adoptedCSVs(ctx, ext) : [];
  const current = installedBundle(plans, (csv) => ctx.informers.csvs.get(objectKey(namespace, csv)), adopted);

  // An upgrade that failed is rolled back, and its version held back from resolution.
  const guard = conflict === undefined ? await guardExtension(ctx, ext, plans, recent) : undefined;
  const outcome: ExtensionOutcome =
    conflict !== undefined
      ? { kind: 'blocked', message: conflict }
      : await decide(ctx, ext, plans, current?.bundle, guard?.heldNames);
  // An adopted CSV has no plan of the extension's to name its image: the catalog's, if it is the one resolved.
  const resolved =
    outcome.kind === 'installed' || outcome.kind === 'progressing' ? outcome.resolved : undefined;
  const image =
    current?.image ?? (resolved?.bundle.name === current?.bundle.name ? resolved?.image : undefined);
  const installed: InstalledBundle | undefined = current && {
    bundle: current.bundle,
    image: image || current.bundle.name,
  };
  const status = clusterExtensionStatus(ext, outcome, installed, ctx.clock.now());
  const progress = guard && progressReport(ctx, ext, guard, outcome, plans);
  await writeStatus(ctx.applier, {
    resource: V1Resources.ClusterExtension,
    object: ext,
    next: progress
      ? withProgressReport(ext, status, progress.report, ctx.clock.now())
      : { ...status, ...storedRollback(ext) },
    written: (stored) => recent.remember(stored),
  });
  const after = soonest(guard?.requeueAfterMs, progress?.requeueAfterMs);
  if (outcome.kind === 'installed' || outcome.kind === 'blocked' || outcome.kind === 'invalid')
    return after === undefined ? undefined : { requeueAfter: after };
  return { requeueAfter: soonest(retryMs, after)! };
}

/** Why the extension's package is another front end's: the Subscription that manages it, if any. */
function subscribedElsewhere(ctx: ClusterExtensionContext, ext: ClusterExtension): string | undefined {
  const pkg = ext.spec!.source.catalog?.packageName;
  // The Subscription the extension is migrated from is the one it takes over, not another owner.
  const migrating = ext.metadata.annotations?.[MigratedFromAnnotation];
  const subscribed = ctx.informers.subscriptions
    .list()
    .find(
      (s) =>
        s.spec.name === pkg &&
        !(s.metadata.namespace === ext.spec!.namespace && s.metadata.name === migrating),
    );
  if (!subscribed) return undefined;
  return `package ${JSON.stringify(pkg)} is managed by Subscription ${subscribed.metadata.namespace}/${subscribed.metadata.name}; ClusterExtension ${ext.metadata.name} cannot install it too (an operator is owned by one front end: delete one of them)`;
}

async function decide(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  plans: readonly InstallPlan[],
  installed: { name: string; version: string } | undefined,
  held?: ReadonlySet<string>,
): Promise<ExtensionOutcome> {
  const source = ext.spec!.source.catalog;
  if (!source) return { kind: 'unresolved', message: 'spec.source.catalog is not set' };
  const resolved = resolveV1(source, await catalogsOf(ctx, source.packageName), installed, held);
  if (!resolved.ok) return { kind: 'unresolved', message: resolved.errors };
  const { bundle, version, catalog, deprecation } = resolved.value;
  const target = {
    bundle: { name: bundle.name, version },
    ...(bundle.image ? { image: bundle.image } : {}),
    ...(deprecation ? { deprecation } : {}),
  };

  // The bundle's configuration (spec.config.inline), as v1 checks it before it installs anything.
  const config = checkBundleConfig({
    config: ext.spec!.config,
    namespace: ext.spec!.namespace,
    bundle: bundle.name,
    installModes: bundleInstallModes(bundle),
    groupGiven: givenGroup(ext, ctx.informers.operatorGroups.list(ext.spec!.namespace)) !== undefined,
  });
  if (!config.ok) return { kind: 'invalid', message: config.message, resolved: target };
  const { watchNamespace } = config.value;

  if (installed?.name === bundle.name)
    // A watchNamespace changed on a live extension retargets its group, and the engine the operator.
    return (await ensureOperatorGroup(ctx, ext, watchNamespace)) ?? { kind: 'installed', resolved: target };

  // v1 words what stands between the resolved bundle and its install as the cause, then the bundle.
  const where = `for resolved bundle ${JSON.stringify(bundle.name)} with version ${JSON.stringify(version)}`;
  const waiting = await unmetDependencies(ctx, ext, bundle);
  if (waiting !== undefined) return { kind: 'progressing', message: `${waiting} ${where}`, resolved: target };

  const blocked = await ensureOperatorGroup(ctx, ext, watchNamespace);
  if (blocked) return blocked;
  const plan = await ensurePlan(ctx, ext, plans, bundle, catalog, installed?.name);
  if (plan.status?.phase === InstallPlanPhase.Failed) {
    const failed = plan.status.conditions?.find((c) => c.status === 'False')?.message ?? plan.status.message;
    // Retried as v1 retries: the plan is made again (and checked again) a while after it failed.
    const retryAt = failedPlanRetryAt(plan, ext);
    if (ctx.clock.now() >= retryAt) {
      await deleteIfPresent(
        ctx.client,
        objectPath(Resources.InstallPlan, plan.metadata.name ?? '', ext.spec!.namespace),
      );
      ctx.log.info(
        { installPlan: plan.metadata.name },
        'failed installplan of the extension deleted, to be made again',
      );
    }
    return {
      kind: 'progressing',
      message: `InstallPlan ${plan.metadata.name} failed: ${failed ?? 'no reason given'} ${where}`,
      resolved: target,
    };
  }
  const csv = ctx.informers.csvs.get(objectKey(ext.spec!.namespace, bundle.name));
  const state =
    plan.status?.phase !== InstallPlanPhase.Complete
      ? `InstallPlan ${plan.metadata.name} is ${plan.status?.phase || 'Planning'}${plan.status?.message ? `: ${plan.status.message}` : ''}`
      : `ClusterServiceVersion ${bundle.name} is ${csv?.status?.phase ?? 'not there yet'}${csv?.status?.message ? `: ${csv.status.message}` : ''}`;
  return { kind: 'progressing', message: `${state} ${where}`, resolved: target };
}

/**
 * The CSVs the extension owns without a plan of its own: adopted from the Subscription it was
 * migrated from (MigratedFromAnnotation). That Subscription's installed CSV is given an
 * ownerReference to the extension here, once it has succeeded, so it stays the extension's after
 * the Subscription is gone and goes with the extension; it is not installed again.
 */
async function adoptedCSVs(ctx: ClusterExtensionContext, ext: ClusterExtension): Promise<string[]> {
  const namespace = ext.spec!.namespace;
  const owned = ctx.informers.csvs
    .list(namespace)
    .filter((c) => ownedByExtension(c, ext))
    .map((c) => c.metadata.name ?? '');
  const from = ext.metadata.annotations?.[MigratedFromAnnotation];
  if (!from) return owned;
  const installed = ctx.informers.subscriptions.get(objectKey(namespace, from))?.status?.installedCSV;
  const csv = installed ? ctx.informers.csvs.get(objectKey(namespace, installed)) : undefined;
  if (!csv || ownedByExtension(csv, ext) || csv.status?.phase !== CSVPhase.Succeeded) return owned;
  // A merge patch replaces the whole list: the resourceVersion makes it refuse a list changed meanwhile.
  await ctx.client.request({
    method: 'PATCH',
    path: objectPath(Resources.ClusterServiceVersion, installed!, namespace),
    contentType: 'application/merge-patch+json',
    body: {
      metadata: {
        resourceVersion: csv.metadata.resourceVersion,
        ownerReferences: [...(csv.metadata.ownerReferences ?? []), extensionOwner(ext)],
      },
    },
  });
  ctx.log.info({ csv: installed, subscription: from }, 'csv adopted by the extension');
  void ctx.events.normal(
    ext,
    'Adopted',
    `ClusterServiceVersion ${namespace}/${installed} of Subscription ${from} adopted`,
  );
  return [...owned, installed!];
}

/** The ClusterCatalogs as v1's resolver reads them, each with its documents of package `pkg`. */
async function catalogsOf(ctx: ClusterExtensionContext, pkg: string): Promise<V1Catalog[]> {
  const out: V1Catalog[] = [];
  for (const cc of ctx.informers.clusterCatalogs.list()) {
    const name = cc.metadata.name ?? '';
    const served = ctx.clusterCatalogContent.served.get(name);
    out.push({
      name,
      priority: cc.spec.priority ?? 0,
      // catalogd's webhook labels every ClusterCatalog with its name, and v1's tutorials select
      // catalogs by that label: Bosun has no webhook, so the label counts here whether set or not.
      labels: { ...cc.metadata.labels, [CatalogNameLabel]: name },
      ...(cc.spec.availabilityMode ? { availabilityMode: cc.spec.availabilityMode } : {}),
      serving:
        served !== undefined && isConditionTrue(cc.status?.conditions, ClusterCatalogConditionType.Serving),
      content: packageContent(served ? await readServedPackage(served, pkg) : []),
    });
  }
  return out;
}

/**
 * The namespace's OperatorGroup as the extension wants it (./clusterextension-plan.ts
 * extensionGroupStep): made, retargeted when it is the extension's own, or, when it is the
 * user's and disagrees with watchNamespace, the outcome that says so.
 */
async function ensureOperatorGroup(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  watchNamespace: string | undefined,
): Promise<ExtensionOutcome | undefined> {
  const namespace = ext.spec!.namespace;
  const step = extensionGroupStep(ext, ctx.informers.operatorGroups.list(namespace), watchNamespace);
  if (step.kind === 'conflict') return { kind: 'blocked', message: step.message };
  if (step.kind === 'retarget') {
    // A merge patch: null removes targetNamespaces, so the group targets every namespace again.
    await ctx.client.request({
      method: 'PATCH',
      path: objectPath(Resources.OperatorGroup, step.name, namespace),
      contentType: 'application/merge-patch+json',
      body: { spec: { targetNamespaces: step.targetNamespaces } },
    });
    ctx.log.info(
      { namespace, targetNamespaces: step.targetNamespaces },
      'operatorgroup of the extension retargeted',
    );
    void ctx.events.normal(
      ext,
      'OperatorGroupRetargeted',
      `OperatorGroup ${namespace}/${step.name} now targets ${step.targetNamespaces ? step.targetNamespaces.join(', ') : 'every namespace'}`,
    );
  }
  if (step.kind !== 'create') return undefined;
  try {
    await ctx.client.request({
      method: 'POST',
      path: collectionPath(Resources.OperatorGroup, namespace),
      body: step.group,
    });
    ctx.log.info({ namespace }, 'operatorgroup created for the extension');
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  return undefined;
}

async function ensurePlan(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  plans: readonly InstallPlan[],
  bundle: Pick<BundleDoc, 'name' | 'image'>,
  catalog: string,
  replaces: string | undefined,
): Promise<InstallPlan> {
  const namespace = ext.spec!.namespace;
  const desired = desiredExtensionPlan(
    ext,
    bundle,
    catalog,
    replaces,
    nextGeneration(ctx.informers.installPlans.list(namespace)),
  );
  const existing = plans.find((p) => p.metadata.name === desired.metadata.name);
  if (existing) return existing;
  const path = collectionPath(Resources.InstallPlan, namespace);
  try {
    const created = await ctx.client.request<InstallPlan>({ method: 'POST', path, body: desired });
    ctx.log.info(
      { installPlan: desired.metadata.name, bundle: bundle.name },
      'installplan created for the extension',
    );
    void ctx.events.normal(
      ext,
      'InstallPlanCreated',
      `InstallPlan ${namespace}/${desired.metadata.name} created for ${bundle.name}`,
    );
    return created;
  } catch (err) {
    // Made by an earlier run whose informer event has not arrived yet: the same plan.
    if (!isAlreadyExists(err)) throw err;
    return ctx.client.request<InstallPlan>({ path: `${path}/${desired.metadata.name}` });
  }
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const clusterExtensionController = reportingForbidden(clusterExtensionControllerOwn, (ctx, key) =>
  [ctx.informers.clusterExtensions.get(key)].filter((o) => o !== undefined),
);
