/**
 * An InstallPlan's steps from what the manager holds: the bundle of each CSV it names, found in
 * the catalog store, planned by src/install for the namespace's OperatorGroup. Reads only the
 * catalog store and informer caches, so it runs on every reconcile and gives the same steps each
 * time for the same inputs.
 *
 * Where the bundle comes from: the CatalogSource in `spec.source`/`spec.sourceNamespace` when the
 * plan names one (the Subscription controller records it there); otherwise the catalogs visible
 * from the namespace, highest `spec.priority` first.
 *
 * Without exactly one OperatorGroup the plan is still carried out, scoped to the operator's own
 * namespace, as OLM does: the CSV then reports NoOperatorGroup or TooManyOperatorGroups, and the
 * CSV controller re-scopes the RBAC once the namespace has one group.
 */
import type { BundleDoc } from '../apis/fbc.js';
import {
  BundleLookupConditionType,
  InstallPlanConditionReason,
  InstallPlanConditionType,
} from '../apis/conditions.js';
import type {
  BundleLookup,
  BundleLookupCondition,
  ClusterServiceVersion,
  InstallPlan,
  InstallPlanCondition,
} from '../apis/operators.js';
import {
  type BaseCondition,
  findCondition,
  formatTime,
  removeCondition,
  setCondition,
  truncateMessage,
} from '../kube/conditions.js';
import { bundleDecoder, type InstallableBundle } from '../install/bundle-objects.js';
import {
  AllowBroadRbacAnnotation,
  formatFinding,
  type RbacFinding,
  screenBundleRbac,
} from '../install/rbac-policy.js';
import { CopiedFromLabel, withOwner } from '../install/ownership.js';
import { upgradesFrom } from '../olm/csv-edges.js';
import type { KubeManifest } from '../apis/bundle.js';
import { objectKey } from '../kube/cache.js';
import {
  type NamespaceInfo,
  type OperatorGroupTargets,
  operatorGroupNamespaces,
  pickOperatorGroup,
} from '../install/operatorgroup.js';
import { type InstallStep, planInstall, stepObject } from '../install/plan.js';
import { type KindSchema, pruneValue } from '../install/prune.js';
import type { OperatorGroup } from '../apis/operators.js';
import type { InstallPlanContext } from './installplan.js';
import { isExtensionObject, ReplacesAnnotation } from './clusterextension-plan.js';
import { OlmV1Group } from '../apis/olmv1.js';
import { BundleContentReason } from '../catalog/content/bundles.js';
import type { CatalogRef, CatalogStore } from '../catalog/content/store.js';
import { formatProblem, type Problem } from '../util/result.js';

export type PlannedSteps =
  | {
      kind: 'steps';
      steps: InstallStep[];
      catalogSources: string[];
      /** What decoding the bundles changed or noticed (e.g. a converted CRD), to report. */
      warnings: Problem[];
      /** The bundles as they are installed (their RBAC screened, install/rbac-policy.ts). */
      bundles: InstallableBundle[];
      /** The OperatorGroup's targets the plan was made for. */
      targets: OperatorGroupTargets;
      /** What the bundles' RBAC would grant beyond the operator: left out, or allowed by the group. */
      rbac: RbacReport;
      /** The bundle images unpacked for the plan (OLM's status.bundleLookups). */
      lookups: BundleLookup[];
    }
  | { kind: 'wait'; message: string }
  | {
      kind: 'failed';
      message: string;
      /** The InstallPlan's reason, when not InstallComponentFailed. */
      reason?: InstallPlanConditionReason;
      /** The bundle images looked up, the one that failed saying why. */
      lookups?: BundleLookup[];
    };

export type LocatedBundle =
  | { kind: 'found'; bundle: BundleDoc; source: CatalogRef }
  | { kind: 'wait'; message: string }
  | { kind: 'failed'; message: string };

