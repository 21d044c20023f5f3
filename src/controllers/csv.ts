/**
 * The ClusterServiceVersion controller (key `namespace/name`): checks the namespace's
 * OperatorGroup and the CSV's requirements, applies what the CSV needs (computed by
 * src/install/csv-objects.ts: the RBAC the group's targets add, the OperatorCondition, the
 * Deployments), and walks the CSV through OLM's phases (./csv-phase.ts). It also retires a CSV once the CSV replacing it has Succeeded, and
 * cleans up after a deleted CSV.
 *
 * Uninstall (cleanup after a deleted CSV) is in ./csv-uninstall.ts, applying the install
 * strategy in ./csv-install.ts, the webhooks and API services a CSV serves (certificates,
 * Services, webhook configurations, APIServices) in ./csv-serving.ts. What it applies is written
 * as the OperatorGroup's ServiceAccount when the group names one (./operatorgroup-scope.ts).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { CSVReason } from '../apis/conditions.js';
import type {
  ClusterServiceVersion,
  ClusterServiceVersionStatus,
  OperatorCondition,
  Subscription,
  SubscriptionConfig,
} from '../apis/operators.js';
import { CSVPhase, Resources, RollbackPhase } from '../apis/operators.js';
import { type CSVObjects, csvServiceAccounts, desiredCSVObjects } from '../install/csv-objects.js';
import { checkStrategy } from '../install/health.js';
import { withServingCheck } from '../install/serving.js';
import { type OperatorGroupTargets, operatorGroupAnnotations } from '../install/operatorgroup.js';
import { csvOwnerOf } from '../install/ownership.js';
import { isEmptySelector } from '../olm/selector.js';
import { objectKey, splitKey } from '../kube/cache.js';
import { objectPath } from '../kube/client.js';
import { formatTime } from '../kube/conditions.js';
import { formatApiError, isPermanentRejection, parseApiError } from '../kube/errors.js';
import { writeStatus } from '../kube/status.js';
import type { Result } from '../util/result.js';
import type { Controller, Deployment, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';
import { applyInstall, observeCopiedRbac } from './csv-install.js';
import { type CSVDecision, decideCSVPhase } from './csv-phase.js';
import { checkRequirements, operatorGroupVerdict } from './csv-requirements.js';
import {
  checkServingObjects,
  observeServing,
  prepareServingInstall,
  reportUnavailableAPIServices,
  servingCertificateStatus,
  servingDecision,
  servingRequeueAfter,
  storedMounts,
} from './csv-serving.js';
import { cleanupDeleted, sweepOrphans } from './csv-uninstall.js';
import { deleteIfPresent, exists, mergePatch, ServiceAccounts } from './objects.js';
import { upgradeBlocked } from './operatorcondition.js';
import { installWriter } from './operatorgroup-scope.js';

/** How many phase changes `status.conditions` keeps (OLM keeps a bounded history too). */
const maxHistory = 20;
/** ServiceAccounts have no informer: poll while one is missing. */
const missingServiceAccountRetryMs = 2_000;

const uses = {
  informers: [
    'crds',
    'csvs',
    'deployments',
    'installPlans',
    'namespaces',
    'operatorConditions',
    'operatorGroups',
    'subscriptions',
  ] as const,
  ports: ['applier', 'client', 'clock', 'events', 'schemas'] as const,
};

/** What this controller reads and writes through; the manager gives it nothing else. */
export type CSVContext = ScopedContext<(typeof uses.informers)[number], (typeof uses.ports)[number]>;

