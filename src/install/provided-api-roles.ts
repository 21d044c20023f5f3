/**
 * The ClusterRoles that let users work with the APIs an operator provides, as OLM makes them
 * (pkg/controller/operators/olm/operatorgroup.go), so that `kubectl` habits and RBAC written for
 * OLM work unchanged:
 * - for each CRD a CSV owns (`<plural>.<group>`, at the version the CSV names):
 *   `<plural>.<group>-<version>-admin` (every verb), `-edit` (create, update, patch, delete),
 *   `-view` (get, list, watch) on the custom resources, and `-crdview` (get on the CRD itself);
 * - for each API service a CSV owns: `<name>-<version>-admin`, `-edit` and `-view`.
 * Each carries `rbac.authorization.k8s.io/aggregate-to-<admin|edit|view>: "true"`, so the
 * built-in `admin`, `edit` and `view` ClusterRoles take its rules in (a user bound to `edit` in a
 * namespace may then create the operator's custom resources there), and
 * `olm.opgroup.permissions/aggregate-to-<hash of the API>-<admin|edit|view>: "true"`, which the
 * OperatorGroup's own roles select (./operatorgroup-roles.ts). They are owned by the CRD or the
 * APIService (a non-blocking ownerReference), not by the CSV: they go when the API goes, since
 * custom resources outlive the CSV and users still need to reach them.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';
import type { GroupVersionKind, KubeObject, LabelSelector, OwnerReference } from '../apis/meta.js';
import type { ClusterServiceVersion } from '../apis/operators.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { managedLabels } from './ownership.js';

/** A ClusterRole as plain JSON. */
export type ClusterRole = KubeObject & {
  rules?: V1PolicyRule[];
  aggregationRule?: { clusterRoleSelectors?: LabelSelector[] };
};

export const RoleSuffix = { Admin: 'admin', Edit: 'edit', View: 'view' } as const;
export type RoleSuffix = (typeof RoleSuffix)[keyof typeof RoleSuffix];

/** The verbs each role grants on the provided resources. */
export const VerbsFor: Record<RoleSuffix, readonly string[]> = {
  admin: ['*'],
  edit: ['create', 'update', 'patch', 'delete'],
  view: ['get', 'list', 'watch'],
};

/** Kubernetes' label that aggregates a ClusterRole into the built-in `admin`, `edit` or `view`. */
export function builtinAggregationLabel(suffix: RoleSuffix): string {
  return `rbac.authorization.k8s.io/aggregate-to-${suffix}`;
}

/** An API a CSV provides, and the object that serves it (which owns its roles). */
export interface ProvidedApi extends GroupVersionKind {
  /** The resource name (a CRD's plural, an API service's `name`). */
  plural: string;
  /** The CRD (`<plural>.<group>`) or the APIService (`<version>.<group>`). */
  servedBy: { kind: 'CustomResourceDefinition' | 'APIService'; name: string };
}

/**
 * The APIs a CSV provides: the CRDs and API services it owns. A CRD name without a group
 * (`<plural>.<group>`) is a problem naming the field.
 */
export function providedApis(csv: Pick<ClusterServiceVersion, 'metadata' | 'spec'>): Result<ProvidedApi[]> {
  const apis: ProvidedApi[] = [];
  const problems: Problem[] = [];
  const object = `ClusterServiceVersion/${csv.metadata.name ?? ''}`;
  (csv.spec.customresourcedefinitions?.owned ?? []).forEach((crd, i) => {
    const dot = crd.name.indexOf('.');
    if (dot <= 0 || dot === crd.name.length - 1) {
      problems.push({
        object,
        field: `spec.customresourcedefinitions.owned[${i}].name`,
        message: `${JSON.stringify(crd.name)} is not <plural>.<group>`,
      });
      return;
    }
    const plural = crd.name.slice(0, dot);
    const group = crd.name.slice(dot + 1);
    apis.push({
      group,
      version: crd.version,
      kind: crd.kind,
      plural,
      servedBy: { kind: 'CustomResourceDefinition', name: crd.name },
    });
  });
  for (const api of csv.spec.apiservicedefinitions?.owned ?? []) {
    apis.push({
      group: api.group,
      version: api.version,
      kind: api.kind,
      plural: api.name,
      servedBy: { kind: 'APIService', name: `${api.version}.${api.group}` },
    });
  }
  return problems.length > 0 ? fail(problems) : ok(apis);
}

