/**
 * Pure helpers of the Subscription controller: the resolver's input built from one namespace's
 * objects, deterministic names for what the controller creates, approvals inherited by generated
 * Subscriptions, and the status each Subscription should show. No clients, no clock.
 */
import { createHash } from 'node:crypto';
import type { Property } from '../apis/fbc.js';
import type { ObjectReference } from '../apis/meta.js';
import {
  Approval,
  type ClusterServiceVersion,
  CSVPhase,
  type InstallPlan,
  InstallPlanPhase,
  Resources,
  type Subscription,
  type SubscriptionCatalogHealth,
  type SubscriptionCondition,
  type HeldVersion,
  type SubscriptionHistoryEntry,
  type SubscriptionRollback,
  SubscriptionState,
  HistoryOutcome,
  RollbackPhase,
  type SubscriptionStatus,
} from '../apis/operators.js';
import { CSVReason, SubscriptionConditionReason, SubscriptionConditionType } from '../apis/conditions.js';
import { CopiedFromLabel } from '../install/ownership.js';
import { formatTime, removeCondition, setCondition } from '../kube/conditions.js';
import { parseTolerant } from '../olm/version.js';
import { pushHistory } from '../install/rollback.js';
import type {
  InstalledOperator,
  ResolutionInput,
  ResolutionResult,
  SubscriptionOutcome,
} from '../resolver/types.js';
import type { CatalogSnapshot, CatalogStore } from '../catalog/content/store.js';
import { InstallPlanSubscriptionLabel } from './context.js';

/** Label on InstallPlans naming the Subscription they are for (see context.ts). */
export const SubscriptionLabel = InstallPlanSubscriptionLabel;
/** CSV annotation (set by opm/operator-sdk) with the bundle's properties as JSON. */
export const PropertiesAnnotation = 'operatorframework.io/properties';

/**
 * The InstallPlan for `csv` of one Subscription. Derived from namespace, Subscription and CSV
 * only, so a manager that restarts mid-install finds the plan it made instead of making another.
 */
export function installPlanName(namespace: string, subscription: string, csv: string): string {
  const h = createHash('sha256').update(`${namespace}/${subscription}/${csv}`).digest('hex');
  return `install-${h.slice(0, 10)}`;
}

/** OLM's name for a Subscription it generates for a dependency. */
export function generatedSubscriptionName(
  pkg: string,
  channel: string,
  source: string,
  sourceNamespace: string,
): string {
  const name = `${pkg}-${channel}-${source}-${sourceNamespace}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  if (name.length <= 253) return name;
  const h = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.slice(0, 242)}-${h}`;
}

function isCopy(csv: ClusterServiceVersion): boolean {
  return csv.metadata.labels?.[CopiedFromLabel] !== undefined || csv.status?.reason === 'Copied';
}

function annotatedProperties(csv: ClusterServiceVersion): Property[] {
  const text = csv.metadata.annotations?.[PropertiesAnnotation];
  if (!text) return [];
  try {
    const parsed = JSON.parse(text) as { properties?: Property[] };
    return Array.isArray(parsed.properties) ? parsed.properties : [];
  } catch {
    return [];
  }
}

/** `spec.version` as OLM decodes it; kept as written when even the tolerant parse fails. */
function tolerantVersion(text: string | undefined): string | undefined {
  return text === undefined ? undefined : (parseTolerant(text)?.text ?? text);
}

/**
 * The operators installed in a namespace, as the resolver sees them: each CSV (not a copy),
 * matched to its bundle in the catalogs (the Subscription's own catalog first) for its package
 * and properties. While an upgrade is under way the old and the new CSV both exist; the one the
 * other replaces is left out, since the resolver allows one bundle per package.
 */
