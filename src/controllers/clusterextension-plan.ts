/**
 * Pure helpers of the ClusterExtension controller: how an extension is carried out by the
 * engine v0's Subscriptions use, and what of it is installed.
 *
 * A ClusterExtension installs through an InstallPlan in `spec.namespace`, one per bundle it
 * installs, named from the extension, the bundle and what it replaces (extensionPlanName):
 * - labelled `olm.operatorframework.io/owner-kind: ClusterExtension` and `owner-name: <name>` (the
 *   labels v1 puts on what it installs), and owned by the extension (a non-blocking
 *   ownerReference), so deleting the extension lets the garbage collector take the plan, and with
 *   the CSV (owned the same way, see extensionOwnedCSV) the operator;
 * - `spec.source` names the ClusterCatalog the bundle was resolved from; the InstallPlan
 *   controller reads it from the catalog store under that catalog's cluster-wide ref;
 * - the CSV it replaces is the one installed, whatever the catalog's edges say (v1 replaces what
 *   is installed: a SelfCertified downgrade too), in the annotation ReplacesAnnotation.
 * The namespace gets an OperatorGroup owned by the extension when it has none; an operator
 * installed for every namespace (v1's only mode without a watchNamespace) needs one for the
 * engine to know its targets.
 */
import { createHash } from 'node:crypto';
import type { BundleDoc } from '../apis/fbc.js';
import type { OwnerReference } from '../apis/meta.js';
import { type BundleMetadata, type ClusterExtension, OlmV1Group, V1Resources } from '../apis/olmv1.js';
import {
  Approval,
  type ClusterServiceVersion,
  CSVPhase,
  type InstallPlan,
  type OperatorGroup,
  Resources,
} from '../apis/operators.js';

/** The labels v1 puts on what a ClusterExtension installs (api/v1 labels.OwnerKindKey, OwnerNameKey). */
export const ExtensionOwnerLabels = {
  kind: 'olm.operatorframework.io/owner-kind',
  name: 'olm.operatorframework.io/owner-name',
} as const;

/** On an extension's InstallPlan: the CSV the planned one replaces. */
export const ReplacesAnnotation = 'olm.operatorframework.io/replaces';
/**
 * On an extension's InstallPlan: `install.preflight.crdUpgradeSafety.enforcement` when the plan
 * was made (`Strict` unless the extension says `None`); `None` lets the plan replace CRDs without
 * the safety check, as v1 skips its preflight.
 */
export const CRDUpgradeSafetyAnnotation = 'olm.operatorframework.io/crd-upgrade-safety';
/** On an extension's InstallPlan: the extension's generation when the plan was made. */
export const ExtensionGenerationAnnotation = 'olm.operatorframework.io/extension-generation';
/** On an extension's InstallPlan: the bundle's image as its catalog names it (v1's `Installed` message names it). */
export const BundleImageAnnotation = 'olm.operatorframework.io/bundle-image';

export function extensionOwner(ext: ClusterExtension): OwnerReference {
  return {
    apiVersion: `${OlmV1Group}/v1`,
    kind: V1Resources.ClusterExtension.kind,
    name: ext.metadata.name ?? '',
    uid: ext.metadata.uid ?? '',
    controller: false,
    blockOwnerDeletion: false,
  };
}

/**
 * The name of the extension's InstallPlan that installs `bundle` in place of `replaces` (none on
 * a first install) at the extension's current generation: a manager that restarts finds the plan
 * it made, and a bundle installed again later (a downgrade back to it, after a change of spec)
 * gets a plan of its own rather than the finished one of its first install.
 */
export function extensionPlanName(
  ext: Pick<ClusterExtension, 'metadata'>,
  bundle: string,
  replaces: string | undefined,
): string {
  const { uid, generation } = ext.metadata;
  const h = createHash('sha256')
    .update(`ClusterExtension/${uid ?? ''}/${generation ?? 0}/${bundle}/${replaces ?? ''}`)
    .digest('hex');
  return `extension-${h.slice(0, 10)}`;
}

/** Whether a plan (or OperatorGroup) was made for ClusterExtension `name` (any, without one). */
export function isExtensionObject(
  obj: { metadata: { labels?: Record<string, string> } },
  name?: string,
): boolean {
  const labels = obj.metadata.labels ?? {};
  return (
    labels[ExtensionOwnerLabels.kind] === V1Resources.ClusterExtension.kind &&
    (name === undefined || labels[ExtensionOwnerLabels.name] === name)
  );
}

/** The ClusterExtension that owns an object, by its ownerReferences. */
export function owningExtension(obj: {
  metadata: { ownerReferences?: OwnerReference[] };
}): string | undefined {
  return obj.metadata.ownerReferences?.find(
    (o) => o.kind === V1Resources.ClusterExtension.kind && o.apiVersion.startsWith(`${OlmV1Group}/`),
  )?.name;
}

