/**
 * Installs scoped to a ServiceAccount (OperatorGroup `spec.serviceAccountName`), as OLM documents
 * them: every object an install in the group creates is created as that ServiceAccount, so an
 * operator can never be granted more than the ServiceAccount may grant, and the API server's own
 * RBAC escalation check decides. Pure rules here; the InstallPlan and CSV controllers ask the API
 * server (SubjectAccessReviews, impersonated writes).
 *
 * - `installScope`: whom an install in a namespace acts as. A group that names a ServiceAccount
 *   scopes every install of its namespace; a namespace with several groups, one of which names a
 *   ServiceAccount, installs nothing (a second group must not be a way around the first one's
 *   scope; OLM refuses such a namespace too).
 * - `scopedRefusals`: what a scoped install refuses before asking anything: a CSV or bundle role
 *   granting `*` verbs on `*` resources (in every API group, the core group or the RBAC group), a
 *   binding to `cluster-admin`, or a ClusterRole aggregating the cluster's own roles. Such an
 *   operator could act as any ServiceAccount of its scope, the install's own included, so a
 *   scoped group would mean nothing.
 */
import type { OperatorGroup } from '../apis/operators.js';
import type { InstallableBundle } from './bundle-objects.js';
import { grantsEverything, type PolicyRule, roleRefOf, rolePower, ruleText } from './rbac-policy.js';

export type InstallScope =
  | { kind: 'cluster' }
  | {
      kind: 'serviceAccount';
      operatorGroup: string;
      namespace: string;
      name: string;
      /** The user name the API server gives the ServiceAccount. */
      user: string;
    }
  | { kind: 'invalid'; message: string };

/** The user name of a ServiceAccount, as the API server authenticates (and impersonates) it. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** A ServiceAccount name is a DNS subdomain; anything else could not name one (nor be impersonated as one). */
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Whom installs in `namespace` act as, from the namespace's OperatorGroups. */
export function installScope(groups: readonly OperatorGroup[], namespace: string): InstallScope {
  const naming = groups.filter((g) => (g.spec?.serviceAccountName ?? '') !== '');
  if (naming.length === 0) return { kind: 'cluster' };
  if (groups.length > 1) {
    const names = naming.map((g) => `${g.metadata.name} (ServiceAccount ${g.spec?.serviceAccountName})`);
    return {
      kind: 'invalid',
      message: `namespace ${namespace} has ${groups.length} OperatorGroups and ${names.join(', ')} scopes installs to a ServiceAccount; nothing is installed until one OperatorGroup remains`,
    };
  }
  const og = naming[0] as OperatorGroup;
  const name = og.spec?.serviceAccountName ?? '';
  if (name.length > 253 || !dnsSubdomain.test(name)) {
    return {
      kind: 'invalid',
      message: `OperatorGroup ${namespace}/${og.metadata.name}: spec.serviceAccountName: ${JSON.stringify(name)} is not a ServiceAccount name (a DNS subdomain: lower-case letters, digits, '-' and '.')`,
    };
  }
  return {
    kind: 'serviceAccount',
    operatorGroup: og.metadata.name ?? '',
    namespace,
    name,
    user: serviceAccountUser(namespace, name),
  };
}

/**
 * What a scoped install refuses up front, one line each naming the bundle's CSV field or object:
 * rules granting everything, bindings to cluster-admin (or to a bundle role granting everything),
 * ClusterRoles aggregating the cluster's own roles.
 */
export function scopedRefusals(bundle: InstallableBundle): string[] {
  const out: string[] = [];
  const csv = `ClusterServiceVersion/${bundle.csv.metadata.name ?? bundle.name}`;
  const strategy = bundle.csv.spec.install.spec;
  for (const field of ['permissions', 'clusterPermissions'] as const) {
    (strategy?.[field] ?? []).forEach((p, i) => {
      (p.rules ?? []).forEach((rule, j) => {
        if (grantsEverything(rule as PolicyRule))
          out.push(
            `${csv}: spec.install.spec.${field}[${i}].rules[${j}] asks for ${ruleText(rule as PolicyRule)} for ServiceAccount ${p.serviceAccountName}`,
          );
      });
    });
  }
  for (const o of bundle.objects) {
    const where = `${o.kind}/${o.name}${o.at ? ` (${o.at})` : ''}`;
    if (o.kind === 'Role' || o.kind === 'ClusterRole') {
      const power = rolePower({ kind: o.kind, name: o.name }, bundle.objects);
      if (power?.level === 'everything') out.push(`${where}: ${power.why}`);
      continue;
    }
    if (o.kind !== 'ClusterRoleBinding' && o.kind !== 'RoleBinding') continue;
    const ref = roleRefOf(o);
    const power = rolePower(ref, bundle.objects);
    if (power?.level === 'everything')
      out.push(`${where}: binds ${ref.kind}/${ref.name}, which ${power.why}`);
  }
  return out;
}
