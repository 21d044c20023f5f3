/**
 * What an installed operator is made of, as OLM's `Operator` kind shows it (`kubectl get
 * operators`), in pure functions over plain objects.
 *
 * An operator installed by a Subscription is named `<package>.<namespace>`. Its components carry
 * the label `operators.coreos.com/<name>: ""`, put there by adoption (OLM's adoption controller):
 * - the Subscription itself, the CSV it installed (and, as Bosun sets `installedCSV` only once a
 *   CSV has Succeeded, the CSV it is installing, which OLM already counts as installed), and its
 *   latest InstallPlan, while earlier InstallPlans lose the label;
 * - everything a labelled CSV owns, by ownerReference or by owner labels (Deployments,
 *   ServiceAccounts, RBAC, Services, Secrets, ConfigMaps, OperatorConditions, APIServices), and
 *   the CRDs it owns.
 * Labels are only ever added to a CSV's objects, never taken off, and CRDs keep theirs: they
 * outlive the CSV, so after an uninstall the Operator still lists them, as OLM's does.
 * The Operator's status lists every object that carries the label, whoever labelled it.
 */
import type { KubeObject } from '../apis/meta.js';
import {
  type ClusterServiceVersion,
  type ComponentCondition,
  type InstallPlan,
  type OperatorStatus,
  Resources,
  type RichReference,
  type Subscription,
} from '../apis/operators.js';
import { fail, ok, type Result } from '../util/result.js';
import { CopiedFromLabel, csvOwnerOf } from './ownership.js';

/** Every component label starts with this; the rest is the operator's name (cut to 63 characters). */
export const ComponentLabelPrefix = 'operators.coreos.com/';

/** The longest name part of a label key Kubernetes accepts. */
const maxLabelName = 63;

/** The name OLM gives the operator a Subscription installs: `<package>.<namespace>`. */
export function packageOperatorName(pkg: string, namespace: string): string {
  return namespace === '' ? pkg : `${pkg}.${namespace}`;
}

/**
 * The component label key of the operator named `name`: the prefix and the name, cut to 63
 * characters without a trailing `.`, `_` or `-` (a label's name part must end alphanumeric).
 */
export function componentLabelKey(name: string): Result<string> {
  if (name === '') return fail([{ object: 'Operator', field: 'metadata.name', message: 'is empty' }]);
  let cut = name.length > maxLabelName ? name.slice(0, maxLabelName) : name;
  cut = cut.replace(/[._-]+$/, '');
  if (cut === '') {
    return fail([
      {
        object: `Operator/${name}`,
        field: 'metadata.name',
        message: 'leaves no label name once cut to 63 characters and stripped of trailing . _ -',
      },
    ]);
  }
  return ok(`${ComponentLabelPrefix}${cut}`);
}

/**
 * The name an operator goes by in its component labels, and so the name of its Operator object:
 * the same as `packageOperatorName` unless that is longer than a label's name part may be.
 */
export function operatorNameOf(sub: Pick<Subscription, 'metadata' | 'spec'>): string | undefined {
  const pkg = sub.spec?.name;
  if (!pkg) return undefined;
  const key = componentLabelKey(packageOperatorName(pkg, sub.metadata.namespace ?? ''));
  return key.ok ? key.value.slice(ComponentLabelPrefix.length) : undefined;
}

/**
 * The operators an object is a component of, read from its labels. `notComponents` names label
 * keys under the same prefix that mean something else (Bosun's InstallPlan → Subscription label).
 */
export function operatorNamesOf(
  labels: Readonly<Record<string, string>> | undefined,
  notComponents: ReadonlySet<string>,
): string[] {
  return Object.keys(labels ?? {})
    .filter((k) => k.startsWith(ComponentLabelPrefix) && !notComponents.has(k))
    .map((k) => k.slice(ComponentLabelPrefix.length))
    .filter((n) => n !== '');
}

export function hasLabel(obj: KubeObject, key: string): boolean {
  return Object.hasOwn(obj.metadata?.labels ?? {}, key);
}

// ---------------------------------------------------------------------------------------------
// The Operator's status

const csvApiVersion = `${Resources.ClusterServiceVersion.group}/${Resources.ClusterServiceVersion.version}`;

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The fields of a condition a component reference carries, those present. */
function condition(c: Json): ComponentCondition {
  const out: ComponentCondition = { type: str(c.type) ?? '', status: str(c.status) ?? '' };
  for (const f of ['reason', 'message', 'lastUpdateTime', 'lastTransitionTime'] as const) {
    const v = str(c[f]);
    if (v !== undefined) out[f] = v;
  }
  return out;
}

/**
 * A component's conditions: its `status.conditions`, or for a CSV its phase as one condition that
 * is True (a CSV's own conditions are its phase history). None when there is no status yet.
 */
export function componentConditions(obj: KubeObject): ComponentCondition[] | undefined {
  const status = (obj as { status?: unknown }).status;
  if (!isMap(status)) return undefined;
  if (obj.apiVersion === csvApiVersion && obj.kind === Resources.ClusterServiceVersion.kind) {
    if (status.phase === undefined) return undefined;
    return [condition({ ...status, type: status.phase, status: 'True' })];
  }
  if (!Array.isArray(status.conditions)) return undefined;
  return status.conditions.filter(isMap).map(condition);
}

