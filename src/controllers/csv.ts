/**
 * The ClusterServiceVersion controller (key `namespace/name`): checks the namespace's
 * OperatorGroup and the CSV's requirements, applies the install strategy (RBAC scoped to the
 * group's targets, the OperatorCondition, the Deployments), and walks the CSV through OLM's
 * phases (./csv-phase.ts). It also retires a CSV once the CSV replacing it has Succeeded, and
 * cleans up after a deleted CSV.
 *
 * Uninstall: objects in the CSV's namespace carry an ownerReference to it, so the garbage
 * collector removes them with it. Cluster-scoped RBAC (and RBAC copied into target namespaces)
 * cannot be owned by a namespaced CSV; like OLM, Bosun deletes them when it sees the CSV gone,
 * found by their owner labels, and sweeps once at start-up for CSVs deleted while it was down.
 * No finalizer: a CSV stays deletable (and its namespace too) when Bosun is not running.
 * CRDs and custom resources are never deleted.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { CSVReason } from '../apis/conditions.js';
import type { KubeObject } from '../apis/meta.js';
import type { ClusterServiceVersion, ClusterServiceVersionStatus, Subscription } from '../apis/operators.js';
import { CSVPhase, InstallPlanPhase, Label, Resources } from '../apis/operators.js';
import { renderDeployments } from '../install/deployments.js';
import { checkStrategy } from '../install/health.js';
import { type OperatorGroupTargets, operatorGroupAnnotations } from '../install/operatorgroup.js';
import {
  addOwnerReference,
  CopiedFromLabel,
  csvOwnerReference,
  ownerLabels,
  ownerSelector,
} from '../install/ownership.js';
import { rbacForPermissions } from '../install/rbac.js';
import { isEmptySelector } from '../install/selector.js';
import { splitKey } from '../kube/cache.js';
import { collectionPath, objectPath } from '../kube/client.js';
import { formatTime, statusChanged } from '../kube/conditions.js';
import type { Controller, ControllerContext } from './context.js';
import { type CSVDecision, decideCSVPhase } from './csv-phase.js';
import { type RbacRef, staleRbac } from './csv-rbac.js';
import { checkRequirements, csvServiceAccounts, operatorGroupVerdict } from './csv-requirements.js';
import { deleteByLabel, deleteIfPresent, exists, mergePatch, Rbac, ServiceAccounts } from './objects.js';

const csvApiVersion = `${Resources.ClusterServiceVersion.group}/${Resources.ClusterServiceVersion.version}`;
/** How many phase changes `status.conditions` keeps (OLM keeps a bounded history too). */
const maxHistory = 20;
/** ServiceAccounts have no informer: poll while one is missing. */
const missingServiceAccountRetryMs = 2_000;

const keyOf = (ns: string | undefined, name: string | undefined) => `${ns ?? ''}/${name ?? ''}`;

export const csvController: Controller = {
  name: 'csv',
  kind: Resources.ClusterServiceVersion.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    const csvsIn = (ns: string | undefined) => {
      for (const c of informers.csvs.list(ns)) enqueue(keyOf(ns, c.metadata.name));
    };
    const onCSV = (c: ClusterServiceVersion) => {
      enqueue(keyOf(c.metadata.namespace, c.metadata.name));
      // The CSV this one replaces follows its successor's progress (Replacing → Deleting).
      if (c.spec.replaces) enqueue(keyOf(c.metadata.namespace, c.spec.replaces));
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
        if (c.status?.phase !== CSVPhase.Succeeded) enqueue(keyOf(c.metadata.namespace, c.metadata.name));
      }
    };
    informers.crds.on({ add: onCrd, update: onCrd, delete: onCrd });
    const onSubscription = (s: Subscription) => {
      for (const name of [s.status?.installedCSV, s.status?.currentCSV]) {
        if (name) enqueue(keyOf(s.metadata.namespace, name));
      }
    };
    informers.subscriptions.on({ add: onSubscription, update: (_, s) => onSubscription(s) });
    // The OperatorCondition is named after its CSV.
    informers.operatorConditions.on({ delete: (c) => enqueue(keyOf(c.metadata.namespace, c.metadata.name)) });
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
  const labels = d.metadata?.labels ?? {};
  if (labels[Label.OwnerKind] === Resources.ClusterServiceVersion.kind && labels[Label.Owner]) {
    enqueue(keyOf(labels[Label.OwnerNamespace], labels[Label.Owner]));
  }
}

