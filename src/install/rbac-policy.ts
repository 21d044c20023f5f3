/**
 * What a bundle may grant. A bundle ships ClusterRoleBindings and RoleBindings of its own
 * (manifests/), and OLM applies them as they are: one that binds `cluster-admin` to
 * `system:authenticated` makes every user of the cluster an administrator. Before planning, Bosun
 * screens the bundle's RBAC objects and leaves out what would reach beyond the operator:
 *
 * - `BroadSubject`: any role bound to a subject that stands for many users: the groups
 *   `system:authenticated`, `system:unauthenticated`, `system:serviceaccounts` and
 *   `system:serviceaccounts:<namespace>` (every ServiceAccount of a namespace), and the user (or
 *   group) `system:anonymous`. That subject is left out of the binding.
 * - `PowerfulRoleToOthers`: a role that grants everything or can grant itself everything
 *   (`cluster-admin`; a rule with `*` verbs on `*` resources in every API group, the core group or
 *   the RBAC group; `impersonate` on users, groups or ServiceAccounts; `bind` or `escalate` on
 *   roles; a ClusterRole aggregating the cluster's own roles) bound to anyone but the operator's
 *   own ServiceAccounts: those of the install namespace that the bundle names (in the CSV's
 *   permissions and Deployments, or as ServiceAccount manifests). A ServiceAccount written as a
 *   User (`system:serviceaccount:<ns>:<name>`) is that ServiceAccount. The subject is left out.
 * - `AggregatedIntoBuiltin`: a ClusterRole of such power labelled to be aggregated into the
 *   cluster's `admin`, `edit` or `view` roles, which every namespace user holds: the labels are
 *   left out.
 * - `BuiltinName`: an RBAC object named as one the cluster relies on (`cluster-admin`, `admin`,
 *   `edit`, `view`, `system:*`): applied with forced ownership it would rewrite that role or
 *   binding for everyone, so it is left out.
 * A binding left with no subject is left out whole. Each finding names the bundle, where the
 * object is in it, the object, the subject and the role.
 *
 * An OperatorGroup admin may let a bundle's RBAC be applied as shipped: the annotation
 * `bosun.dev/allow-broad-rbac` on the OperatorGroup lists the packages or bundle (CSV) names it
 * allows (comma-separated), or `*` for every bundle installed in the group. Only someone who may
 * edit the OperatorGroup can set it; the findings are reported either way.
 *
 * Subject names are compared exactly, as the API server compares them (`System:Authenticated` is
 * no group anyone is in).
 */
import type { BundleObject, InstallableBundle } from './bundle-objects.js';
import { isRecord } from '../util/record.js';

export const AllowBroadRbacAnnotation = 'bosun.dev/allow-broad-rbac';

/** The groups every user, every anonymous request or every ServiceAccount is in. */
export const BroadGroups: readonly string[] = [
  'system:authenticated',
  'system:unauthenticated',
  'system:serviceaccounts',
  'system:anonymous',
];
const serviceAccountsOfNamespace = 'system:serviceaccounts:';
const anonymousUser = 'system:anonymous';
const serviceAccountUserPrefix = 'system:serviceaccount:';

/** The names of the cluster's own RBAC objects that a bundle must not rewrite. */
const builtinNames: readonly string[] = ['cluster-admin', 'admin', 'edit', 'view'];
const builtinPrefix = 'system:';

/** The labels that aggregate a ClusterRole into the cluster's `admin`, `edit` and `view` roles. */
const builtinAggregationLabel = /^rbac\.authorization\.k8s\.io\/aggregate-to-(admin|edit|view)$/;

const rbacGroup = 'rbac.authorization.k8s.io';

export const FindingKind = {
  BroadSubject: 'BroadSubject',
  PowerfulRoleToOthers: 'PowerfulRoleToOthers',
  AggregatedIntoBuiltin: 'AggregatedIntoBuiltin',
  BuiltinName: 'BuiltinName',
} as const;
export type FindingKind = (typeof FindingKind)[keyof typeof FindingKind];