export function installedOperators(
  subscriptions: readonly Subscription[],
  csvs: readonly ClusterServiceVersion[],
  catalogs: readonly CatalogSnapshot[],
  bundles: Pick<CatalogStore, 'findBundle'>,
): InstalledOperator[] {
  const live = csvs.filter((c) => !isCopy(c) && !c.metadata.deletionTimestamp);
  const replaced = new Set(live.map((c) => c.spec.replaces).filter((r): r is string => !!r));
  const out: InstalledOperator[] = [];
  for (const csv of live) {
    const name = csv.metadata.name!;
    if (replaced.has(name)) continue;
    const sub = subscriptions.find((s) => s.status?.installedCSV === name || s.status?.currentCSV === name);
    const fromCatalog = sub
      ? catalogs.find((c) => c.ref.name === sub.spec.source && c.ref.namespace === sub.spec.sourceNamespace)
      : undefined;
    const ordered = fromCatalog ? [fromCatalog, ...catalogs.filter((c) => c !== fromCatalog)] : catalogs;
    let bundle: CatalogSnapshot['config']['bundles'][number] | undefined;
    for (const c of ordered) {
      bundle = bundles.findBundle(c.ref, name);
      if (bundle) break;
    }
    const properties = bundle?.properties ?? annotatedProperties(csv);
    const pkgProp = properties.find((p) => p.type === 'olm.package')?.value as
      { packageName?: string; version?: string } | undefined;
    const pkg = bundle?.package ?? pkgProp?.packageName ?? sub?.spec.name;
    // OLM reads a CSV's spec.version with blang's ParseTolerant (`v2.1` is 2.1.0).
    const version = tolerantVersion(csv.spec.version) ?? pkgProp?.version;
    // Without a package the resolver cannot place a CSV; it is left for whoever installed it.
    if (!pkg || !version) continue;
    out.push({
      name,
      package: pkg,
      version,
      properties,
      ...(sub ? { catalog: { name: sub.spec.source, namespace: sub.spec.sourceNamespace } } : {}),
    });
  }
  return out;
}

/** The resolver's input for one namespace. */
export function resolutionInput(
  namespace: string,
  subscriptions: readonly Subscription[],
  csvs: readonly ClusterServiceVersion[],
  catalogs: readonly CatalogSnapshot[],
  bundles: Pick<CatalogStore, 'findBundle'>,
): ResolutionInput {
  return {
    namespace,
    catalogs: catalogs.map((c) => ({
      name: c.ref.name,
      namespace: c.ref.namespace,
      priority: c.priority,
      config: c.config,
    })),
    installed: installedOperators(subscriptions, csvs, catalogs, bundles),
    subscriptions: subscriptions.map((s) => ({
      name: s.metadata.name!,
      namespace,
      package: s.spec.name,
      ...(s.spec.channel ? { channel: s.spec.channel } : {}),
      source: s.spec.source,
      sourceNamespace: s.spec.sourceNamespace,
      ...(s.spec.startingCSV ? { startingCSV: s.spec.startingCSV } : {}),
    })),
  };
}

export interface GeneratedSubscription {
  name: string;
  package: string;
  channel: string;
  source: string;
  sourceNamespace: string;
  approval: Approval;
  /** The Subscription whose bundle (directly or through other dependencies) needs it. */
  requiredBy?: string;
}

/**
 * Subscriptions to create for dependencies no Subscription covers yet. Each inherits the
 * approval of the Subscription that needs it (followed through chains of dependencies), so a
 * Manual Subscription's dependencies wait for approval too, and an Automatic one's do not.
 */
export function generatedSubscriptions(
  result: Extract<ResolutionResult, { ok: true }>,
  subscriptions: readonly Subscription[],
): GeneratedSubscription[] {
  const subscribed = new Set(subscriptions.map((s) => s.spec.name));
  const deps = result.steps.filter((s) => s.reason === 'dependency' && !subscribed.has(s.package));
  if (deps.length === 0) return [];
  const subByName = new Map(subscriptions.map((s) => [s.metadata.name!, s]));
  const subOfBundle = new Map(result.subscriptions.map((o) => [o.bundle, o.subscription]));
  const requiredBy = new Map(
    (result.explanation?.dependencies ?? []).map((d) => [d.chosen.bundle, d.requiredBy.bundle]),
  );
  const owner = (bundle: string): string | undefined => {
    let at: string | undefined = bundle;
    for (let i = 0; at !== undefined && i < 64; i++) {
      const sub = subOfBundle.get(at);
      if (sub) return sub;
      at = requiredBy.get(at);
    }
    return undefined;
  };
  return deps.map((step) => {
    const by = owner(step.bundle);
    const approval = (by ? subByName.get(by)?.spec.installPlanApproval : undefined) ?? Approval.Automatic;
    return {
      name: generatedSubscriptionName(step.package, step.channel, step.catalog, step.catalogNamespace),
      package: step.package,
      channel: step.channel,
      source: step.catalog,
      sourceNamespace: step.catalogNamespace,
      approval,
      ...(by ? { requiredBy: by } : {}),
    };
  });
}

