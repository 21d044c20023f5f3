/**
 * The ClusterServiceVersion controller (key `namespace/name`): checks the namespace's
 * OperatorGroup and the CSV's requirements, applies the install strategy (RBAC scoped to the
 * group's targets, the OperatorCondition, the Deployments), and walks the CSV through OLM's
 * phases (./csv-phase.ts). It also retires a CSV once the CSV replacing it has Succeeded, and
 * cleans up after a deleted CSV.
 *
 * Uninstall (cleanup after a deleted CSV) is in ./csv-uninstall.ts, applying the install
 * strategy in ./csv-install.ts, the webhooks and API services a CSV serves (certificates,
 * Services, webhook configurations, APIServices) in ./csv-serving.ts.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { CSVReason } from '../apis/conditions.js';
import type { ClusterServiceVersion, ClusterServiceVersionStatus, Subscription } from '../apis/operators.js';
import { CSVPhase, Resources } from '../apis/operators.js';
import { desiredCSVObjects } from '../install/csv-objects.js';
import { csvServiceAccounts } from '../install/csv-objects.js';
import { checkStrategy } from '../install/health.js';
import { type DeploymentCertificate, withServingCheck } from '../install/serving.js';
import { type OperatorGroupTargets, operatorGroupAnnotations } from '../install/operatorgroup.js';
import { csvOwnerOf } from '../install/ownership.js';
import type { RbacRef } from '../install/rbac.js';
import { isEmptySelector } from '../install/selector.js';
import { objectKey, splitKey } from '../kube/cache.js';
import { objectPath } from '../kube/client.js';
import { formatTime } from '../kube/conditions.js';
import { writeStatus } from '../kube/status.js';
import type { Controller, ScopedContext } from './context.js';
import { applyInstall, observeCopiedRbac } from './csv-install.js';
import { type CSVDecision, decideCSVPhase } from './csv-phase.js';
import { checkRequirements, operatorGroupVerdict } from './csv-requirements.js';
import {
  checkServingObjects,
  observeServing,
  prepareServingInstall,
  reportUnavailableAPIServices,
  servingDecision,
  servingRequeueAfter,
  storedMounts,
} from './csv-serving.js';
import { cleanupDeleted, sweepOrphans } from './csv-uninstall.js';
import { deleteIfPresent, exists, mergePatch, ServiceAccounts } from './objects.js';

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

export const csvController: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> = {
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
      // The CSV this one replaces follows its successor's progress (Replacing → Deleting).
      if (c.spec.replaces) enqueue(objectKey(c.metadata.namespace, c.spec.replaces));
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
    // The OperatorCondition is named after its CSV.
    informers.operatorConditions.on({
      delete: (c) => enqueue(objectKey(c.metadata.namespace, c.metadata.name)),
    });
    void sweepOrphans(ctx, enqueue);
  },
  reconcile: (ctx) => async (key) => {
    const { namespace = '', name } = splitKey(key);
    const csv = ctx.informers.csvs.get(key);
    if (csv === undefined) {
      await cleanupDeleted(ctx, namespace, name);
      return;
    }
    if (csv.metadata.deletionTimestamp) return;
    return reconcileCSV(ctx, csv);
  },
};

function enqueueOwner(d: { metadata?: { labels?: Record<string, string> } }, enqueue: (k: string) => void) {
  const owner = csvOwnerOf(d.metadata?.labels);
  if (owner) enqueue(objectKey(owner.namespace, owner.name));
}

async function reconcileCSV(ctx: CSVContext, csv: ClusterServiceVersion) {
  const { informers } = ctx;
  const namespace = csv.metadata.namespace ?? '';
  const name = csv.metadata.name ?? '';

  // Observe.
  const og = operatorGroupVerdict(
    csv,
    informers.operatorGroups.list(namespace),
    informers.namespaces.list().map((n) => ({ name: n.metadata?.name ?? '', labels: n.metadata?.labels })),
  );
  const replacer = informers.csvs
    .list(namespace)
    .find((c) => c.spec.replaces === name && c.metadata.name !== name && !c.metadata.deletionTimestamp);
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
  const desiredWith = (servingCertificates: Record<string, DeploymentCertificate>, copiedRbac?: RbacRef[]) =>
    og.ok
      ? desiredCSVObjects({ csv, targets: og.targets, config, servingCertificates, copiedRbac })
      : undefined;
  const desired = desiredWith(storedMounts(serving));
  if (desired !== undefined && !desired.ok) {
    const message = desired.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    await setCSVStatus(ctx, csv, requirements.statuses, {
      phase: CSVPhase.Failed,
      reason: CSVReason.InvalidInstallStrategy,
      message,
      install: false,
      delete: false,
    });
    return;
  }
  const deployments = desired?.value.deployments ?? [];
  const live = deployments
    .map((d) => informers.deployments.get(objectKey(namespace, d.metadata?.name)))
    .filter((d) => d !== undefined) as unknown as V1Deployment[];

  const served =
    og.ok && !replacer
      ? await checkServingObjects(ctx, csv, og.group, serving, config?.annotations)
      : undefined;

  // Decide.
  const phase = decideCSVPhase({
    phase: csv.status?.phase,
    reason: csv.status?.reason,
    operatorGroup: og.ok ? { ok: true } : og,
    requirementsMet: requirements.met,
    strategy: served
      ? withServingCheck(checkStrategy(deployments, live), served.check)
      : checkStrategy(deployments, live),
    ...(replacer
      ? { replacedBy: { name: replacer.metadata.name ?? '', phase: replacer.status?.phase } }
      : {}),
  });
  // Webhooks and API services are judged once the OperatorGroup and the requirements are (as OLM does).
  const decision =
    og.ok && !replacer && requirements.met
      ? servingDecision(phase, serving, served, csv.status?.phase)
      : phase;

  // Act.
  if (og.ok && !replacer) await annotateCSV(ctx, csv, og.targets);
  let certs: Pick<ClusterServiceVersionStatus, 'certsLastUpdated' | 'certsRotateAt'> | undefined;
  if (decision.install && og.ok) {
    ctx.log.info({ deployments: deployments.map((d) => d.metadata?.name) }, 'applying install strategy');
    // New serving certificates change what the Deployments mount: render them with those.
    const servingInstall = await prepareServingInstall(ctx, csv, og.group, serving, config?.annotations);
    certs = servingInstall?.status;
    const copied = await observeCopiedRbac(ctx, csv);
    const install = desiredWith(servingInstall?.mounts ?? storedMounts(serving), copied);
    const objects = install?.ok ? install.value : desired?.ok ? desired.value : undefined;
    if (objects) await applyInstall(ctx, csv, objects, servingInstall?.objects);
  } else if (og.ok && !replacer && installedPhases.has(decision.phase) && !hasOperatorCondition(ctx, csv)) {
    // Someone deleted the OperatorCondition of an installed operator: put it back.
    for (const o of desired?.ok ? desired.value.operatorCondition : []) await ctx.applier.apply(o);
  }
  await setCSVStatus(ctx, csv, requirements.statuses, decision, certs);
  await reportUnavailableAPIServices(ctx, csv, decision, served);
  if (decision.delete) {
    ctx.log.info({ replacedBy: replacer?.metadata.name }, 'deleting replaced csv');
    await deleteIfPresent(ctx.client, objectPath(Resources.ClusterServiceVersion, name, namespace));
  }
  const missingAccount = [...accounts.values()].some((present) => !present);
  // A CSV with serving certificates is looked at again before they are due for rotation, and
  // every ten minutes for webhook configurations and APIServices that went missing.
  const rotation = servingRequeueAfter(serving, ctx.clock.now());
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
