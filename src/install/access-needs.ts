/**
 * What an install scoped to a ServiceAccount asks of it, as the API server will ask when the
 * objects are written as that ServiceAccount, listed before anything is written so that a refusal
 * names every missing permission at once and nothing is half-installed:
 *
 * - every object: `create` and `patch` on its resource, by name (server-side apply is a PATCH;
 *   one that creates the object is also authorized as `create`);
 * - every Role and ClusterRole: the API server refuses a role granting what its writer does not
 *   hold, unless the writer may `escalate` roles. So either `escalate` on it, or each permission
 *   of each rule, in the role's scope (its namespace, or cluster-wide for a ClusterRole);
 * - every RoleBinding and ClusterRoleBinding: either `bind` on the role it refers to, or each
 *   permission of that role in the binding's scope. A role that neither the install nor the
 *   cluster has cannot be checked: only `bind` will do (the API server decides the same way);
 * - CRD conversions the CSV controller patches: `patch` on the CRD.
 *
 * Each need is one or more alternatives, each a list of accesses (one SubjectAccessReview each);
 * a need is met when every access of one alternative is allowed. Pure: the controller asks.
 */
import type { Resource } from '../olm/kinds.js';
import { splitApiVersion } from '../olm/kinds.js';
import { isRecord } from '../util/record.js';
import type { PolicyRule } from './rbac-policy.js';

/** One question to the API server (a SubjectAccessReview's attributes). */
export type Access =
  | {
      resource: {
        verb: string;
        group: string;
        resource: string;
        subresource?: string;
        namespace?: string;
        name?: string;
      };
    }
  | { nonResource: { verb: string; path: string } };

export interface AccessNeed {
  /** The object the need is about, `Kind/name` or `Kind namespace/name`. */
  object: string;
  /** Alternatives: the need is met when every access of one of them is allowed. */
  anyOf: Access[][];
  /** For a role or binding: which alternative is the permissions themselves (for the message). */
  grants?: { escalateVerb: 'escalate' | 'bind' };
}

/** The resource that serves a kind (plural) and whether it is namespaced, as discovery says. */
export type ResourceOf = (
  apiVersion: string,
  kind: string,
) => { name: string; namespaced: boolean } | undefined;

/** The rules of a role the install does not create, as the cluster holds it; undefined when missing. */
export type LiveRules = (
  kind: 'Role' | 'ClusterRole',
  name: string,
  namespace?: string,
) => PolicyRule[] | undefined;

export interface NeedsInput {
  /** Every object the install writes (the plan's steps and what the CSV controller applies). */
  objects: readonly Resource[];
  /** CRDs whose `spec.conversion` the CSV controller patches. */
  patchedCRDs?: readonly string[];
  resourceOf: ResourceOf;
  liveRules: LiveRules;
}

export interface Needs {
  needs: AccessNeed[];
  /** Objects of kinds the API server does not serve: their apply will fail on its own. */
  unknownKinds: string[];
}

const rbacGroup = 'rbac.authorization.k8s.io';

export function accessNeeds(input: NeedsInput): Needs {
  const needs: AccessNeed[] = [];
  const unknownKinds = new Set<string>();
  const created = new Map<string, PolicyRule[]>();
  for (const o of input.objects) {
    if (o.kind === 'Role' || o.kind === 'ClusterRole')
      created.set(roleKey(o.kind, o.metadata.name, o.metadata.namespace), rulesOf(o));
  }
  const rulesFor = (kind: 'Role' | 'ClusterRole', name: string, namespace?: string) =>
    created.get(roleKey(kind, name, kind === 'Role' ? namespace : undefined)) ??
    input.liveRules(kind, name, kind === 'Role' ? namespace : undefined);

  const seen = new Set<string>();
  for (const o of input.objects) {
    const served = input.resourceOf(o.apiVersion, o.kind);
    if (served === undefined) {
      unknownKinds.add(`${o.apiVersion} ${o.kind}`);
      continue;
    }
    const namespace = served.namespaced ? o.metadata.namespace : undefined;
    const object = describe(o.kind, o.metadata.name, namespace);
    if (seen.has(object)) continue;
    seen.add(object);
    const { group } = splitApiVersion(o.apiVersion);
    const write = (verb: string): Access => ({
      resource: {
        verb,
        group,
        resource: served.name,
        name: o.metadata.name,
        ...(namespace ? { namespace } : {}),
      },
    });
    needs.push({ object, anyOf: [[write('create'), write('patch')]] });
    if (o.kind === 'Role' || o.kind === 'ClusterRole') {
      needs.push({
        object,
        anyOf: [[write('escalate')], grantAccesses(rulesOf(o), namespace)],
        grants: { escalateVerb: 'escalate' },
      });
    } else if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') {
      const ref = isRecord(o.roleRef) ? (o.roleRef as { kind?: string; name?: string }) : {};
      const refKind = ref.kind === 'Role' ? 'Role' : 'ClusterRole';
      const bind: Access = {
        resource: {
          verb: 'bind',
          group: rbacGroup,
          resource: refKind === 'Role' ? 'roles' : 'clusterroles',
          name: ref.name ?? '',
          ...(namespace ? { namespace } : {}),
        },
      };
      const rules = rulesFor(refKind, ref.name ?? '', namespace);
      needs.push({
        object,
        anyOf: rules === undefined ? [[bind]] : [[bind], grantAccesses(rules, namespace)],
        grants: { escalateVerb: 'bind' },
      });
    }
  }
  for (const crd of input.patchedCRDs ?? []) {
    const object = describe('CustomResourceDefinition', crd);
    needs.push({
      object: `${object} (conversion)`,
      anyOf: [
        [
          {
            resource: {
              verb: 'patch',
              group: 'apiextensions.k8s.io',
              resource: 'customresourcedefinitions',
              name: crd,
            },
          },
        ],
      ],
    });
  }
  return { needs, unknownKinds: [...unknownKinds].sort() };
}