async function reconcileCSV(ctx: ControllerContext, csv: ClusterServiceVersion) {
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
  const desired = og.ok
    ? renderDeployments({ csv, targets: og.targets, config: subscriptionFor(ctx, csv)?.spec.config })
    : undefined;
  if (desired !== undefined && !desired.ok) {
    const message = desired.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    await writeStatus(ctx, csv, requirements.statuses, {
      phase: CSVPhase.Failed,
      reason: CSVReason.InvalidInstallStrategy,
      message,
      install: false,
      delete: false,
    });
    return;
  }
  const deployments = desired?.value ?? [];
  const live = deployments
    .map((d) => informers.deployments.get(keyOf(namespace, d.metadata?.name)))
    .filter((d) => d !== undefined) as unknown as V1Deployment[];

  // Decide.
  const decision = decideCSVPhase({
    phase: csv.status?.phase,
    reason: csv.status?.reason,
    operatorGroup: og.ok ? { ok: true } : og,
    requirementsMet: requirements.met,
    strategy: checkStrategy(deployments, live),
    ...(replacer
      ? { replacedBy: { name: replacer.metadata.name ?? '', phase: replacer.status?.phase } }
      : {}),
  });

  // Act.
  if (og.ok && !replacer) await annotateCSV(ctx, csv, og.targets);
  if (decision.install && og.ok) {
    ctx.log.info({ deployments: deployments.map((d) => d.metadata?.name) }, 'applying install strategy');
    await applyInstall(ctx, csv, og.targets, deployments);
  } else if (og.ok && !replacer && installedPhases.has(decision.phase) && !hasOperatorCondition(ctx, csv)) {
    // Someone deleted the OperatorCondition of an installed operator: put it back.
    for (const o of operatorConditionObjects(csv, deployments)) await ctx.applier.apply(o);
  }
  await writeStatus(ctx, csv, requirements.statuses, decision);
  if (decision.delete) {
    ctx.log.info({ replacedBy: replacer?.metadata.name }, 'deleting replaced csv');
    await deleteIfPresent(ctx.client, objectPath(Resources.ClusterServiceVersion, name, namespace));
  }
  const missingAccount = [...accounts.values()].some((present) => !present);
  return missingAccount ? { requeueAfter: missingServiceAccountRetryMs } : undefined;
}

/** Phases in which the install strategy has been applied. */
const installedPhases: ReadonlySet<string> = new Set([CSVPhase.Installing, CSVPhase.Succeeded]);

function hasOperatorCondition(ctx: ControllerContext, csv: ClusterServiceVersion): boolean {
  return ctx.informers.operatorConditions.get(keyOf(csv.metadata.namespace, csv.metadata.name)) !== undefined;
}

/** The Subscription that installed this CSV, whose `spec.config` shapes its Deployments. */
function subscriptionFor(ctx: ControllerContext, csv: ClusterServiceVersion): Subscription | undefined {
  const name = csv.metadata.name;
  return ctx.informers.subscriptions
    .list(csv.metadata.namespace)
    .find((s) => s.status?.installedCSV === name || s.status?.currentCSV === name);
}

/** OLM's OperatorGroup annotations on the CSV itself, kept in step with the group. */
async function annotateCSV(
  ctx: ControllerContext,
  csv: ClusterServiceVersion,
  targets: OperatorGroupTargets,
) {
  const want = operatorGroupAnnotations(targets, csv.metadata.namespace ?? '');
  const have = csv.metadata.annotations ?? {};
  if (Object.entries(want).every(([k, v]) => have[k] === v)) return;
  await mergePatch(
    ctx.client,
    objectPath(Resources.ClusterServiceVersion, csv.metadata.name ?? '', csv.metadata.namespace),
    { metadata: { annotations: want } },
  );
}