export function locateBundle(
  catalogs: Pick<CatalogStore, 'get' | 'findBundle' | 'visibleFrom'>,
  ip: Pick<InstallPlan, 'spec' | 'metadata'>,
  csvName: string,
): LocatedBundle {
  const { source, sourceNamespace } = ip.spec;
  // A ClusterExtension's plan names the ClusterCatalog its bundle was resolved from: a
  // cluster-wide ref (./clusterextension-plan.ts).
  const clusterCatalog = source && isExtensionObject(ip) ? source : undefined;
  if (source && (sourceNamespace || clusterCatalog)) {
    const ref = { name: source, namespace: clusterCatalog ? '' : (sourceNamespace ?? '') };
    const named = clusterCatalog ? `ClusterCatalog ${source}` : `catalog ${sourceNamespace}/${source}`;
    if (catalogs.get(ref) === undefined) {
      return { kind: 'wait', message: `waiting for ${named} to be loaded` };
    }
    const bundle = catalogs.findBundle(ref, csvName);
    if (bundle === undefined) {
      return { kind: 'failed', message: `bundle ${csvName} is not in ${named}` };
    }
    return { kind: 'found', bundle, source: ref };
  }
  const visible = [...catalogs.visibleFrom(ip.metadata.namespace ?? '')].sort(
    (a, b) => b.priority - a.priority,
  );
  for (const snapshot of visible) {
    const bundle = catalogs.findBundle(snapshot.ref, csvName);
    if (bundle !== undefined) return { kind: 'found', bundle, source: snapshot.ref };
  }
  // A catalog may still be loading; the plan is looked at again when catalogs change.
  return {
    kind: 'wait',
    message: `waiting for a catalog visible from namespace ${ip.metadata.namespace} to offer bundle ${csvName}`,
  };
}

/** The findings of screening a plan's bundles' RBAC. */
export interface RbacReport {
  /** Left out of what is applied. */
  refused: RbacFinding[];
  /** Applied as shipped, because the OperatorGroup's `bosun.dev/allow-broad-rbac` allows them. */
  allowed: RbacFinding[];
}

/** The scope a plan's RBAC gets: the one OperatorGroup's targets, or the own namespace. */
export function installTargets(
  groups: readonly OperatorGroup[],
  namespaces: readonly NamespaceInfo[],
  namespace: string,
): OperatorGroupTargets {
  const picked = pickOperatorGroup(groups);
  if (picked.ok) {
    const targets = operatorGroupNamespaces(picked.group, namespaces);
    if (targets.ok) return { operatorGroup: picked.group.metadata.name ?? '', namespaces: targets.value };
  }
  return { operatorGroup: '', namespaces: [namespace] };
}

/**
 * Plans run on every reconcile; each bundle's manifests are decoded once per content (see
 * bundleDecoder; keyed by the content's digest) and shared by every plan in this process.
 */
const decoder = bundleDecoder({ capacity: 32 });