export interface RbacFinding {
  kind: FindingKind;
  /** The bundle (its CSV's name). */
  bundle: string;
  /** Where the object is in the bundle (`properties[3]`, `manifests/x.yaml`), when known. */
  at?: string;
  /** `Kind/name` of the bundle's object. */
  object: string;
  /** The subject, as `Kind namespace/name` or `Kind name`. */
  subject?: string;
  /** The role, as `Kind/name`. */
  role?: string;
  message: string;
}

/** One line per finding: `bundle b, ClusterRoleBinding/x (properties[3]): ...`. */
export function formatFinding(f: RbacFinding): string {
  return `bundle ${f.bundle}, ${f.object}${f.at ? ` (${f.at})` : ''}: ${f.message}`;
}

// ---- what a rule, a role and a subject amount to ----

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const has = (list: readonly string[] | undefined, ...values: string[]) =>
  (list ?? []).some((v) => values.includes(v));

/**
 * Whether a rule grants everything: `*` verbs on `*` resources of every API group, or of the core
 * group (every Secret, Pod and ServiceAccount token: any identity of the scope) or of the RBAC
 * group (bind and escalate on every role: any permission).
 */
export function grantsEverything(rule: PolicyRule): boolean {
  return has(rule.verbs, '*') && has(rule.resources, '*') && has(rule.apiGroups, '*', '', rbacGroup);
}

/**
 * How much a rule or role grants, when it is more than limited: `everything`, or `escalation` (it
 * lets its holder grant itself everything), and why, for messages.
 */
export interface Power {
  level: 'everything' | 'escalation';
  why: string;
}

/**
 * The power of one rule: `*` on `*` (above) is everything; acting as any user, group or
 * ServiceAccount (`impersonate`), or binding or writing any role whatever it grants (`bind`,
 * `escalate`), is escalation.
 */
export function rulePower(rule: PolicyRule): Power | undefined {
  if (grantsEverything(rule))
    return { level: 'everything', why: `grants every verb on every resource (${ruleText(rule)})` };
  if (
    has(rule.verbs, 'impersonate', '*') &&
    has(rule.resources, 'users', 'groups', 'serviceaccounts', '*') &&
    has(rule.apiGroups, '', '*')
  )
    return { level: 'escalation', why: `may impersonate any user (${ruleText(rule)})` };
  if (
    has(rule.verbs, 'bind', 'escalate', '*') &&
    has(rule.resources, 'roles', 'clusterroles', '*') &&
    has(rule.apiGroups, rbacGroup, '*')
  )
    return { level: 'escalation', why: `may bind or write roles granting anything (${ruleText(rule)})` };
  return undefined;
}

/** `verbs [a b] on resources [c] in groups [""]`, for messages. */
export function ruleText(rule: PolicyRule): string {
  const list = (xs: string[] | undefined) => `[${(xs ?? []).map((x) => (x === '' ? '""' : x)).join(' ')}]`;
  if (rule.nonResourceURLs?.length) return `verbs ${list(rule.verbs)} on URLs ${list(rule.nonResourceURLs)}`;
  return `verbs ${list(rule.verbs)} on ${list(rule.resources)} in API groups ${list(rule.apiGroups)}`;
}

/** A subject of a binding, as written. */
export interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
  apiGroup?: string;
}

export type SubjectClass = { kind: 'broad'; why: string } | { kind: 'own' } | { kind: 'other' };

export interface InstallIdentity {
  /** The namespace the operator is installed in. */
  namespace: string;
  /** The operator's own ServiceAccounts there. */
  serviceAccounts: ReadonlySet<string>;
}