/** The generation of the next InstallPlan of a namespace: one past the highest of its plans. */
export function nextGeneration(plans: readonly InstallPlan[]): number {
  return Math.max(0, ...plans.map((ip) => ip.spec.generation ?? 0)) + 1;
}

/** The InstallPlan a Subscription should have for its target CSV (created when missing). */
export function desiredInstallPlan(
  sub: Subscription,
  outcome: Pick<SubscriptionOutcome, 'bundle' | 'catalog' | 'catalogNamespace'>,
  generation: number,
): InstallPlan {
  const namespace = sub.metadata.namespace!;
  const approval = sub.spec.installPlanApproval === Approval.Manual ? Approval.Manual : Approval.Automatic;
  return {
    apiVersion: `${Resources.InstallPlan.group}/${Resources.InstallPlan.version}`,
    kind: 'InstallPlan',
    metadata: {
      name: installPlanName(namespace, sub.metadata.name!, outcome.bundle),
      namespace,
      labels: { [SubscriptionLabel]: sub.metadata.name! },
    },
    spec: {
      clusterServiceVersionNames: [outcome.bundle],
      approval,
      approved: approval === Approval.Automatic,
      generation,
      // Where the bundle comes from: the InstallPlan controller reads it from the CatalogStore.
      source: outcome.catalog,
      sourceNamespace: outcome.catalogNamespace,
    },
  };
}

/** Whether a Subscription's catalog is usable, as its status shows it. */
export type CatalogState = { healthy: true } | { healthy: false; message: string };

export interface StatusInput {
  sub: Subscription;
  now: number;
  /** This Subscription's part of the namespace's resolution. */
  resolution:
    | { ok: true; outcome: SubscriptionOutcome }
    | { ok: false; reason: string; message: string }
    /** Not resolved this time (e.g. no catalog content yet): keep what the status says. */
    | { ok: 'skipped' };
  /** Every CatalogSource the namespace can see, with its health. */
  catalogHealth: SubscriptionCatalogHealth[];
  /** The health of the Subscription's own catalog. */
  catalog: CatalogState;
  /** The InstallPlan for the target CSV, or the one the status already references. */
  installPlan?: InstallPlan;
  csvs: ReadonlyMap<string, ClusterServiceVersion>;
  /**
   * The Subscription's InstallPlans that completed, whose CSVs are its installed versions while
   * its target is not (yet) Succeeded.
   */
  completedPlans?: readonly InstallPlan[];
  /** The Subscription's rollback and history, as the upgrade guard left them (default: as they are). */
  rollback?: {
    rollback: SubscriptionRollback | undefined;
    history: readonly SubscriptionHistoryEntry[];
    held: readonly HeldVersion[];
  };
}

type Cond = Omit<SubscriptionCondition, 'lastTransitionTime'>;

/**
 * The newest Succeeded CSV that a completed InstallPlan of the Subscription installed and that
 * no other of those CSVs replaces; undefined when there is none.
 */
export function installedFromPlans(
  plans: readonly InstallPlan[],
  csvs: ReadonlyMap<string, ClusterServiceVersion>,
): string | undefined {
  const names = new Set(plans.flatMap((p) => p.spec.clusterServiceVersionNames ?? []));
  const live = [...names]
    .map((n) => csvs.get(n))
    .filter((c): c is ClusterServiceVersion => c?.status?.phase === CSVPhase.Succeeded);
  const replaced = new Set(live.map((c) => c.spec.replaces));
  return live.find((c) => !replaced.has(c.metadata.name))?.metadata.name;
}