export async function planSteps(ctx: InstallPlanContext, ip: InstallPlan): Promise<PlannedSteps> {
  const namespace = ip.metadata.namespace ?? '';
  const groups = ctx.informers.operatorGroups.list(namespace);
  // The override is the one group's: with several, none applies (and nothing picks one).
  const allow = groups.length === 1 ? groups[0]?.metadata.annotations?.[AllowBroadRbacAnnotation] : undefined;
  const targets = installTargets(
    groups,
    ctx.informers.namespaces
      .list()
      .map((n) => ({ name: n.metadata?.name ?? '', labels: n.metadata?.labels })),
    namespace,
  );
  const steps: InstallStep[] = [];
  const warnings: Problem[] = [];
  const sources = new Set<string>();
  const installed: InstallableBundle[] = [];
  const rbac: RbacReport = { refused: [], allowed: [] };
  const lookups: BundleLookup[] = [];
  for (const csvName of ip.spec.clusterServiceVersionNames) {
    const located = locateBundle(ctx.catalogs, ip, csvName);
    if (located.kind !== 'found') return located;
    const { image } = located.bundle;
    const manifests = await ctx.bundles.objects({ catalog: located.source, name: csvName, image });
    if (!manifests.ok) {
      // Gone since it was located: the catalog changed, and the plan is looked at again when it does.
      if (manifests.reason === BundleContentReason.BundleNotFound)
        return { kind: 'wait', message: manifests.message };
      // A bundle image that cannot be pulled or is not the bundle fails the plan as OLM fails a
      // bundle it cannot unpack (InstallCheckFailed, and the lookup's BundleLookupFailed).
      if (imageFailures.has(manifests.reason)) {
        const failed = bundleLookup(located, csvName, {
          type: BundleLookupConditionType.BundleLookupFailed,
          status: 'True',
          reason: manifests.reason,
          message: manifests.message,
        });
        return {
          kind: 'failed',
          message: manifests.message,
          reason: InstallPlanConditionReason.InstallCheckFailed,
          lookups: [...lookups, failed],
        };
      }
      throw new Error(manifests.message);
    }
    if (manifests.value.image)
      lookups.push(
        bundleLookup({ ...located, bundle: { ...located.bundle, image: manifests.value.image } }, csvName, {
          type: BundleLookupConditionType.BundleLookupPending,
          status: 'False',
          reason: 'Unpacked',
          message: `unpacked in-process from ${manifests.value.image}`,
        }),
      );
    const decoded = await decoder.decode(manifests.value);
    if (!decoded.ok) return { kind: 'failed', message: decoded.errors.map(formatProblem).join('; ') };
    const replaces = isExtensionObject(ip)
      ? extensionReplaces(ctx, namespace, ip)
      : upgradedFrom(ctx, namespace, located, decoded.value.csv);
    const screened = screenBundleRbac({ bundle: decoded.value, namespace, ...(allow ? { allow } : {}) });
    rbac[screened.allowed ? 'allowed' : 'refused'].push(...screened.findings);
    installed.push(screened.bundle);
    const planned = planInstall({
      bundle: screened.bundle,
      namespace,
      targets,
      source: located.source,
      ...(replaces ? { replaces } : {}),
    });
    if (!planned.ok) return { kind: 'failed', message: planned.errors.map(formatProblem).join('; ') };
    steps.push(...withExtensionOwner(planned.value, ip));
    warnings.push(...decoded.value.warnings);
    sources.add(located.source.name);
  }
  return {
    kind: 'steps',
    steps,
    catalogSources: [...sources].sort(),
    warnings,
    bundles: installed,
    targets,
    rbac,
    lookups,
  };
}

const imageFailures: ReadonlySet<string> = new Set([
  BundleContentReason.BundleImagePullFailed,
  BundleContentReason.BundleImageInvalid,
]);

/** OLM's record of a bundle looked up by image: which image, for which CSV, from which catalog. */
function bundleLookup(
  located: Extract<LocatedBundle, { kind: 'found' }>,
  csvName: string,
  condition: BundleLookupCondition,
): BundleLookup {
  return {
    path: located.bundle.image,
    identifier: csvName,
    replaces: '',
    catalogSourceRef:
      located.source.namespace === ''
        ? { apiVersion: `${OlmV1Group}/v1`, kind: 'ClusterCatalog', name: located.source.name }
        : {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'CatalogSource',
            namespace: located.source.namespace,
            name: located.source.name,
          },
    conditions: [condition],
  };
}

// ---- what the plan reports about the objects it applied ----

/** `Kind/name`, as the plan's messages name an object. */
export function objectName(obj: { kind?: string; metadata?: { name?: string } }): string {
  return `${obj.kind ?? '?'}/${obj.metadata?.name ?? '?'}`;
}

/** The fields pruned from an object before it was applied, one problem each. */
export function prunedProblems(
  obj: { apiVersion?: string; kind?: string; metadata?: { name?: string } },
  fields: readonly string[],
): Problem[] {
  return fields.map((field) => ({
    object: objectName(obj),
    field,
    message: `not declared in the schema of ${obj.apiVersion ?? '?'} ${obj.kind ?? '?'}`,
  }));
}

/**
 * The fields of a CSV's Deployment specs (`spec.install.spec.deployments[].spec`) that apps/v1
 * DeploymentSpec does not declare: the CSV keeps them (its schema preserves that object), OLM
 * drops them when it decodes the spec, and Bosun prunes them from the Deployments it applies.
 */
/** One warning per field a typed decoding changed (see install/typed-decoding.ts). */
export function typedDecodingProblems(
  obj: { apiVersion?: string; kind?: string; metadata?: { name?: string } },
  changes: { filled: readonly string[]; nulls: readonly string[] },
): Problem[] {
  const object = objectName(obj);
  const schema = `the schema of ${obj.apiVersion ?? '?'} ${obj.kind ?? '?'}`;
  return [
    ...changes.nulls.map((field) => ({
      object,
      field,
      message: `null is not allowed by ${schema}; left out, as OLM's typed decoding does`,
    })),
    ...changes.filled.map((field) => ({
      object,
      field,
      message: `required by ${schema} but missing; set to its zero value, as OLM's typed decoding does`,
    })),
  ];
}