/**
 * Applies, in order: the Roles and bindings for the current OperatorGroup targets (so a change of
 * targets re-scopes them; the ServiceAccounts come from the InstallPlan), the OperatorCondition
 * with the RBAC that lets the operator write it, then the Deployments.
 */
async function applyInstall(
  ctx: ControllerContext,
  csv: ClusterServiceVersion,
  targets: OperatorGroupTargets,
  deployments: V1Deployment[],
) {
  const namespace = csv.metadata.namespace ?? '';
  const name = csv.metadata.name ?? '';
  const identity = { name, uid: csv.metadata.uid ?? '' };
  const strategy = csv.spec.install.spec;
  const rbac = rbacForPermissions({
    csv: { name, namespace },
    permissions: strategy?.permissions ?? [],
    clusterPermissions: strategy?.clusterPermissions ?? [],
    targetNamespaces: targets.namespaces,
  });
  for (const r of [...rbac.clusterRoles, ...rbac.roles, ...rbac.clusterRoleBindings, ...rbac.roleBindings]) {
    await ctx.applier.apply(r.metadata.namespace === namespace ? addOwnerReference(r, identity) : r);
  }
  await pruneRbac(ctx, csv, targets);
  for (const o of operatorConditionObjects(csv, deployments)) await ctx.applier.apply(o);
  for (const d of deployments) await ctx.applier.apply(d as KubeObject);
}

/** Deletes the RBAC the previous OperatorGroup targets needed and the current ones do not. */
async function pruneRbac(ctx: ControllerContext, csv: ClusterServiceVersion, targets: OperatorGroupTargets) {
  const ref = { name: csv.metadata.name ?? '', namespace: csv.metadata.namespace ?? '' };
  const selector = `${ownerSelector(ref)},${CopiedFromLabel}`;
  const copied: RbacRef[] = [];
  for (const kind of ['Role', 'RoleBinding'] as const) {
    const list = await ctx.client.request<{ items?: KubeObject[] }>({
      path: collectionPath(Rbac[kind]),
      query: { labelSelector: selector },
    });
    for (const o of list.items ?? []) {
      copied.push({ kind, name: o.metadata?.name ?? '', namespace: o.metadata?.namespace ?? '' });
    }
  }
  const strategy = csv.spec.install.spec;
  const stale = staleRbac({
    csv: ref,
    permissions: strategy?.permissions ?? [],
    clusterPermissions: strategy?.clusterPermissions ?? [],
    targetNamespaces: targets.namespaces,
    copied,
  });
  for (const r of stale) {
    if (await deleteIfPresent(ctx.client, objectPath(Rbac[r.kind], r.name, r.namespace))) {
      ctx.log.info({ kind: r.kind, namespace: r.namespace, name: r.name }, 'removed rbac no longer targeted');
    }
  }
}

/**
 * One OperatorCondition per CSV (OLM names it after the CSV and tells the operator through
 * OPERATOR_CONDITION_NAME), and a Role and RoleBinding letting the operator's ServiceAccounts
 * read and update it, all owned by the CSV.
 */
export function operatorConditionObjects(csv: ClusterServiceVersion, deployments: readonly V1Deployment[]) {
  const name = csv.metadata.name ?? '';
  const namespace = csv.metadata.namespace ?? '';
  const metadata = {
    name,
    namespace,
    labels: ownerLabels({ name, namespace }),
    ownerReferences: [csvOwnerReference({ name, uid: csv.metadata.uid ?? '' })],
  };
  const accounts = csvServiceAccounts(csv);
  const condition = {
    apiVersion: `${Resources.OperatorCondition.group}/${Resources.OperatorCondition.version}`,
    kind: Resources.OperatorCondition.kind,
    metadata,
    spec: { serviceAccounts: accounts, deployments: deployments.map((d) => d.metadata?.name ?? '') },
  };
  if (accounts.length === 0) return [condition];
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata,
    rules: [
      {
        apiGroups: [Resources.OperatorCondition.group],
        resources: [Resources.OperatorCondition.plural, `${Resources.OperatorCondition.plural}/status`],
        resourceNames: [name],
        verbs: ['get', 'update', 'patch'],
      },
    ],
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: accounts.map((sa) => ({ kind: 'ServiceAccount', name: sa, namespace })),
  };
  return [condition, role, binding];
}