const csvControllerOwn: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> = {
  ...uses,
  name: 'csv',
  kind: Resources.ClusterServiceVersion.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    const csvsIn = (ns: string | undefined) => {
      for (const c of informers.csvs.list(ns)) enqueue(objectKey(ns, c.metadata.name));
    };
    const onCSV = (c: ClusterServiceVersion) => {
      enqueue(objectKey(c.metadata.namespace, c.metadata.name));
      // The CSVs this one replaces, directly or down a chain of upgrades, follow the progress of
      // the chain's newest (Replacing → Deleting).
      const seen = new Set([c.metadata.name]);
      for (let at = c.spec.replaces; at && !seen.has(at);) {
        seen.add(at);
        enqueue(objectKey(c.metadata.namespace, at));
        at = informers.csvs.get(objectKey(c.metadata.namespace, at))?.spec.replaces;
      }
      // The CSV replacing this one is retired only once this one is gone (./csv-phase.ts).
      for (const next of informers.csvs.list(c.metadata.namespace))
        if (next.spec.replaces === c.metadata.name && next.metadata.name !== c.metadata.name)
          enqueue(objectKey(c.metadata.namespace, next.metadata.name));
    };
    informers.csvs.on({ add: onCSV, update: (_, c) => onCSV(c), delete: onCSV });
    informers.deployments.on({
      add: (d) => enqueueOwner(d, enqueue),
      update: (_, d) => enqueueOwner(d, enqueue),
      delete: (d) => enqueueOwner(d, enqueue),
    });
    const onGroup = (og: { metadata: { namespace?: string } }) => csvsIn(og.metadata.namespace);
    informers.operatorGroups.on({ add: onGroup, update: (_, og) => onGroup(og), delete: onGroup });
    // Namespaces matter to OperatorGroups that select them by label.
    const onNamespace = () => {
      for (const og of informers.operatorGroups.list()) {
        if (!isEmptySelector(og.spec?.selector) && (og.spec?.targetNamespaces ?? []).length === 0) {
          csvsIn(og.metadata.namespace);
        }
      }
    };
    informers.namespaces.on({ add: onNamespace, update: onNamespace, delete: onNamespace });
    const onCrd = () => {
      for (const c of informers.csvs.list()) {
        if (c.status?.phase !== CSVPhase.Succeeded) enqueue(objectKey(c.metadata.namespace, c.metadata.name));
      }
    };
    informers.crds.on({ add: onCrd, update: onCrd, delete: onCrd });
    const onSubscription = (s: Subscription) => {
      for (const name of [s.status?.installedCSV, s.status?.currentCSV]) {
        if (name) enqueue(objectKey(s.metadata.namespace, name));
      }
    };
    informers.subscriptions.on({ add: onSubscription, update: (_, s) => onSubscription(s) });
    // The OperatorCondition is named after its CSV; its Upgradeable gates the CSV replacing it.
    const onCondition = (c: OperatorCondition) => {
      enqueue(objectKey(c.metadata.namespace, c.metadata.name));
      for (const next of informers.csvs.list(c.metadata.namespace))
        if (next.spec.replaces === c.metadata.name)
          enqueue(objectKey(c.metadata.namespace, next.metadata.name));
    };
    informers.operatorConditions.on({
      add: onCondition,
      update: (_, c) => onCondition(c),
      delete: onCondition,
    });
    void sweepOrphans(ctx, enqueue);
  },
  reconcile: (ctx) => {
    const refusals: Refusals = new Map();
    return async (key) => {
      const { namespace = '', name } = splitKey(key);
      const csv = ctx.informers.csvs.get(key);
      if (csv === undefined) {
        refusals.delete(key);
        await cleanupDeleted(ctx, namespace, name);
        return;
      }
      if (csv.metadata.deletionTimestamp) return;
      return reconcileCSV(ctx, key, csv, refusals);
    };
  },
};

/**
 * Installs the API server refused (a scoped install whose ServiceAccount may not write an object,
 * or a scope that cannot be used), by CSV key, with the CSV's uid, when and why. Such a CSV fails
 * with InstallComponentFailed and stays Failed for `refusedRetryMs` before it tries again, rather
 * than cycling through its phases as fast as it can write them.
 */
type Refusals = Map<string, { uid: string; at: number; message: string }>;
const refusedRetryMs = 30_000;