const fnvOffset = 0xcbf29ce484222325n;
const fnvPrime = 0x100000001b3n;
const mask64 = (1n << 64n) - 1n;

/**
 * OLM's hash of an API: FNV-1a (64 bits) of `<kind>.<version>.<group>`, in lower-case hex without
 * leading zeros. It names the API in aggregation labels (a label name cannot hold the API itself).
 */
export function apiHash(api: GroupVersionKind): string {
  let h = fnvOffset;
  for (const byte of new TextEncoder().encode(apiKeyString(api))) {
    h ^= BigInt(byte);
    h = (h * fnvPrime) & mask64;
  }
  return h.toString(16);
}

/** `<kind>.<version>.<group>`, as OLM writes an API in `olm.providedAPIs`. */
export function apiKeyString(api: GroupVersionKind): string {
  return `${api.kind}.${api.version}.${api.group}`;
}

/** The label by which an OperatorGroup's `<suffix>` role selects one API's `<suffix>` role. */
export function apiAggregationLabel(api: GroupVersionKind, suffix: RoleSuffix): string {
  return `olm.opgroup.permissions/aggregate-to-${apiHash(api)}-${suffix}`;
}

/** The object serving a provided API, as read from the cluster (an ownerReference needs its uid). */
export interface ApiServer {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

function role(
  name: string,
  suffix: RoleSuffix,
  api: ProvidedApi,
  rule: V1PolicyRule,
  owner: ApiServer,
): ClusterRole {
  const ownerReference: OwnerReference = {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.name,
    uid: owner.uid,
    controller: false,
    blockOwnerDeletion: false,
  };
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name,
      labels: {
        [builtinAggregationLabel(suffix)]: 'true',
        [apiAggregationLabel(api, suffix)]: 'true',
        ...managedLabels(),
      },
      ownerReferences: [ownerReference],
    },
    rules: [rule],
  };
}

/** The roles for one provided API, owned by `owner` (its CRD or APIService). */
export function providedApiRoles(api: ProvidedApi, owner: ApiServer): ClusterRole[] {
  const prefix = `${api.servedBy.kind === 'CustomResourceDefinition' ? api.servedBy.name : api.plural}-${api.version}-`;
  const roles = Object.values(RoleSuffix).map((suffix) =>
    role(
      `${prefix}${suffix}`,
      suffix,
      api,
      { apiGroups: [api.group], resources: [api.plural], verbs: [...VerbsFor[suffix]] },
      owner,
    ),
  );
  if (api.servedBy.kind === 'CustomResourceDefinition') {
    // Reading the CRD lets `kubectl explain` and UIs describe the custom resources.
    roles.push(
      role(
        `${prefix}crdview`,
        RoleSuffix.View,
        api,
        {
          apiGroups: ['apiextensions.k8s.io'],
          resources: ['customresourcedefinitions'],
          resourceNames: [api.servedBy.name],
          verbs: ['get'],
        },
        owner,
      ),
    );
  }
  return roles;
}

const selectorsOf = (r: ClusterRole) =>
  r.aggregationRule?.clusterRoleSelectors?.length ? r.aggregationRule.clusterRoleSelectors : undefined;
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const sameRules = (a: V1PolicyRule[] | undefined, b: V1PolicyRule[] | undefined) =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((r, i) => sameRule(r, b?.[i]));
const sameRule = (a: V1PolicyRule, b: V1PolicyRule | undefined) =>
  b !== undefined &&
  (['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs', 'verbs'] as const).every((f) =>
    same(a[f]?.length ? a[f] : undefined, b[f]?.length ? b[f] : undefined),
  );

/**
 * Whether `live` (undefined: missing) lacks anything of `desired`: one of its labels, an owner,
 * its aggregation rule, or, where `desired` sets rules, those rules. Labels and owners others add
 * are left alone, and an aggregated role's rules are the aggregation controller's.
 */
export function roleNeedsApply(live: ClusterRole | undefined, desired: ClusterRole): boolean {
  if (live === undefined) return true;
  const labels = live.metadata?.labels ?? {};
  if (Object.entries(desired.metadata?.labels ?? {}).some(([k, v]) => labels[k] !== v)) return true;
  const owners = new Set((live.metadata?.ownerReferences ?? []).map((r) => r.uid));
  if ((desired.metadata?.ownerReferences ?? []).some((r) => !owners.has(r.uid))) return true;
  if (!same(selectorsOf(live), selectorsOf(desired))) return true;
  return desired.rules !== undefined && !sameRules(live.rules, desired.rules);
}
