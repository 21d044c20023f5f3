/**
 * How installed objects point back at their CSV, the way OLM marks them:
 * - every object gets `olm.managed=true`, so Bosun can watch only what it made;
 * - every object a CSV owns gets the owner labels `olm.owner`, `olm.owner.kind`,
 *   `olm.owner.namespace`, which is how uninstall finds cluster-scoped objects (and objects in
 *   other namespaces), since an ownerReference cannot cross namespaces or point from a
 *   cluster-scoped object to a namespaced one;
 * - objects in the CSV's own namespace also get a non-blocking ownerReference to the CSV, so
 *   the garbage collector removes them with it. The CSV's uid is only known once it exists, so
 *   the reference is added later by `addOwnerReference`.
 * CRDs get `olm.managed` but no owner labels: they and their custom resources outlive the CSV.
 * The one other owner is a Subscription, which owns its InstallPlans (`withOwner`).
 */
import type { KubeObject, OwnerReference } from '../apis/meta.js';
import { Label, Resources } from '../apis/operators.js';

/** OLM's label on RBAC copied into a target namespace; its value is the operator's namespace. */
export const CopiedFromLabel = 'olm.copiedFrom';

/** The label on operator Deployments whose value is the hash of their desired spec. */
export const DeploymentSpecHashLabel = 'olm.deployment-spec-hash';

/** Which CSV owns an object. */
export interface CSVRef {
  name: string;
  namespace: string;
}

/** The CSV once it exists: its uid is what an ownerReference needs. */
export interface CSVIdentity extends CSVRef {
  uid: string;
}

const csvApiVersion = `${Resources.ClusterServiceVersion.group}/${Resources.ClusterServiceVersion.version}`;

export function managedLabels(): Record<string, string> {
  return { [Label.Managed]: 'true' };
}

/** A label selector for everything Bosun manages (its informers watch only that). */
export const managedSelector = `${Label.Managed}=true`;

/** Whether an object carries `olm.managed=true`. */
export function isManaged(obj: { metadata?: { labels?: Readonly<Record<string, string>> } }): boolean {
  return obj.metadata?.labels?.[Label.Managed] === 'true';
}

export function ownerLabels(csv: CSVRef): Record<string, string> {
  return {
    [Label.Managed]: 'true',
    [Label.Owner]: csv.name,
    [Label.OwnerKind]: Resources.ClusterServiceVersion.kind,
    [Label.OwnerNamespace]: csv.namespace,
  };
}

/** A label selector for everything owned by some CSV (for the start-up sweep of deleted CSVs). */
export const anyCSVOwnerSelector = `${Label.OwnerKind}=${Resources.ClusterServiceVersion.kind}`;

/** The CSV an object's owner labels name, if they name one. */
export function csvOwnerOf(labels: Readonly<Record<string, string>> | undefined): CSVRef | undefined {
  const name = labels?.[Label.Owner];
  if (labels?.[Label.OwnerKind] !== Resources.ClusterServiceVersion.kind || !name) return undefined;
  return { name, namespace: labels[Label.OwnerNamespace] ?? '' };
}

/** A label selector string that finds everything a CSV owns (for list calls at uninstall). */
export function ownerSelector(csv: CSVRef): string {
  return Object.entries(ownerLabels(csv))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/**
 * OLM's non-blocking owner: not the controller (the operator may adopt its own objects) and not
 * blocking the CSV's deletion on the object's.
 */
export function csvOwnerReference(csv: Pick<CSVIdentity, 'name' | 'uid'>): OwnerReference {
  return {
    apiVersion: csvApiVersion,
    kind: Resources.ClusterServiceVersion.kind,
    name: csv.name,
    uid: csv.uid,
    controller: false,
    blockOwnerDeletion: false,
  };
}

/**
 * A copy of `obj` with an ownerReference to the CSV, replacing any earlier reference to a CSV of
 * the same name (e.g. one with a stale uid after the CSV was recreated).
 */
export function addOwnerReference<T extends KubeObject>(obj: T, csv: Pick<CSVIdentity, 'name' | 'uid'>): T {
  const ref = csvOwnerReference(csv);
  const others = (obj.metadata?.ownerReferences ?? []).filter(
    (r) => !(r.kind === ref.kind && r.apiVersion === ref.apiVersion && r.name === ref.name),
  );
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: [...others, ref] } };
}

/** Any object that owns another through an ownerReference (e.g. a Subscription its InstallPlans). */
export interface Owner {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; uid?: string };
}

/**
 * A copy of `obj` with an ownerReference to `owner` (a reference with the same uid is replaced),
 * so that deleting the owner lets the garbage collector delete the object; `controller: true`
 * marks the one owner that manages it. Throws when the reference would be invalid: an owner needs
 * a uid, and a namespaced owner can only own objects in its own namespace.
 */
export function withOwner<T extends KubeObject>(
  obj: T,
  owner: Owner,
  opts: { controller?: boolean; blockOwnerDeletion?: boolean } = {},
): T {
  const { name, namespace, uid } = owner.metadata ?? {};
  const describe = `${owner.kind} ${namespace ? `${namespace}/` : ''}${name ?? '?'}`;
  if (!name || !uid)
    throw new Error(`an owner needs a name and uid (read it from the API first): ${describe}`);
  if (namespace && obj.metadata?.namespace !== namespace) {
    throw new Error(
      `${obj.kind ?? '?'} ${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? '?'} cannot be owned by ${describe}: ` +
        'a namespaced owner can only own objects in its namespace (use owner labels instead)',
    );
  }
  const ref: OwnerReference = { apiVersion: owner.apiVersion, kind: owner.kind, name, uid };
  if (opts.controller !== undefined) ref.controller = opts.controller;
  if (opts.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = opts.blockOwnerDeletion;
  const others = (obj.metadata?.ownerReferences ?? []).filter((r) => r.uid !== ref.uid);
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: [...others, ref] } };
}