/**
 * Each permission a list of rules grants, as the accesses that check it: one per API group,
 * resource (split into resource and subresource), verb and resource name, or per URL and verb.
 * A `*` is asked as `*`: RBAC matches it only against a rule that says `*`, which is what the
 * API server's escalation check requires too.
 */
export function grantAccesses(rules: readonly PolicyRule[], namespace?: string): Access[] {
  const out: Access[] = [];
  const keys = new Set<string>();
  const add = (a: Access) => {
    const key = JSON.stringify(a);
    if (keys.has(key)) return;
    keys.add(key);
    out.push(a);
  };
  for (const rule of rules) {
    const verbs = rule.verbs ?? [];
    for (const path of rule.nonResourceURLs ?? [])
      for (const verb of verbs) add({ nonResource: { verb, path } });
    const names = rule.resourceNames?.length ? rule.resourceNames : [undefined];
    for (const group of rule.apiGroups ?? [])
      for (const full of rule.resources ?? []) {
        const slash = full.indexOf('/');
        const resource = slash < 0 ? full : full.slice(0, slash);
        const subresource = slash < 0 ? undefined : full.slice(slash + 1);
        for (const verb of verbs)
          for (const name of names)
            add({
              resource: {
                verb,
                group,
                resource,
                ...(subresource ? { subresource } : {}),
                ...(namespace ? { namespace } : {}),
                ...(name !== undefined ? { name } : {}),
              },
            });
      }
  }
  return out;
}

/** `verb resource.group[/subresource] [name] (in namespace ns | cluster-wide)`, for messages. */
export function accessText(a: Access): string {
  if ('nonResource' in a) return `${a.nonResource.verb} ${a.nonResource.path}`;
  const r = a.resource;
  const what = `${r.resource}${r.group ? `.${r.group}` : ''}${r.subresource ? `/${r.subresource}` : ''}`;
  return `${r.verb} ${what}${r.name ? ` ${r.name}` : ''} ${r.namespace ? `in namespace ${r.namespace}` : 'cluster-wide'}`;
}

/** The key of an access, to ask each once. */
export function accessKey(a: Access): string {
  return JSON.stringify(a);
}

export interface UnmetNeed {
  object: string;
  /** What was not allowed: the writes, or for a role or binding the permissions it grants. */
  missing: Access[];
  /** For a role or binding, the `escalate` or `bind` that would have done instead. */
  instead?: Access;
}

/** The needs not met, given the answer to each access. */
export function unmetNeeds(needs: readonly AccessNeed[], allowed: (a: Access) => boolean): UnmetNeed[] {
  const out: UnmetNeed[] = [];
  for (const need of needs) {
    if (need.anyOf.some((alt) => alt.every(allowed))) continue;
    const [first = [], grants = []] = need.anyOf;
    if (need.grants === undefined) {
      out.push({ object: need.object, missing: first.filter((a) => !allowed(a)) });
      continue;
    }
    const instead = first[0];
    out.push({
      object: need.object,
      missing: grants.filter((a) => !allowed(a)),
      ...(instead !== undefined ? { instead } : {}),
    });
  }
  return out;
}

/** One line per unmet need: what the ServiceAccount may not do about each object. */
export function unmetText(u: UnmetNeed): string {
  const missing = u.missing.map(accessText).join(', ');
  if (u.instead === undefined) return `${u.object}: may not ${missing}`;
  if (u.missing.length === 0)
    return `${u.object}: refers to a role that does not exist yet, so it may only be bound with ${accessText(u.instead)}, which is not allowed`;
  return `${u.object}: grants what the ServiceAccount does not hold (${missing}), and it may not ${accessText(u.instead)}`;
}

function rulesOf(o: Resource): PolicyRule[] {
  return Array.isArray(o.rules) ? (o.rules as unknown[]).filter(isRecord).map((r) => r as PolicyRule) : [];
}

function roleKey(kind: string, name: string, namespace?: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

function describe(kind: string, name: string, namespace?: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}