/** What a subject stands for, from where the bundle is installed. */
export function classifySubject(s: Subject, install: InstallIdentity): SubjectClass {
  const name = s.name ?? '';
  if (s.kind === 'Group' || s.kind === 'User') {
    if (BroadGroups.includes(name)) return { kind: 'broad', why: broadWhy(name) };
    if (name.startsWith(serviceAccountsOfNamespace))
      return {
        kind: 'broad',
        why: `every ServiceAccount of namespace ${name.slice(serviceAccountsOfNamespace.length)}`,
      };
  }
  if (s.kind === 'User' && name.startsWith(serviceAccountUserPrefix)) {
    const [namespace, account, ...rest] = name.slice(serviceAccountUserPrefix.length).split(':');
    if (rest.length > 0 || !namespace || !account) return { kind: 'other' };
    return classifySubject({ kind: 'ServiceAccount', name: account, namespace }, install);
  }
  // A bundle's ServiceAccount subject without a namespace is given the install namespace (plan.ts).
  const namespace = s.namespace || install.namespace;
  if (s.kind === 'ServiceAccount' && namespace === install.namespace && install.serviceAccounts.has(name))
    return { kind: 'own' };
  return { kind: 'other' };
}

function broadWhy(name: string): string {
  switch (name) {
    case 'system:authenticated':
      return 'every authenticated user';
    case 'system:unauthenticated':
      return 'every unauthenticated request';
    case 'system:serviceaccounts':
      return 'every ServiceAccount of the cluster';
    default:
      return name === anonymousUser ? 'every anonymous request' : name;
  }
}

export function subjectText(s: Subject): string {
  const ns = s.namespace ? `${s.namespace}/` : '';
  return `${s.kind ?? '?'} ${ns}${s.name ?? '?'}`;
}

/** The ServiceAccounts of the install namespace that the bundle itself names. */
export function ownServiceAccounts(bundle: InstallableBundle): Set<string> {
  const own = new Set<string>();
  const strategy = bundle.csv.spec.install.spec;
  for (const p of [...(strategy?.permissions ?? []), ...(strategy?.clusterPermissions ?? [])])
    if (p.serviceAccountName) own.add(p.serviceAccountName);
  for (const d of strategy?.deployments ?? []) {
    const pod = d.spec?.template?.spec;
    // A Pod that names no ServiceAccount runs as `default`.
    own.add(pod?.serviceAccountName || pod?.serviceAccount || 'default');
  }
  for (const o of bundle.objects) if (o.kind === 'ServiceAccount') own.add(o.name);
  return own;
}

/** A role of the bundle by kind and name. */
export type RoleLookup = (kind: string, name: string) => BundleObject | undefined;

/** Looks roles up among a bundle's objects. */
export function bundleRoles(objects: readonly BundleObject[]): RoleLookup {
  return (kind, name) =>
    kind === 'Role' || kind === 'ClusterRole'
      ? objects.find((o) => o.kind === kind && o.name === name)
      : undefined;
}

/**
 * The power of the role a binding refers to. Roles the bundle does not ship are the cluster's:
 * only `cluster-admin` is known to grant everything (a binding to another of them is judged by
 * its subjects alone). Everything outranks escalation.
 */
export function rolePower(
  ref: { kind?: string; name?: string },
  objects: readonly BundleObject[],
): Power | undefined {
  const name = ref.name ?? '';
  if (ref.kind === 'ClusterRole' && name === 'cluster-admin')
    return { level: 'everything', why: 'is the cluster-admin role' };
  const role = bundleRoles(objects)(ref.kind ?? '', name);
  return role === undefined ? undefined : powerOf(role, objects, new Set());
}

function strongest(a: Power | undefined, b: Power | undefined): Power | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a.level === 'everything' || b.level !== 'everything' ? a : b;
}