function enqueueOwner(d: { metadata?: { labels?: Record<string, string> } }, enqueue: (k: string) => void) {
  const owner = csvOwnerOf(d.metadata?.labels);
  if (owner) enqueue(objectKey(owner.namespace, owner.name));
}

/**
 * One reconcile of a live CSV, as named steps: observe what it needs and what is there, decide
 * its phase, act on the decision, report it in status, and say when to look again.
 */
async function reconcileCSV(ctx: CSVContext, key: string, csv: ClusterServiceVersion, refusals: Refusals) {
  const seen = await observe(ctx, csv);
  if (seen.desired !== undefined && !seen.desired.ok) return failInvalidStrategy(ctx, csv, seen);
  const uid = csv.metadata.uid ?? '';
  const now = ctx.clock.now();
  // A refusal of an earlier CSV of the same name says nothing about this one.
  if (refusals.get(key)?.uid !== uid) refusals.delete(key);
  const held = refusals.get(key);
  const holding =
    held !== undefined && now - held.at < refusedRetryMs && csv.status?.phase === CSVPhase.Failed;
  let decision = holding ? refusedDecision(held.message) : decide(csv, seen);
  const acted = await act(ctx, csv, seen, decision);
  if (acted.refused !== undefined) {
    ctx.log.info({ reason: acted.refused }, 'install refused');
    refusals.set(key, { uid, at: now, message: acted.refused });
    decision = refusedDecision(acted.refused);
  } else if (decision.install) {
    refusals.delete(key);
  }
  await report(ctx, csv, seen, decision, acted.certs ?? servingCertificateStatus(seen.serving));
  const again = requeue(ctx, seen);
  // A CSV held Failed after a refusal is looked at again once it may try again.
  const retry =
    holding || acted.refused !== undefined ? (refusals.get(key)?.at ?? now) + refusedRetryMs - now : 0;
  if (retry <= 0) return again;
  return { requeueAfter: Math.min(again?.requeueAfter ?? retry, retry) };
}

function refusedDecision(message: string): CSVDecision {
  return {
    phase: CSVPhase.Failed,
    reason: CSVReason.InstallComponentFailed,
    message,
    install: false,
    delete: false,
  };
}

/** What one reconcile of a CSV observed, and what it computed from it. */
interface Observed {
  og: ReturnType<typeof operatorGroupVerdict>;
  /** Why the CSV this one replaces holds the upgrade back (its OperatorCondition), if it does. */
  notUpgradeable: string | undefined;
  /** The CSV replacing this one, if any. */
  replacer: ClusterServiceVersion | undefined;
  /** The newest CSV of the chain of upgrades replacing this one (the replacer itself, or one replacing it). */
  newest: ClusterServiceVersion | undefined;
  /** Whether the CSV this one replaces is still there (it goes first when a chain is retired). */
  replacesLive: boolean;
  /** Whether each ServiceAccount the permissions name exists. */
  accounts: Map<string, boolean>;
  requirements: ReturnType<typeof checkRequirements>;
  config: SubscriptionConfig | undefined;
  serving: Awaited<ReturnType<typeof observeServing>>;
  /** What the CSV needs, with the certificates it has (undefined without a usable OperatorGroup). */
  desired: Result<CSVObjects> | undefined;
  deployments: V1Deployment[];
  live: Deployment[];
  served: Awaited<ReturnType<typeof checkServingObjects>> | undefined;
}

