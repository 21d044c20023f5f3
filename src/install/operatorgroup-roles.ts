/**
 * An OperatorGroup's own ClusterRoles, as OLM makes them: `olm.og.<group>.<admin|edit|view>-<hash>`,
 * each aggregating, by the `olm.opgroup.permissions/aggregate-to-<api hash>-<suffix>` label, the
 * roles of every API the operators of the group's namespace provide (./provided-api-roles.ts).
 * Binding a user to one of them grants that level on the group's APIs and on nothing else. They
 * carry the group's owner labels, and go when the group goes.
 *
 * The APIs are those of the CSVs in the group's namespace, whatever their phase (as OLM counts
 * them), and, for a group with `spec.staticProvidedAPIs`, those its `olm.providedAPIs` annotation
 * declares. Bosun does not write that annotation, so on other groups it is not read: a value left
 * from elsewhere would keep aggregating APIs no operator provides any more.
 */
import { createHash } from 'node:crypto';
import type { GroupVersionKind } from '../apis/meta.js';
import {
  Annotation,
  type ClusterServiceVersion,
  Label,
  type OperatorGroup,
  Resources,
} from '../apis/operators.js';
import { managedLabels } from './ownership.js';
import {
  apiAggregationLabel,
  apiKeyString,
  type ClusterRole,
  providedApis,
  RoleSuffix,
} from './provided-api-roles.js';

/** Kubernetes' longest object name. */
const maxNameLength = 253;
const base62Digits = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** sha224 of `text` as a base-62 number (Go's big.Int.Text(62)), as OLM suffixes role names. */
export function base62Sha224(text: string): string {
  let n = BigInt(`0x${createHash('sha224').update(text).digest('hex')}`);
  if (n === 0n) return '0';
  let out = '';
  while (n > 0n) {
    out = base62Digits[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

export interface GroupRef {
  namespace: string;
  name: string;
}

/**
 * `olm.og.<group>.<suffix>-<base62 sha224 of namespace/group/suffix>`; a group name too long for
 * that to fit in 253 characters is cut, the hash keeping names of different groups apart.
 */
export function operatorGroupRoleName(og: GroupRef, suffix: RoleSuffix): string {
  const hash = base62Sha224(`${og.namespace}/${og.name}/${suffix}`);
  const fixed = 'olm.og..-'.length + suffix.length + hash.length;
  const limit = maxNameLength - fixed;
  const name = og.name.length < limit ? og.name : og.name.slice(0, limit);
  return `olm.og.${name}.${suffix}-${hash}`;
}

/** The owner labels that tie a ClusterRole to its OperatorGroup (OLM's). */
export function operatorGroupOwnerLabels(og: GroupRef): Record<string, string> {
  return {
    [Label.Owner]: og.name,
    [Label.OwnerKind]: Resources.OperatorGroup.kind,
    [Label.OwnerNamespace]: og.namespace,
  };
}

/** The OperatorGroup a ClusterRole's owner labels name, if they name one. */
export function operatorGroupOwnerOf(
  labels: Readonly<Record<string, string>> | undefined,
): GroupRef | undefined {
  const name = labels?.[Label.Owner];
  if (labels?.[Label.OwnerKind] !== Resources.OperatorGroup.kind || !name) return undefined;
  return { name, namespace: labels[Label.OwnerNamespace] ?? '' };
}

/** The entries of an `olm.providedAPIs` annotation (`<Kind>.<version>.<group>,...`); malformed ones are skipped. */
export function parseProvidedApis(annotation: string | undefined): GroupVersionKind[] {
  const out: GroupVersionKind[] = [];
  for (const entry of (annotation ?? '').split(',')) {
    const [kind, version, ...group] = entry.trim().split('.');
    if (kind && version && group.length > 0 && group.join('.') !== '')
      out.push({ kind, version, group: group.join('.') });
  }
  return out;
}

/** The APIs an OperatorGroup's roles aggregate (see the top of this file), sorted and unique. */
export function groupApis(
  og: Pick<OperatorGroup, 'metadata' | 'spec'>,
  csvs: readonly Pick<ClusterServiceVersion, 'metadata' | 'spec'>[],
): GroupVersionKind[] {
  const apis = new Map<string, GroupVersionKind>();
  const add = (api: GroupVersionKind) =>
    apis.set(apiKeyString(api), { group: api.group, version: api.version, kind: api.kind });
  for (const csv of csvs) {
    if (csv.metadata.namespace !== og.metadata.namespace) continue;
    const provided = providedApis(csv);
    // A CSV whose CRD names cannot be read provides what can be read of it.
    for (const api of provided.ok ? provided.value : []) add(api);
  }
  if (og.spec?.staticProvidedAPIs) {
    for (const api of parseProvidedApis(og.metadata.annotations?.[Annotation.ProvidedAPIs])) add(api);
  }
  return [...apis.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, api]) => api);
}

/**
 * The group's three roles. Each aggregates its level of every API in `apis`, the selectors sorted
 * so the same APIs always give the same role. With no API a role has no aggregation rule and no
 * rules: what it aggregated before is taken away (OLM leaves it, granting what no operator
 * provides any more).
 */
export function operatorGroupRoles(og: GroupRef, apis: readonly GroupVersionKind[]): ClusterRole[] {
  return Object.values(RoleSuffix).map((suffix) => {
    const selectors = [...new Set(apis.map((api) => apiAggregationLabel(api, suffix)))]
      .sort()
      .map((label) => ({ matchLabels: { [label]: 'true' } }));
    const role: ClusterRole = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: operatorGroupRoleName(og, suffix),
        labels: { ...operatorGroupOwnerLabels(og), ...managedLabels() },
      },
    };
    // The aggregation controller writes the rules of an aggregated role; only an empty one is ours.
    if (selectors.length > 0) role.aggregationRule = { clusterRoleSelectors: selectors };
    else role.rules = [];
    return role;
  });
}
