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
 * The namespace gets an OperatorGroup owned by the extension when it has none: the engine reads
 * an operator's targets from it. It targets `spec.config.inline.watchNamespace` when that is set
 * (v1's Single/OwnNamespace install), every namespace otherwise, and follows a change of the
 * setting (extensionGroupStep); a group the extension did not make is never changed.
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
import { CSVReason } from '../apis/conditions.js';
import { isEmptySelector } from '../olm/selector.js';

/** The labels v1 puts on what a ClusterExtension installs (api/v1 labels.OwnerKindKey, OwnerNameKey). */
export const ExtensionOwnerLabels = {
  kind: 'olm.operatorframework.io/owner-kind',
  name: 'olm.operatorframework.io/owner-name',
} as const;

/**
 * The label catalogd's webhook gives each ClusterCatalog: its name. Bosun has no webhook, so the
 * label counts for every ClusterCatalog whether set or not (v1's tutorials select catalogs by it).
 */
export const CatalogNameLabel = 'olm.operatorframework.io/metadata.name';

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
 * The OperatorGroup an extension makes in a namespace without one: `watchNamespace` its one
 * target when set, else every namespace; and the extension's ServiceAccount the identity the
 * install is carried out as (the engine's scoped install: checked against what the account may do
 * before anything is applied), as v1.2.0 installs as `spec.serviceAccount`.
 */
export function desiredExtensionGroup(ext: ClusterExtension, watchNamespace?: string): OperatorGroup {
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
    spec: {
      serviceAccountName: ext.spec?.serviceAccount.name ?? '',
      ...(watchNamespace !== undefined ? { targetNamespaces: [watchNamespace] } : {}),
    },
  } as OperatorGroup;
}

/** What the extension does about its namespace's OperatorGroup. */
export type GroupStep =
  /** The namespace has none: make the extension's. */
  | { kind: 'create'; group: OperatorGroup }
  /** The extension's own group targets other namespaces than asked: `targetNamespaces` set to these (null: every namespace). */
  | { kind: 'retarget'; name: string; targetNamespaces: string[] | null }
  /** The group there is the one wanted. */
  | { kind: 'keep' }
  /** A group the extension did not make targets other namespaces than watchNamespace asks. */
  | { kind: 'conflict'; message: string };

/**
 * What the extension does about the OperatorGroups of its namespace, for `watchNamespace` (checked
 * already; undefined: unset). Its own group (owned by its uid, not merely labelled: a label anyone
 * can write) follows the setting. A group it did not make is the user's: while watchNamespace is
 * unset its targets stand, and when set they must be exactly that namespace, or the extension
 * reports both rather than change the user's group.
 */
export function extensionGroupStep(
  ext: ClusterExtension,
  groups: readonly OperatorGroup[],
  watchNamespace: string | undefined,
): GroupStep {
  const namespace = ext.spec?.namespace ?? '';
  const owned = (g: OperatorGroup) => ownsGroup(ext, g);
  const live = groups.filter((g) => !g.metadata.deletionTimestamp);
  const foreign = givenGroup(ext, groups);
  if (foreign) {
    if (watchNamespace === undefined) return { kind: 'keep' };
    const targets = groupTargets(foreign);
    if (targets?.length === 1 && targets[0] === watchNamespace) return { kind: 'keep' };
    const says =
      targets === undefined
        ? 'targets the namespaces its selector matches'
        : targets.length === 1 && targets[0] === ''
          ? 'targets every namespace'
          : `targets ${listTargets(targets)}`;
    return {
      kind: 'conflict',
      message: `spec.config.inline.watchNamespace is ${JSON.stringify(watchNamespace)}, but OperatorGroup ${namespace}/${foreign.metadata.name}, which ClusterExtension ${ext.metadata.name} did not make, ${says}; the extension does not change a group it did not make: set watchNamespace to what the group targets, or change the group's spec.targetNamespaces to [${JSON.stringify(watchNamespace)}]`,
    };
  }
  const own = live.find(owned);
  if (!own) {
    // A group of the extension's still being deleted: the next one is made once it is gone.
    if (groups.length > 0) return { kind: 'keep' };
    return { kind: 'create', group: desiredExtensionGroup(ext, watchNamespace) };
  }
  const want = watchNamespace === undefined ? [] : [watchNamespace];
  const have = own.spec?.targetNamespaces ?? [];
  if (have.length === want.length && have.every((n, i) => n === want[i])) return { kind: 'keep' };
  return { kind: 'retarget', name: own.metadata.name ?? '', targetNamespaces: want.length > 0 ? want : null };
}

/** How many of a user's group's targets a message lists, each cut to 63 characters: the list is the user's, of any length. */
const TargetsListed = 10;

function listTargets(targets: readonly string[]): string {
  const shown = JSON.stringify(
    targets.slice(0, TargetsListed).map((t) => (t.length > 63 ? `${t.slice(0, 63)}...` : t)),
  );
  return targets.length > TargetsListed ? `${shown} and ${targets.length - TargetsListed} more` : shown;
}

/** Whether the extension made the group: owned by its uid, not merely labelled (a label anyone can write). */
function ownsGroup(ext: ClusterExtension, g: OperatorGroup): boolean {
  return (g.metadata.ownerReferences ?? []).some(
    (o) => o.kind === V1Resources.ClusterExtension.kind && o.uid === ext.metadata.uid,
  );
}

/** The OperatorGroup of the extension's namespace that the extension did not make, if any. */
export function givenGroup(
  ext: ClusterExtension,
  groups: readonly OperatorGroup[],
): OperatorGroup | undefined {
  return groups.find((g) => !g.metadata.deletionTimestamp && !ownsGroup(ext, g));
}

/**
 * The namespaces a group targets as its spec says (`['']`: every namespace), or undefined when a
 * selector chooses them: then the group's own status, once its controller has written it.
 */
function groupTargets(g: OperatorGroup): string[] | undefined {
  const listed = g.spec?.targetNamespaces ?? [];
  if (listed.length > 0) return [...new Set(listed)].sort();
  return isEmptySelector(g.spec?.selector) ? [''] : g.status?.namespaces;
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
    live.find((c) => c.status?.phase === CSVPhase.Replacing) ??
    live.find(reinstalling);
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

/**
 * Whether a CSV that had succeeded is being installed again in place: its Deployments changed
 * under it (a new watchNamespace retargets them), so it went InstallReady (NeedsReinstall) and on
 * through Installing, as OLM's CSVs do. The operator stays installed meanwhile; counting it gone
 * would flip `Installed` and make the extension plan its bundle again.
 */
function reinstalling(csv: ClusterServiceVersion): boolean {
  const phase = csv.status?.phase;
  if (phase !== CSVPhase.InstallReady && phase !== CSVPhase.Installing) return false;
  // The phase history: Succeeded, then InstallReady for NeedsReinstall, then only Installing.
  const history = csv.status?.conditions ?? [];
  const i = history.findLastIndex((c) => c.phase === CSVPhase.InstallReady);
  return (
    i > 0 &&
    history[i]!.reason === CSVReason.NeedsReinstall &&
    history[i - 1]!.phase === CSVPhase.Succeeded &&
    history.slice(i + 1).every((c) => c.phase === CSVPhase.Installing)
  );
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