/** Step 1: the OperatorGroup, the requirements, the Subscription's config and what is installed. */
async function observe(ctx: CSVContext, csv: ClusterServiceVersion): Promise<Observed> {
  const { informers } = ctx;
  const namespace = csv.metadata.namespace ?? '';
  const name = csv.metadata.name ?? '';
  const og = operatorGroupVerdict(
    csv,
    informers.operatorGroups.list(namespace),
    informers.namespaces.list().map((n) => ({ name: n.metadata?.name ?? '', labels: n.metadata?.labels })),
  );
  const replacerOf = (n: string) =>
    informers.csvs
      .list(namespace)
      .find((c) => c.spec.replaces === n && c.metadata.name !== n && !c.metadata.deletionTimestamp);
  const replacer = replacerOf(name);
  // The newest of the chain of upgrades replacing this CSV: once it has Succeeded, every CSV it
  // replaces, directly or not, is retired (as OLM walks its replacement chain).
  let newest = replacer;
  for (const seen = new Set([name]); newest && !seen.has(newest.metadata.name!);) {
    seen.add(newest.metadata.name!);
    const next = replacerOf(newest.metadata.name!);
    if (!next) break;
    newest = next;
  }
  // A version being rolled back from retires nothing, even should it reach Succeeded meanwhile:
  // the version it replaced is the one being reinstated.
  const rollingBack =
    newest !== undefined &&
    informers.subscriptions
      .list(namespace)
      .some(
        (s) =>
          s.status?.rollback?.phase === RollbackPhase.RollingBack &&
          s.status.rollback.from === newest?.metadata.name,
      );
  if (rollingBack) newest = undefined;
  const replaced =
    csv.spec.replaces && csv.spec.replaces !== name
      ? informers.csvs.get(objectKey(namespace, csv.spec.replaces))
      : undefined;
  const notUpgradeable = replaced
    ? upgradeBlocked(informers.operatorConditions.get(objectKey(namespace, csv.spec.replaces)))
    : undefined;
  const accounts = new Map<string, boolean>();
  for (const sa of csvServiceAccounts(csv)) {
    accounts.set(sa, await exists(ctx.client, objectPath(ServiceAccounts, sa, namespace)));
  }
  const requirements = checkRequirements({
    csv,
    crd: (n) => informers.crds.get(n),
    serviceAccountExists: (n) => accounts.get(n) === true,
  });
  const config = subscriptionFor(ctx, csv)?.spec.config;
  const serving = await observeServing(ctx, csv);
  const desired = og.ok
    ? desiredCSVObjects({ csv, targets: og.targets, config, servingCertificates: storedMounts(serving) })
    : undefined;
  const deployments = desired?.ok ? desired.value.deployments : [];
  const live = deployments
    .map((d) => informers.deployments.get(objectKey(namespace, d.metadata?.name)))
    .filter((d): d is Deployment => d !== undefined);
  const served =
    og.ok && !replacer && desired?.ok !== false
      ? await checkServingObjects(ctx, csv, og.group, serving, config?.annotations)
      : undefined;
  return {
    og,
    notUpgradeable,
    replacer,
    newest,
    replacesLive: replaced !== undefined,
    accounts,
    requirements,
    config,
    serving,
    desired,
    deployments,
    live,
    served,
  };
}

/** A strategy whose Deployments cannot be rendered fails the CSV, naming the fields. */
async function failInvalidStrategy(ctx: CSVContext, csv: ClusterServiceVersion, seen: Observed) {
  const errors = seen.desired?.ok === false ? seen.desired.errors : [];
  await setCSVStatus(ctx, csv, seen.requirements.statuses, {
    phase: CSVPhase.Failed,
    reason: CSVReason.InvalidInstallStrategy,
    message: errors.map((e) => `${e.field}: ${e.message}`).join('; '),
    install: false,
    delete: false,
  });
}