function powerOf(role: BundleObject, objects: readonly BundleObject[], seen: Set<string>): Power | undefined {
  seen.add(role.name);
  let power: Power | undefined;
  const rules = Array.isArray(role.object.rules) ? (role.object.rules as unknown[]) : [];
  for (const rule of rules) if (isRecord(rule)) power = strongest(power, rulePower(rule as PolicyRule));
  const aggregation = role.object.aggregationRule;
  if (role.kind !== 'ClusterRole' || !isRecord(aggregation)) return power;
  const selectors = Array.isArray(aggregation.clusterRoleSelectors) ? aggregation.clusterRoleSelectors : [];
  for (const selector of selectors) {
    const open = openSelector(selector);
    if (open) return { level: 'everything', why: `aggregates ${open}` };
    // A closed selector gathers the bundle's own ClusterRoles that carry its labels.
    for (const other of objects) {
      if (other.kind !== 'ClusterRole' || seen.has(other.name)) continue;
      if (!matchesLabels(selector, other.object.metadata.labels ?? {})) continue;
      const gathered = powerOf(other, objects, seen);
      if (gathered)
        power = strongest(power, {
          level: gathered.level,
          why: `aggregates ClusterRole/${other.name}, which ${gathered.why}`,
        });
    }
  }
  return power;
}

/**
 * Why a ClusterRole selector may gather the cluster's own roles: it is empty (every ClusterRole,
 * `cluster-admin` included) or selects by a label of Kubernetes' own domains (the bootstrap roles
 * carry `kubernetes.io/bootstrapping`, the parts of `admin` `rbac.authorization.k8s.io/aggregate-to-admin`).
 */