async function writeStatus(
  ctx: ControllerContext,
  csv: ClusterServiceVersion,
  requirementStatus: ClusterServiceVersionStatus['requirementStatus'],
  d: CSVDecision,
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
  if (!statusChanged(prev, next)) return;
  await ctx.applier.applyStatus({
    apiVersion: csvApiVersion,
    kind: Resources.ClusterServiceVersion.kind,
    metadata: { name: csv.metadata.name, namespace: csv.metadata.namespace },
    status: next,
  });
  if (moved) {
    const failed = d.phase === CSVPhase.Failed;
    await (failed
      ? ctx.events.warning(csv, d.reason, d.message)
      : ctx.events.normal(csv, d.reason, d.message));
  }
}

/**
 * After a CSV is gone: delete the cluster-scoped RBAC and the RBAC in other namespaces that its
 * owner labels point at. Checked against the API (not only the cache) so a CSV that the cache
 * has not seen yet is never cleaned up, and skipped while an InstallPlan is still creating it
 * (its RBAC is applied before the CSV exists).
 */
async function cleanupDeleted(ctx: ControllerContext, namespace: string, name: string) {
  if (await exists(ctx.client, objectPath(Resources.ClusterServiceVersion, name, namespace))) return;
  const installing = ctx.informers.installPlans
    .list(namespace)
    .some(
      (ip) =>
        ip.spec.clusterServiceVersionNames.includes(name) &&
        ip.status?.phase !== InstallPlanPhase.Complete &&
        ip.status?.phase !== InstallPlanPhase.Failed,
    );
  if (installing) return;
  const selector = ownerSelector({ name, namespace });
  const deleted: string[] = [];
  for (const resource of [Rbac.ClusterRoleBinding, Rbac.ClusterRole, Rbac.RoleBinding, Rbac.Role]) {
    deleted.push(...(await deleteByLabel(ctx.client, resource, selector)));
  }
  if (deleted.length > 0) ctx.log.info({ deleted }, 'removed rbac of deleted csv');
}

/** Once the caches are filled: enqueue the CSVs that own cluster RBAC but no longer exist. */
async function sweepOrphans(ctx: ControllerContext, enqueue: (key: string) => void) {
  try {
    await Promise.all([ctx.informers.csvs.synced(), ctx.informers.installPlans.synced()]);
    // ClusterRoles, and Roles copied into target namespaces: neither can be garbage collected.
    const selectors = [
      {
        resource: Rbac.ClusterRole,
        labelSelector: `${Label.OwnerKind}=${Resources.ClusterServiceVersion.kind}`,
      },
      {
        resource: Rbac.Role,
        labelSelector: `${Label.OwnerKind}=${Resources.ClusterServiceVersion.kind},${CopiedFromLabel}`,
      },
    ];
    for (const { resource, labelSelector } of selectors) {
      const list = await ctx.client.request<{ items?: KubeObject[] }>({
        path: collectionPath(resource),
        query: { labelSelector },
      });
      for (const item of list.items ?? []) {
        const labels = item.metadata?.labels ?? {};
        const key = keyOf(labels[Label.OwnerNamespace], labels[Label.Owner]);
        if (ctx.informers.csvs.get(key) === undefined) enqueue(key);
      }
    }
  } catch (err) {
    ctx.log.warn({ err }, 'could not sweep rbac of deleted csvs');
  }
}