/** The status a Subscription should have. Compare with `statusChanged` before writing. */
export function subscriptionStatus(input: StatusInput): SubscriptionStatus {
  const { sub, now, resolution, installPlan: ip, csvs } = input;
  const previous = sub.status;
  let conditions = previous?.conditions ?? [];
  const set = (c: Cond) => {
    conditions = setCondition<SubscriptionCondition>(conditions, c, now);
  };
  const status: SubscriptionStatus = { ...previous, lastUpdated: formatTime(now) };

  set(
    input.catalog.healthy
      ? {
          type: SubscriptionConditionType.CatalogSourcesUnhealthy,
          status: 'False',
          reason: SubscriptionConditionReason.AllCatalogSourcesHealthy,
          message: 'all available catalogsources are healthy',
        }
      : {
          type: SubscriptionConditionType.CatalogSourcesUnhealthy,
          status: 'True',
          reason: SubscriptionConditionReason.UnhealthyCatalogSourceFound,
          message: input.catalog.message,
        },
  );
  status.catalogHealth = input.catalogHealth;

  if (resolution.ok === true) {
    conditions = removeCondition(conditions, SubscriptionConditionType.ResolutionFailed);
    status.currentCSV = resolution.outcome.bundle;
  } else if (resolution.ok === false) {
    set({
      type: SubscriptionConditionType.ResolutionFailed,
      status: 'True',
      reason: resolution.reason,
      message: resolution.message,
    });
  }

  const target = status.currentCSV;
  const targetCsv = target ? csvs.get(target) : undefined;
  const succeeded = targetCsv?.status?.phase === CSVPhase.Succeeded;
  const guarded = input.rollback ?? {
    rollback: previous?.rollback,
    history: previous?.history ?? [],
    held: previous?.heldBack ?? [],
  };
  if (guarded.held.length > 0) status.heldBack = [...guarded.held];
  else delete status.heldBack;
  let history = [...guarded.history];
  // The target before this resolution first: it may have Succeeded as the next upgrade was found.
  // While a rollback is under way, the version it reinstates is recorded by the rollback, as
  // RolledBack, once it is back: its CSV succeeding before that is not a new install.
  const rollingBackNow = guarded.rollback?.phase === RollbackPhase.RollingBack;
  for (const name of rollingBackNow ? [] : new Set([previous?.currentCSV, target])) {
    const csv = name ? csvs.get(name) : undefined;
    if (!name || csv?.status?.phase !== CSVPhase.Succeeded || history[0]?.csv === name) continue;
    history = pushHistory(history, {
      csv: name,
      ...(csv.spec.version ? { version: csv.spec.version } : {}),
      time: formatTime(now),
      outcome: HistoryOutcome.Installed,
    });
  }
  if (history.length > 0) status.history = history;
  else delete status.history;
  const rollback = guarded.rollback;
  if (rollback) status.rollback = rollback;
  else delete status.rollback;
  if (rollback) set(rollbackCondition(rollback));
  else conditions = removeCondition(conditions, SubscriptionConditionType.RolledBack);
  if (succeeded) status.installedCSV = target;
  else {
    // While an upgrade waits (for approval, or for its CSV to succeed) the version it upgrades
    // from is still the installed one, as OLM reports it, even when the upgrade was found
    // before that version had Succeeded.
    const installed = installedFromPlans(input.completedPlans ?? [], csvs);
    if (installed) status.installedCSV = installed;
    else if (status.installedCSV && csvs.get(status.installedCSV)?.status?.phase !== CSVPhase.Succeeded) {
      delete status.installedCSV;
    }
  }

  if (ip) {
    const ref: ObjectReference = {
      apiVersion: ip.apiVersion,
      kind: 'InstallPlan',
      name: ip.metadata.name,
      namespace: ip.metadata.namespace,
      uid: ip.metadata.uid,
      resourceVersion: ip.metadata.resourceVersion,
    };
    // The resourceVersion moves with every InstallPlan status write; the reference means the object.
    delete ref.resourceVersion;
    status.installPlanRef = ref;
    status.installplan = {
      apiVersion: ip.apiVersion,
      kind: 'InstallPlan',
      name: ip.metadata.name!,
      uuid: ip.metadata.uid ?? '',
    };
    if (ip.spec.generation !== undefined) status.installPlanGeneration = ip.spec.generation;
  }

  // The operator's own gate: the new CSV waits while the installed one says Upgradeable=False.
  if (targetCsv?.status?.reason === CSVReason.OperatorConditionNotUpgradeable) {
    set({
      type: SubscriptionConditionType.UpgradeHeld,
      status: 'True',
      reason: CSVReason.OperatorConditionNotUpgradeable,
      message: `${target} waits: ${targetCsv?.status?.message ?? ''}`,
    });
  } else {
    conditions = removeCondition(conditions, SubscriptionConditionType.UpgradeHeld);
  }

  const phase = ip?.status?.phase ?? InstallPlanPhase.None;
  const failed = phase === InstallPlanPhase.Failed;
  if (failed) {
    const ipCond = ip?.status?.conditions?.find((c) => c.status === 'False' && c.reason);
    set({
      type: SubscriptionConditionType.InstallPlanFailed,
      status: 'True',
      reason: ipCond?.reason ?? SubscriptionConditionReason.InstallPlanFailed,
      message: ip?.status?.message ?? ipCond?.message ?? `InstallPlan ${ip?.metadata.name} failed`,
    });
  } else {
    conditions = removeCondition(conditions, SubscriptionConditionType.InstallPlanFailed);
  }
  const pending = ip !== undefined && !failed && phase !== InstallPlanPhase.Complete && !succeeded;
  if (pending) {
    const needsApproval = ip.spec.approval === Approval.Manual && !ip.spec.approved;
    set({
      type: SubscriptionConditionType.InstallPlanPending,
      status: 'True',
      reason: needsApproval
        ? InstallPlanPhase.RequiresApproval
        : phase || SubscriptionConditionReason.InstallPlanNotYetReconciled,
      message: needsApproval
        ? `InstallPlan ${ip.metadata.name} for ${target} waits for approval: set spec.approved to true`
        : `InstallPlan ${ip.metadata.name} for ${target} is ${phase || 'not yet reconciled'}${ip.status?.message ? `: ${ip.status.message}` : ''}`,
    });
  } else {
    conditions = removeCondition(conditions, SubscriptionConditionType.InstallPlanPending);
  }

  if (failed || rollback?.phase === RollbackPhase.RolledBack) status.state = SubscriptionState.UpgradeFailed;
  else if (succeeded) status.state = SubscriptionState.AtLatestKnown;
  else if (target) status.state = SubscriptionState.UpgradePending;
  status.conditions = conditions;
  return status;
}

/** The RolledBack condition a rollback shows, with its cause. */
function rollbackCondition(r: SubscriptionRollback): Cond {
  const type = SubscriptionConditionType.RolledBack;
  switch (r.phase) {
    case RollbackPhase.RollingBack:
      return {
        type,
        status: 'True',
        reason: SubscriptionConditionReason.RollingBack,
        message: `rolling back from ${r.from} to ${r.to}: ${r.cause}`,
      };
    case RollbackPhase.RolledBack:
      return {
        type,
        status: 'True',
        reason: SubscriptionConditionReason.RolledBack,
        message:
          `rolled back from ${r.from} to ${r.to}: ${r.cause}. ${r.from} is not tried again until the ` +
          `catalog changes it, or \`bosun upgrade retry\` asks for it`,
      };
    case RollbackPhase.Refused:
      return {
        type,
        status: 'False',
        reason: SubscriptionConditionReason.RollbackRefused,
        message: `${r.cause}; not rolled back: ${r.message ?? ''}`,
      };
  }
}