function openSelector(selector: unknown): string | undefined {
  if (!isRecord(selector)) return undefined;
  const labels = isRecord(selector.matchLabels) ? Object.keys(selector.matchLabels) : [];
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  const keys = [...labels, ...expressions.map((e) => (isRecord(e) ? String(e.key) : ''))];
  if (keys.length === 0) return 'every ClusterRole of the cluster (an empty selector)';
  const builtin = keys.find((k) => /(^|\.)(kubernetes\.io|k8s\.io)\//.test(k));
  return builtin === undefined ? undefined : `the cluster's own ClusterRoles (selector on ${builtin})`;
}

/** Whether labels satisfy a selector's matchLabels (closed selectors with expressions match nothing here). */
function matchesLabels(selector: unknown, labels: Record<string, string>): boolean {
  if (!isRecord(selector)) return false;
  if (Array.isArray(selector.matchExpressions) && selector.matchExpressions.length > 0) return false;
  const want = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  return Object.entries(want).every(([k, v]) => labels[k] === v);
}

// ---- screening a bundle ----

export interface ScreenInput {
  bundle: InstallableBundle;
  /** The namespace the bundle is installed in. */
  namespace: string;
  /** The OperatorGroup's `bosun.dev/allow-broad-rbac` annotation, if any. */
  allow?: string;
}

export interface Screened {
  /** The bundle as it is installed: the same object when nothing was found or all is allowed. */
  bundle: InstallableBundle;
  findings: RbacFinding[];
  /** The OperatorGroup's annotation allows this bundle's findings: they are applied as shipped. */
  allowed: boolean;
}

/** Whether the annotation's value allows the bundle: its package, its name, or `*`. */
export function allowsBundle(allow: string | undefined, bundle: Pick<InstallableBundle, 'name' | 'package'>) {
  const entries = (allow ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.some((e) => e === '*' || e === bundle.name || e === bundle.package);
}

export function screenBundleRbac(input: ScreenInput): Screened {
  const { bundle, namespace } = input;
  const install: InstallIdentity = { namespace, serviceAccounts: ownServiceAccounts(bundle) };
  const findings: RbacFinding[] = [];
  const objects: BundleObject[] = [];
  const finding = (o: BundleObject, f: Omit<RbacFinding, 'bundle' | 'object' | 'at'>) =>
    findings.push({
      bundle: bundle.name,
      object: `${o.kind}/${o.name}`,
      ...(o.at ? { at: o.at } : {}),
      ...f,
    });

  for (const o of bundle.objects) {
    if (!isRbacKind(o.kind)) {
      objects.push(o);
      continue;
    }
    const clusterScoped = o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding';
    if (clusterScoped && (builtinNames.includes(o.name) || o.name.startsWith(builtinPrefix))) {
      finding(o, {
        kind: FindingKind.BuiltinName,
        message: `has the name of a ${o.kind} the cluster relies on; applying it would rewrite that ${o.kind} for everyone, so it is left out`,
      });
      continue;
    }
    if (o.kind === 'ClusterRole') {
      objects.push(screenAggregation(o, bundle.objects, finding));
      continue;
    }
    if (o.kind === 'Role') {
      objects.push(o);
      continue;
    }
    const screened = screenBinding(o, install, bundle.objects, finding);
    if (screened !== undefined) objects.push(screened);
  }
  if (findings.length === 0) return { bundle, findings, allowed: false };
  if (allowsBundle(input.allow, bundle)) return { bundle, findings, allowed: true };
  return { bundle: { ...bundle, objects }, findings, allowed: false };
}

const isRbacKind = (kind: string) =>
  kind === 'ClusterRole' || kind === 'Role' || kind === 'ClusterRoleBinding' || kind === 'RoleBinding';

type Report = (o: BundleObject, f: Omit<RbacFinding, 'bundle' | 'object' | 'at'>) => void;

/** A binding without the subjects it must not reach; undefined when none is left. */
function screenBinding(
  o: BundleObject,
  install: InstallIdentity,
  objects: readonly BundleObject[],
  report: Report,
): BundleObject | undefined {
  const ref = roleRefOf(o);
  const role = `${ref.kind ?? '?'}/${ref.name ?? '?'}`;
  const power = rolePower(ref, objects);
  const subjects = Array.isArray(o.object.subjects) ? (o.object.subjects as unknown[]) : [];
  const kept: unknown[] = [];
  for (const s of subjects) {
    const subject = isRecord(s) ? (s as Subject) : {};
    const cls = classifySubject(subject, install);
    const text = subjectText(subject);
    if (cls.kind === 'broad') {
      report(o, {
        kind: FindingKind.BroadSubject,
        subject: text,
        role,
        message: `binds ${role} to ${text} (${cls.why}); that subject is left out`,
      });
      continue;
    }
    if (cls.kind === 'other' && power !== undefined) {
      report(o, {
        kind: FindingKind.PowerfulRoleToOthers,
        subject: text,
        role,
        message: `binds ${role}, which ${power.why}, to ${text}, not a ServiceAccount of this install in namespace ${install.namespace}; that subject is left out`,
      });
      continue;
    }
    kept.push(s);
  }
  if (kept.length === subjects.length) return o;
  if (kept.length === 0) return undefined;
  return { ...o, object: { ...o.object, subjects: kept } };
}

/** A ClusterRole without the labels that would aggregate its power into `admin`, `edit` or `view`. */
function screenAggregation(o: BundleObject, objects: readonly BundleObject[], report: Report): BundleObject {
  const labels = o.object.metadata.labels ?? {};
  const aggregating = Object.keys(labels).filter(
    (k) => builtinAggregationLabel.test(k) && labels[k] === 'true',
  );
  if (aggregating.length === 0) return o;
  const power = powerOf(o, objects, new Set());
  if (power === undefined) return o;
  report(o, {
    kind: FindingKind.AggregatedIntoBuiltin,
    role: `${o.kind}/${o.name}`,
    message: `${power.why} and is labelled ${aggregating.join(', ')}, which would give it to every user of the cluster's ${aggregating.map((k) => k.replace(/^.*aggregate-to-/, '')).join('/')} role; those labels are left out`,
  });
  const kept = Object.fromEntries(Object.entries(labels).filter(([k]) => !aggregating.includes(k)));
  return { ...o, object: { ...o.object, metadata: { ...o.object.metadata, labels: kept } } };
}

/** A binding's `roleRef`. */
export function roleRefOf(o: BundleObject): { kind?: string; name?: string } {
  return isRecord(o.object.roleRef) ? (o.object.roleRef as { kind?: string; name?: string }) : {};
}