/** Step 2: the phase OLM's rules give (./csv-phase.ts), then the serving verdicts. */
function decide(csv: ClusterServiceVersion, seen: Observed): CSVDecision {
  const { og, replacer, requirements, served } = seen;
  const strategy = checkStrategy(seen.deployments, seen.live);
  const phase = decideCSVPhase({
    phase: csv.status?.phase,
    reason: csv.status?.reason,
    operatorGroup: og.ok ? { ok: true } : og,
    requirementsMet: requirements.met,
    strategy: served ? withServingCheck(strategy, served.check) : strategy,
    ...(replacer
      ? { replacedBy: { name: replacer.metadata.name ?? '', phase: seen.newest?.status?.phase } }
      : {}),
    replacesLive: seen.replacesLive,
    ...(seen.notUpgradeable !== undefined ? { notUpgradeable: seen.notUpgradeable } : {}),
  });
  // Webhooks and API services are judged once the OperatorGroup and the requirements are (as OLM does).
  return og.ok && !replacer && requirements.met
    ? servingDecision(phase, seen.serving, served, csv.status?.phase)
    : phase;
}

/**
 * Step 3: keep the OperatorGroup annotations, and install (or put back a deleted
 * OperatorCondition). Returns the serving certificates' status fields when new ones were made.
 */
async function act(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  seen: Observed,
  decision: CSVDecision,
): Promise<{
  certs?: Pick<ClusterServiceVersionStatus, 'certsLastUpdated' | 'certsRotateAt'>;
  refused?: string;
}> {
  const { og, replacer, serving, config, desired } = seen;
  if (!og.ok) return {};
  if (!replacer) await annotateCSV(ctx, csv, og.targets);
  const restoreCondition =
    !replacer && installedPhases.has(decision.phase) && !hasOperatorCondition(ctx, csv);
  if (!decision.install && !restoreCondition) return {};
  // Written as the OperatorGroup's ServiceAccount when it names one (./operatorgroup-scope.ts).
  const writer = await installWriter(ctx, csv.metadata.namespace ?? '');
  if (writer.kind === 'wait') return { refused: writer.message };
  const scoped = writer.scope.kind === 'serviceAccount' ? writer.scope : undefined;
  try {
    if (!decision.install) {
      // Someone deleted the OperatorCondition of an installed operator: put it back.
      for (const o of desired?.ok ? desired.value.operatorCondition : []) await writer.applier.apply(o);
      return {};
    }
    ctx.log.info({ deployments: seen.deployments.map((d) => d.metadata?.name) }, 'applying install strategy');
    // New serving certificates change what the Deployments mount: render them with those.
    const servingInstall = await prepareServingInstall(ctx, csv, og.group, serving, config?.annotations);
    const copiedRbac = await observeCopiedRbac(ctx, csv);
    const install = desiredCSVObjects({
      csv,
      targets: og.targets,
      config,
      servingCertificates: servingInstall?.mounts ?? storedMounts(serving),
      copiedRbac,
    });
    const objects = install.ok ? install.value : desired?.ok ? desired.value : undefined;
    if (objects) await applyInstall(ctx, csv, objects, writer, servingInstall?.objects);
    return servingInstall?.status ? { certs: servingInstall.status } : {};
  } catch (err) {
    // A scoped install's ServiceAccount may not write what the CSV needs (the group's targets
    // grew since the InstallPlan checked, or its rights were taken away): say so, and try again
    // later. Unscoped, such an error is the manager's own and is retried as any other.
    const api = parseApiError(err);
    if (scoped === undefined || api === undefined || !isPermanentRejection(api)) throw err;
    return {
      refused: `installing as ServiceAccount ${scoped.namespace}/${scoped.name} (OperatorGroup ${scoped.operatorGroup}) was refused: ${formatApiError(api)}`,
    };
  }
}

/** Step 4: the status, unavailable API services, and the replaced CSV's deletion. */
async function report(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  seen: Observed,
  decision: CSVDecision,
  certs: Pick<ClusterServiceVersionStatus, 'certsLastUpdated' | 'certsRotateAt'> | undefined,
) {
  await setCSVStatus(ctx, csv, seen.requirements.statuses, decision, certs);
  await reportUnavailableAPIServices(ctx, csv, decision, seen.served);
  if (decision.delete) {
    ctx.log.info({ replacedBy: seen.replacer?.metadata.name }, 'deleting replaced csv');
    await deleteIfPresent(
      ctx.client,
      objectPath(Resources.ClusterServiceVersion, csv.metadata.name ?? '', csv.metadata.namespace),
    );
  }
}

