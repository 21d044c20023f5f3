/**
 * What an upgrade changes in the RBAC an operator asks for: the rules of the installed CSV's
 * `permissions` (namespaced, granted through Roles) and `clusterPermissions` (cluster-wide,
 * through ClusterRoles), per service account, against the new CSV's. Pure. A rule is compared
 * whole, with its lists read as sets (order and repeats do not count), so a rule that gains a
 * verb reads as the old rule removed and the new one added.
 */
import type { ClusterServiceVersion, StrategyDeploymentPermissions } from '../apis/operators.js';

export const RbacScope = {
  Namespace: 'namespace',
  Cluster: 'cluster',
} as const;
export type RbacScope = (typeof RbacScope)[keyof typeof RbacScope];

/** One rule of a service account's permissions, its lists sorted and without repeats. */
export interface RbacRule {
  scope: RbacScope;
  serviceAccount: string;
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface RbacDelta {
  added: RbacRule[];
  removed: RbacRule[];
}

type PermissionsOf = Pick<ClusterServiceVersion, 'spec'> | undefined;

const LISTS = ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const;

const setOf = (v: unknown): string[] =>
  Array.isArray(v) ? [...new Set(v.filter((s): s is string => typeof s === 'string'))].sort() : [];

/** Every rule a CSV asks for, normalised. A missing CSV (a new install's "before") asks for none. */
export function csvRules(csv: PermissionsOf): RbacRule[] {
  const strategy = csv?.spec?.install?.spec;
  const rules: RbacRule[] = [];
  const read = (scope: RbacScope, perms: readonly StrategyDeploymentPermissions[] | undefined) => {
    for (const p of perms ?? []) {
      for (const r of p.rules ?? []) {
        const rule: RbacRule = { scope, serviceAccount: p.serviceAccountName ?? '', verbs: setOf(r.verbs) };
        for (const k of LISTS) {
          const list = setOf(r[k]);
          if (list.length > 0) rule[k] = list;
        }
        rules.push(rule);
      }
    }
  };
  read(RbacScope.Namespace, strategy?.permissions);
  read(RbacScope.Cluster, strategy?.clusterPermissions);
  return rules;
}

const ruleKey = (r: RbacRule) =>
  JSON.stringify([r.scope, r.serviceAccount, r.verbs, ...LISTS.map((k) => r[k] ?? [])]);

/** The rules `after` asks for that `before` did not, and those it no longer asks for. */
export function rbacDelta(before: readonly RbacRule[], after: readonly RbacRule[]): RbacDelta {
  const unique = (rules: readonly RbacRule[]) => new Map(rules.map((r) => [ruleKey(r), r]));
  const was = unique(before);
  const is = unique(after);
  return {
    added: [...is].filter(([k]) => !was.has(k)).map(([, r]) => r),
    removed: [...was].filter(([k]) => !is.has(k)).map(([, r]) => r),
  };
}

/** The RBAC delta of replacing the CSVs `before` (none for a new install) by `after`. */
export function csvRbacDelta(before: readonly PermissionsOf[], after: readonly PermissionsOf[]): RbacDelta {
  return rbacDelta(before.flatMap(csvRules), after.flatMap(csvRules));
}

/**
 * A rule in one line, verbs then what they apply to, kubectl's way of naming a resource in a group
 * (`get,list configmaps`, `* widgets.example.com named a`, `get /healthz`).
 */
export function describeRule(r: RbacRule): string {
  const groups = r.apiGroups ?? [''];
  const targets = [
    ...(r.resources ?? []).flatMap((res) => groups.map((g) => (g === '' ? res : `${res}.${g}`))),
    ...(r.nonResourceURLs ?? []),
  ];
  const named = r.resourceNames ? ` named ${r.resourceNames.join(', ')}` : '';
  return `${r.verbs.join(',') || '(no verbs)'} ${targets.join(', ') || '(nothing)'}${named}`;
}