/** A reference to one component: its kind, API version, namespace, name and conditions. */
export function componentRef(obj: KubeObject): RichReference {
  const ref: RichReference = {};
  if (obj.apiVersion) ref.apiVersion = obj.apiVersion;
  if (obj.kind) ref.kind = obj.kind;
  if (obj.metadata?.name) ref.name = obj.metadata.name;
  if (obj.metadata?.namespace) ref.namespace = obj.metadata.namespace;
  const conditions = componentConditions(obj);
  if (conditions !== undefined && conditions.length > 0) ref.conditions = conditions;
  return ref;
}

const byString = (a = '', b = '') => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The Operator's status for the components found with its label `key`: the selector and one
 * reference per component, sorted by kind, API version, namespace and name so that the same
 * components always give the same status. No `refs` when there are none.
 */
export function operatorStatus(key: string, components: readonly KubeObject[]): OperatorStatus {
  const refs = components
    .map(componentRef)
    .sort(
      (a, b) =>
        byString(a.kind, b.kind) ||
        byString(a.apiVersion, b.apiVersion) ||
        byString(a.namespace, b.namespace) ||
        byString(a.name, b.name),
    );
  return {
    components: {
      labelSelector: { matchExpressions: [{ key, operator: 'Exists' }] },
      ...(refs.length > 0 ? { refs } : {}),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Adoption

/** A label to put on an object or take off it. */
export interface LabelChange {
  object: KubeObject;
  key: string;
  /** `true` adds the label (value ""), `false` removes it. */
  add: boolean;
}

export interface AdoptionInput {
  /** The operator's component label key. */
  key: string;
  subscriptions: readonly Subscription[];
  csvs: readonly ClusterServiceVersion[];
  installPlans: readonly InstallPlan[];
  crds: readonly KubeObject[];
  /** Objects of every other kind a CSV may own (Deployments, RBAC, Secrets, ...). */
  owned: readonly KubeObject[];
}

/** OLM's copies of a CSV in target namespaces are never components (Bosun makes none). */
const isCopied = (obj: KubeObject) => hasLabel(obj, CopiedFromLabel);

/** Whether `obj` belongs to `csv`: an ownerReference to it (by uid), or its owner labels. */
export function isOwnedBy(obj: KubeObject, csv: ClusterServiceVersion): boolean {
  const uid = csv.metadata.uid;
  if (uid && (obj.metadata?.ownerReferences ?? []).some((r) => r.uid === uid)) return true;
  const owner = csvOwnerOf(obj.metadata?.labels);
  return (
    owner !== undefined && owner.name === csv.metadata.name && owner.namespace === csv.metadata.namespace
  );
}

/**
 * The label changes that make the operator with component label `key` adopt what it is made of
 * (see the top of this file). Each object appears at most once; objects already labelled need no
 * change and are left out.
 */
export function adoptionChanges(input: AdoptionInput): LabelChange[] {
  const { key } = input;
  const name = key.slice(ComponentLabelPrefix.length);
  const changes = new Map<string, LabelChange>();
  const id = (o: KubeObject) =>
    `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
  const adopt = (o: KubeObject | undefined) => {
    if (o !== undefined && !hasLabel(o, key)) changes.set(id(o), { object: o, key, add: true });
  };
  const find = <T extends KubeObject>(list: readonly T[], ns: string | undefined, n: string | undefined) =>
    n ? list.find((o) => o.metadata?.namespace === ns && o.metadata?.name === n) : undefined;

  const adopted = new Set<ClusterServiceVersion>();
  for (const sub of input.subscriptions) {
    if (operatorNameOf(sub) !== name) continue;
    const ns = sub.metadata.namespace;
    adopt(sub);
    for (const csvName of new Set([sub.status?.installedCSV, sub.status?.currentCSV])) {
      const csv = find(input.csvs, ns, csvName);
      if (csv !== undefined && !isCopied(csv)) {
        adopt(csv);
        adopted.add(csv);
      }
    }
    const latest = sub.status?.installPlanRef?.name;
    if (latest) {
      adopt(find(input.installPlans, ns, latest));
      for (const ip of input.installPlans) {
        if (ip.metadata.namespace === ns && ip.metadata.name !== latest && hasLabel(ip, key))
          changes.set(id(ip), { object: ip, key, add: false });
      }
    }
  }

  const csvs = input.csvs.filter((c) => (hasLabel(c, key) || adopted.has(c)) && !isCopied(c));
  for (const csv of csvs) {
    for (const o of input.owned) if (isOwnedBy(o, csv)) adopt(o);
    for (const owned of csv.spec.customresourcedefinitions?.owned ?? []) {
      adopt(input.crds.find((c) => c.metadata?.name === owned.name));
    }
  }
  return [...changes.values()];
}

/**
 * The CSVs an object points at as its owner (by ownerReference, which only a namespaced object in
 * the CSV's namespace can have, or by owner labels), as `namespace/name` pairs.
 */
export function ownerCSVsOf(obj: KubeObject): { namespace: string; name: string }[] {
  const out: { namespace: string; name: string }[] = [];
  const byLabel = csvOwnerOf(obj.metadata?.labels);
  if (byLabel) out.push(byLabel);
  const ns = obj.metadata?.namespace;
  for (const r of obj.metadata?.ownerReferences ?? []) {
    if (ns && r.kind === Resources.ClusterServiceVersion.kind && r.apiVersion === csvApiVersion)
      out.push({ namespace: ns, name: r.name });
  }
  return out;
}