export function desiredExtensionPlan(
  ext: ClusterExtension,
  bundle: Pick<BundleDoc, 'name' | 'image'>,
  catalog: string,
  replaces: string | undefined,
  generation: number,
): InstallPlan {
  const name = ext.metadata.name ?? '';
  return {
    apiVersion: `${Resources.InstallPlan.group}/${Resources.InstallPlan.version}`,
    kind: 'InstallPlan',
    metadata: {
      name: extensionPlanName(ext, bundle.name, replaces),
      namespace: ext.spec?.namespace ?? '',
      labels: {
        [ExtensionOwnerLabels.kind]: V1Resources.ClusterExtension.kind,
        [ExtensionOwnerLabels.name]: name,
      },
      annotations: {
        [BundleImageAnnotation]: bundle.image ?? '',
        [ExtensionGenerationAnnotation]: String(ext.metadata.generation ?? 0),
        [CRDUpgradeSafetyAnnotation]: ext.spec?.install?.preflight?.crdUpgradeSafety.enforcement ?? 'Strict',
        ...(replaces ? { [ReplacesAnnotation]: replaces } : {}),
      },
      ownerReferences: [extensionOwner(ext)],
    },
    spec: {
      clusterServiceVersionNames: [bundle.name],
      approval: Approval.Automatic,
      approved: true,
      generation,
      source: catalog,
      sourceNamespace: '',
    },
  };
}

/**
 * The OperatorGroup an extension makes in a namespace without one: every namespace its target,
 * and the extension's ServiceAccount the identity the install is carried out as (the engine's
 * scoped install: checked against what the account may do before anything is applied), as v1.2.0
 * installs as `spec.serviceAccount`.
 */
export function desiredExtensionGroup(ext: ClusterExtension): OperatorGroup {
  const name = ext.metadata.name ?? '';
  return {
    apiVersion: `${Resources.OperatorGroup.group}/${Resources.OperatorGroup.version}`,
    kind: 'OperatorGroup',
    metadata: {
      name,
      namespace: ext.spec?.namespace ?? '',
      labels: {
        [ExtensionOwnerLabels.kind]: V1Resources.ClusterExtension.kind,
        [ExtensionOwnerLabels.name]: name,
      },
      ownerReferences: [extensionOwner(ext)],
    },
    spec: { serviceAccountName: ext.spec?.serviceAccount.name ?? '' },
  } as OperatorGroup;
}

/**
 * On a ClusterExtension: the Subscription in its namespace it takes over (`bosun migrate
 * subscription`). That Subscription does not count as another owner, and the CSV it installed is
 * adopted as the extension's installed bundle (given an ownerReference to the extension) instead
 * of being installed again.
 */
export const MigratedFromAnnotation = 'bosun.dev/migrated-from-subscription';

/** Whether `csv` names `ext` among its owners (by uid: a namesake made again is another extension). */
export function ownedByExtension(csv: ClusterServiceVersion, ext: ClusterExtension): boolean {
  return (csv.metadata.ownerReferences ?? []).some(
    (o) => o.kind === V1Resources.ClusterExtension.kind && o.uid === ext.metadata.uid,
  );
}

/**
 * The bundle the extension has installed: of the CSVs its plans created (or it adopted), the one
 * that has `Succeeded` (during an upgrade the older one stays installed until the newer succeeds, then
 * goes `Replacing`).
 */
export function installedBundle(
  plans: readonly InstallPlan[],
  csvOf: (name: string) => ClusterServiceVersion | undefined,
  /** CSVs the extension adopted rather than installed (see MigratedFromAnnotation). */
  adopted: readonly string[] = [],
): { csv: ClusterServiceVersion; bundle: BundleMetadata; image?: string } | undefined {
  const names = new Set([...plans.flatMap((p) => p.spec.clusterServiceVersionNames), ...adopted]);
  const live = [...names]
    .map(csvOf)
    .filter((c): c is ClusterServiceVersion => c !== undefined && !c.metadata.deletionTimestamp);
  const csv =
    live.find((c) => c.status?.phase === CSVPhase.Succeeded) ??
    live.find((c) => c.status?.phase === CSVPhase.Replacing);
  if (!csv) return undefined;
  const name = csv.metadata.name ?? '';
  const plan = plans.find((p) => p.spec.clusterServiceVersionNames.includes(name));
  return {
    csv,
    bundle: { name, version: csv.spec.version ?? '' },
    ...(plan?.metadata.annotations?.[BundleImageAnnotation]
      ? { image: plan.metadata.annotations[BundleImageAnnotation] }
      : {}),
  };
}

/** How long a failed plan of an extension stays before it is made again (v1 retries a failed install). */
export const FailedPlanRetryMs = 30_000;

/**
 * When the extension's failed plan is to be made again: v1 retries a failed install (a CRD
 * upgrade its preflight refused may be safe once the custom resources change), while an
 * InstallPlan that failed stays failed. So the plan is deleted this long after it failed (its
 * last condition change), and the next reconcile makes it again, checked again; at once when the
 * extension's spec changed since the plan was made (its enforcement turned off, say).
 */
export function failedPlanRetryAt(plan: InstallPlan, ext: ClusterExtension): number {
  if (plan.metadata.annotations?.[ExtensionGenerationAnnotation] !== String(ext.metadata.generation ?? 0))
    return 0;
  const times = (plan.status?.conditions ?? [])
    .map((c) => Date.parse(c.lastTransitionTime ?? ''))
    .filter((t) => Number.isFinite(t));
  return (times.length > 0 ? Math.max(...times) : 0) + FailedPlanRetryMs;
}