/**
 * Step 5: when to look again. ServiceAccounts have no informer, so a missing one is polled; a CSV
 * with serving certificates is looked at again before they are due for rotation, and every ten
 * minutes for webhook configurations and APIServices that went missing.
 */
function requeue(ctx: CSVContext, seen: Observed): { requeueAfter: number } | undefined {
  const missingAccount = [...seen.accounts.values()].some((present) => !present);
  const rotation = servingRequeueAfter(seen.serving, ctx.clock.now());
  const requeueAfter = Math.min(
    missingAccount ? missingServiceAccountRetryMs : Number.POSITIVE_INFINITY,
    rotation ?? Number.POSITIVE_INFINITY,
  );
  return Number.isFinite(requeueAfter) ? { requeueAfter } : undefined;
}

/** Phases in which the install strategy has been applied. */
const installedPhases: ReadonlySet<string> = new Set([CSVPhase.Installing, CSVPhase.Succeeded]);

function hasOperatorCondition(ctx: CSVContext, csv: ClusterServiceVersion): boolean {
  return (
    ctx.informers.operatorConditions.get(objectKey(csv.metadata.namespace, csv.metadata.name)) !== undefined
  );
}

/** The Subscription that installed this CSV, whose `spec.config` shapes its Deployments. */
function subscriptionFor(ctx: CSVContext, csv: ClusterServiceVersion): Subscription | undefined {
  const name = csv.metadata.name;
  return ctx.informers.subscriptions
    .list(csv.metadata.namespace)
    .find((s) => s.status?.installedCSV === name || s.status?.currentCSV === name);
}

/** OLM's OperatorGroup annotations on the CSV itself, kept in step with the group. */
async function annotateCSV(ctx: CSVContext, csv: ClusterServiceVersion, targets: OperatorGroupTargets) {
  const want = operatorGroupAnnotations(targets, csv.metadata.namespace ?? '');
  const have = csv.metadata.annotations ?? {};
  if (Object.entries(want).every(([k, v]) => have[k] === v)) return;
  await mergePatch(
    ctx.client,
    objectPath(Resources.ClusterServiceVersion, csv.metadata.name ?? '', csv.metadata.namespace),
    { metadata: { annotations: want } },
  );
}

async function setCSVStatus(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  requirementStatus: ClusterServiceVersionStatus['requirementStatus'],
  d: CSVDecision,
  certs?: Pick<ClusterServiceVersionStatus, 'certsLastUpdated' | 'certsRotateAt'>,
) {
  const prev = csv.status ?? {};
  const now = formatTime(ctx.clock.now());
  const moved = prev.phase !== d.phase || prev.reason !== d.reason;
  const next: ClusterServiceVersionStatus = {
    ...prev,
    phase: d.phase,
    reason: d.reason,
    message: d.message,
    requirementStatus,
    ...certs,
    lastUpdateTime: moved || prev.message !== d.message ? now : (prev.lastUpdateTime ?? now),
    lastTransitionTime: prev.phase !== d.phase ? now : (prev.lastTransitionTime ?? now),
    conditions: moved
      ? [
          ...(prev.conditions ?? []),
          {
            phase: d.phase,
            reason: d.reason,
            message: d.message,
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
        ].slice(-maxHistory)
      : prev.conditions,
  };
  if (!(await writeStatus(ctx.applier, { resource: Resources.ClusterServiceVersion, object: csv, next })))
    return;
  if (moved) {
    const failed = d.phase === CSVPhase.Failed;
    await (failed
      ? ctx.events.warning(csv, d.reason, d.message)
      : ctx.events.normal(csv, d.reason, d.message));
  }
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const csvController = reportingForbidden(csvControllerOwn, (ctx, key) =>
  [ctx.informers.csvs.get(key)].filter((o) => o !== undefined),
);