export function csvDeploymentProblems(
  csv: { metadata?: { name?: string }; spec?: unknown },
  deploymentSpec: KindSchema,
): Problem[] {
  const spec = csv.spec as ClusterServiceVersion['spec'] | undefined;
  const deployments = spec?.install?.spec?.deployments;
  if (!Array.isArray(deployments)) return [];
  const problems: Problem[] = [];
  deployments.forEach((d, i) => {
    if (d?.spec === undefined) return;
    for (const field of pruneValue(d.spec, deploymentSpec).fields) {
      problems.push({
        object: `${objectName({ kind: 'ClusterServiceVersion', metadata: csv.metadata })}, deployment ${d.name}`,
        field: `spec.install.spec.deployments[${i}].spec.${field}`,
        message: 'not declared in apps/v1 DeploymentSpec; left out of the Deployment',
      });
    }
  });
  return problems;
}

/** Problems in first-seen order, each once. */
export function uniqueProblems(problems: readonly Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = formatProblem(p);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One line naming each object and its fields: `Kind/a: f1, f2; Kind/b: f3`. */
export function prunedMessage(problems: readonly Problem[]): string {
  const byObject = new Map<string, string[]>();
  for (const p of problems) {
    const key = p.object ?? '?';
    byObject.set(key, [...(byObject.get(key) ?? []), p.field ?? '?']);
  }
  const list = [...byObject].map(([object, fields]) => `${object}: ${fields.join(', ')}`).join('; ');
  return `removed fields their schema does not declare (the API server drops them when OLM creates the objects): ${list}`;
}

/** The bundle warnings as one message. */
export function warningsMessage(warnings: readonly Problem[]): string {
  return warnings.map(formatProblem).join('; ');
}

/** An InstallPlan condition with the type and status every condition Bosun writes has. */
export type PlanCondition = InstallPlanCondition & BaseCondition;

/**
 * The bundle RBAC the plan left out or applied by the OperatorGroup's leave, as the BroadRBAC
 * condition's reason and message and the Event's; undefined when there is none.
 */
export function rbacReportMessage(
  report: RbacReport,
): { reason: InstallPlanConditionReason; message: string } | undefined {
  const lines = (fs: RbacFinding[]) => fs.map(formatFinding).join('; ');
  if (report.refused.length > 0) {
    const allowed =
      report.allowed.length > 0 ? `; applied as allowed by the OperatorGroup: ${lines(report.allowed)}` : '';
    return {
      reason: InstallPlanConditionReason.BroadRBACRefused,
      message: `bundle RBAC that would reach beyond the operator was left out (an OperatorGroup admin may allow it with the annotation ${AllowBroadRbacAnnotation}): ${lines(report.refused)}${allowed}`,
    };
  }
  if (report.allowed.length > 0)
    return {
      reason: InstallPlanConditionReason.BroadRBACAllowed,
      message: `bundle RBAC that reaches beyond the operator was applied as shipped, as the OperatorGroup's ${AllowBroadRbacAnnotation} allows: ${lines(report.allowed)}`,
    };
  return undefined;
}

/** The plan's Pruned, BundleWarnings and BroadRBAC conditions, replacing earlier ones (none when nothing to say). */
export function warningConditions(
  current: readonly InstallPlanCondition[] | undefined,
  report: { warnings: readonly Problem[]; pruned?: readonly Problem[]; rbac?: RbacReport },
  now: number,
): InstallPlanCondition[] {
  let conditions = [...(current ?? [])] as PlanCondition[];
  const put = (type: InstallPlanConditionType, reason: InstallPlanConditionReason, message: string) => {
    if (message === '') {
      conditions = removeCondition(conditions, type);
      return;
    }
    const prev = findCondition(conditions, type);
    const same =
      prev?.status === 'True' && prev.reason === reason && prev.message === truncateMessage(message);
    const lastUpdateTime = same ? prev.lastUpdateTime : formatTime(now);
    conditions = setCondition<PlanCondition>(
      conditions,
      { type, status: 'True', reason, message, ...(lastUpdateTime ? { lastUpdateTime } : {}) },
      now,
    );
  };
  put(
    InstallPlanConditionType.BundleWarnings,
    InstallPlanConditionReason.BundleDecodedWithWarnings,
    warningsMessage(report.warnings),
  );
  if (report.rbac !== undefined) {
    const rbac = rbacReportMessage(report.rbac);
    put(
      InstallPlanConditionType.BroadRBAC,
      rbac?.reason ?? InstallPlanConditionReason.BroadRBACRefused,
      rbac?.message ?? '',
    );
  }
  if (report.pruned !== undefined) {
    put(
      InstallPlanConditionType.Pruned,
      InstallPlanConditionReason.UndeclaredFieldsPruned,
      report.pruned.length === 0 ? '' : prunedMessage(report.pruned),
    );
  }
  return conditions;
}

/**
 * The installed CSV this one upgrades from, written to its `spec.replaces` as OLM writes it: the
 * one it replaces if that is installed here, else the installed CSV of the same package that it
 * skips or whose version its skipRange holds (a jump past versions never installed). The CSV
 * replaced then retires once the new one has Succeeded.
 */
/**
 * What a ClusterExtension's plan replaces: the CSV the extension had installed when the plan was
 * made (the annotation), while it is there. v1 replaces what is installed, whatever the edges.
 */
function extensionReplaces(ctx: InstallPlanContext, namespace: string, ip: InstallPlan): string | undefined {
  const named = ip.metadata.annotations?.[ReplacesAnnotation];
  if (!named) return undefined;
  const csv = ctx.informers.csvs.get(objectKey(namespace, named));
  return csv && !csv.metadata.deletionTimestamp ? named : undefined;
}

/**
 * A ClusterExtension's plan gives the CSV its ownerReference to the extension, so deleting the
 * extension uninstalls the operator (the CSV owns the rest) through the garbage collector.
 */
function withExtensionOwner(steps: InstallStep[], ip: InstallPlan): InstallStep[] {
  const owner = ip.metadata.ownerReferences?.find((o) => o.kind === 'ClusterExtension');
  if (!owner || !isExtensionObject(ip)) return steps;
  return steps.map((step) => {
    if (step.resource.kind !== 'ClusterServiceVersion') return step;
    const owned = withOwner(
      stepObject(step),
      { apiVersion: owner.apiVersion, kind: owner.kind, metadata: { name: owner.name, uid: owner.uid } },
      { controller: false, blockOwnerDeletion: false },
    );
    return { ...step, resource: { ...step.resource, manifest: JSON.stringify(owned) } };
  });
}

function upgradedFrom(
  ctx: InstallPlanContext,
  namespace: string,
  located: Extract<LocatedBundle, { kind: 'found' }>,
  csv: ClusterServiceVersion,
): string | undefined {
  // A CSV this plan created before (a manager killed while the plan ran computes its steps
  // again) keeps the replaces it was created with: the CSV it replaced may be retired by now, and
  // applying the CSV without the field would take it away, and with it the way back (rollback)
  // and the retirement of the replaced version.
  const created = ctx.informers.csvs.get(objectKey(namespace, csv.metadata.name ?? ''));
  if (created?.spec.replaces && !created.metadata.deletionTimestamp) return created.spec.replaces;
  const named = csv.spec.replaces;
  if (named && ctx.informers.csvs.get(objectKey(namespace, named))) return named;
  const samePackage = (name: string) =>
    ctx.catalogs.findBundle(located.source, name)?.package === located.bundle.package;
  return ctx.informers.csvs.list(namespace).find(
    (c) =>
      c.metadata.name !== csv.metadata.name &&
      !c.metadata.deletionTimestamp &&
      c.metadata.labels?.[CopiedFromLabel] === undefined &&
      samePackage(c.metadata.name!) &&
      upgradesFrom(csv as unknown as KubeManifest, {
        name: c.metadata.name!,
        ...(c.spec.version ? { version: c.spec.version } : {}),
      }),
  )?.metadata.name;
}
