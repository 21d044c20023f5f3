/**
 * The Kubernetes meta/v1 and core/v1 shapes that OLM's kinds embed, as plain JSON (timestamps are
 * RFC 3339 strings, as they travel on the wire). Bosun reads and writes objects as plain JSON
 * rather than through @kubernetes/client-node's model classes, which turn timestamps into `Date`s
 * and drop fields they do not know.
 */

/** An RFC 3339 timestamp as the API server writes it, e.g. `2024-05-01T12:00:00Z`. */
export type Time = string;

/** What identifies a kind of resource and where it is served (the CRD generator and informers share it). */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  /** The resource name in URLs, e.g. `subscriptions`. */
  plural: string;
  namespaced: boolean;
}

/** `group/version`, or just `version` for the core group. */
export function apiVersionOf(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: Time;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Time;
  deletionTimestamp?: Time;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** Any Kubernetes object as plain JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** corev1.ObjectReference, which OLM uses for `installPlanRef`, `catalogSourceRef` and others. */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export const ConditionStatus = {
  True: 'True',
  False: 'False',
  Unknown: 'Unknown',
} as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

/**
 * metav1.Condition: the standard condition (CatalogSource, OperatorGroup and OperatorCondition use
 * it). `reason` is CamelCase and never empty; `lastTransitionTime` moves only when `status` does.
 */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: Time;
  reason: string;
  message: string;
}
