/**
 * The kinds of object an install creates, where each is served, whether it is namespaced, and in
 * which phase of an InstallPlan it is applied. One table, so that bundle validation, bundle
 * decoding, planning and the controller that executes a plan agree on every kind.
 */
import type { ObjectMeta } from '../apis/meta.js';

/**
 * The phases of an InstallPlan, in the order they run. CRDs go first because everything after
 * them may refer to their kinds, and the controller waits for them to be Established; RBAC comes
 * before the objects and the CSV whose Deployments run as the ServiceAccounts; the CSV comes last.
 */
export const InstallPhase = {
  CRDs: 'CRDs',
  ServiceAccounts: 'ServiceAccounts',
  RBAC: 'RBAC',
  Resources: 'Resources',
  CSV: 'CSV',
} as const;
export type InstallPhase = (typeof InstallPhase)[keyof typeof InstallPhase];

export const PhaseOrder: readonly InstallPhase[] = Object.values(InstallPhase);

export interface KindInfo {
  group: string;
  kind: string;
  namespaced: boolean;
  phase: InstallPhase;
  /**
   * The versions current Kubernetes serves the kind in, for built-in kinds (and Bosun's own CSV).
   * Kinds a CRD defines (monitoring, autoscaling) are served in whatever versions their CRD says.
   * Removed versions of these kinds are converted before this is checked (bundle/upgrade).
   */
  versions?: readonly string[];
}

/**
 * Every kind Bosun installs, in apply order (the order within a phase matters too: roles before
 * the bindings that refer to them, because the API server checks a binding against its role).
 */
export const InstallableKinds = [
  {
    group: 'apiextensions.k8s.io',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    phase: 'CRDs',
    versions: ['v1'],
  },
  { group: '', kind: 'ServiceAccount', namespaced: true, phase: 'ServiceAccounts', versions: ['v1'] },
  {
    group: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    namespaced: false,
    phase: 'RBAC',
    versions: ['v1'],
  },
  { group: 'rbac.authorization.k8s.io', kind: 'Role', namespaced: true, phase: 'RBAC', versions: ['v1'] },
  {
    group: 'rbac.authorization.k8s.io',
    kind: 'ClusterRoleBinding',
    namespaced: false,
    phase: 'RBAC',
    versions: ['v1'],
  },
  {
    group: 'rbac.authorization.k8s.io',
    kind: 'RoleBinding',
    namespaced: true,
    phase: 'RBAC',
    versions: ['v1'],
  },
  { group: '', kind: 'Service', namespaced: true, phase: 'Resources', versions: ['v1'] },
  { group: '', kind: 'ConfigMap', namespaced: true, phase: 'Resources', versions: ['v1'] },
  { group: '', kind: 'Secret', namespaced: true, phase: 'Resources', versions: ['v1'] },
  {
    group: 'scheduling.k8s.io',
    kind: 'PriorityClass',
    namespaced: false,
    phase: 'Resources',
    versions: ['v1'],
  },
  {
    group: 'networking.k8s.io',
    kind: 'NetworkPolicy',
    namespaced: true,
    phase: 'Resources',
    versions: ['v1'],
  },
  { group: 'policy', kind: 'PodDisruptionBudget', namespaced: true, phase: 'Resources', versions: ['v1'] },
  { group: 'autoscaling.k8s.io', kind: 'VerticalPodAutoscaler', namespaced: true, phase: 'Resources' },
  { group: 'monitoring.coreos.com', kind: 'PrometheusRule', namespaced: true, phase: 'Resources' },
  { group: 'monitoring.coreos.com', kind: 'ServiceMonitor', namespaced: true, phase: 'Resources' },
  { group: 'monitoring.coreos.com', kind: 'PodMonitor', namespaced: true, phase: 'Resources' },
  {
    group: 'operators.coreos.com',
    kind: 'ClusterServiceVersion',
    namespaced: true,
    phase: 'CSV',
    versions: ['v1alpha1'],
  },
] as const satisfies readonly KindInfo[];

export type InstallableKind = (typeof InstallableKinds)[number]['kind'];

const byKind = new Map<string, KindInfo>(InstallableKinds.map((k) => [k.kind, k]));
const rank = new Map<string, number>(InstallableKinds.map((k, i) => [k.kind, i]));

export function kindInfo(kind: string): KindInfo | undefined {
  return byKind.get(kind);
}

/** Position of a kind in apply order; unknown kinds sort last. */
export function kindRank(kind: string): number {
  return rank.get(kind) ?? InstallableKinds.length;
}

/** A Kubernetes object as Bosun renders it: plain JSON with a name. */
export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { name: string };
  [field: string]: unknown;
}

/** Splits `group/version` (or a bare core `version`). */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function apiVersionFor(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}
