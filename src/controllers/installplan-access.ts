/**
 * An InstallPlan in a namespace whose OperatorGroup names a ServiceAccount (`spec.serviceAccountName`)
 * is carried out as that ServiceAccount (src/install/scoped-install.ts says why). Before its first
 * step this checks, in order, and stops at the first that fails:
 * 1. the scope (./operatorgroup-scope.ts): one OperatorGroup, naming a ServiceAccount that exists.
 *    Otherwise the plan waits, saying why (Installed=False, InstallCheckFailed, as OLM), and
 *    nothing is installed;
 * 2. what the bundles ask for: `*` verbs on `*` resources or cluster-admin refuse the plan
 *    (ScopedInstallRefused);
 * 3. what the ServiceAccount may do: every write the install makes, the plan's steps and what the
 *    CSV controller applies after them (RBAC for the group's targets, the OperatorCondition and
 *    its RBAC, the Deployments, the serving objects of webhooks and API services), asked with one
 *    SubjectAccessReview per permission; any missing refuses the plan, listing every one
 *    (ServiceAccountLacksPermissions).
 * The checks read as the manager; the writes that follow are impersonated, so the API server's
 * own authorization and RBAC escalation check decide what is written in the end.
 */
import type { KubeObject } from '../apis/meta.js';
import type { ClusterServiceVersion, OperatorGroup } from '../apis/operators.js';
import { Resources } from '../apis/operators.js';
import {
  type Access,
  accessKey,
  accessNeeds,
  type LiveRules,
  type ResourceOf,
  unmetNeeds,
  unmetText,
} from '../install/access-needs.js';
import { desiredCSVObjects } from '../install/csv-objects.js';
import { stepObject } from '../install/plan.js';
import type { PolicyRule } from '../install/rbac-policy.js';
import { type InstallScope, scopedRefusals } from '../install/scoped-install.js';
import { renderServing, servingDeployments } from '../install/serving.js';
import type { Resource } from '../olm/kinds.js';
import type { Applier } from '../kube/apply.js';
import { objectPath } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { Builtin } from '../kube/resources.js';
import type { InstallPlanContext } from './installplan.js';
import type { PlannedSteps } from './installplan-steps.js';

type PlannedInstall = Extract<PlannedSteps, { kind: 'steps' }>;

/** How many SubjectAccessReviews are in flight at once: a big CSV asks a few hundred. */
const reviewConcurrency = 8;

export type AccessVerdict =
  | { kind: 'ok' }
  | { kind: 'refused'; reason: 'ScopedInstallRefused' | 'ServiceAccountLacksPermissions'; message: string };

/** Steps 2 and 3 above, for a plan scoped to a ServiceAccount. */
export async function checkScopedAccess(
  ctx: InstallPlanContext,
  planned: PlannedInstall,
  scope: Extract<InstallScope, { kind: 'serviceAccount' }>,
  og: OperatorGroup | undefined,
): Promise<AccessVerdict> {
  const who = `ServiceAccount ${scope.namespace}/${scope.name} (OperatorGroup ${scope.operatorGroup})`;
  const refusals = planned.bundles.flatMap((b) => scopedRefusals(b).map((r) => `bundle ${b.name}, ${r}`));
  if (refusals.length > 0) {
    return {
      kind: 'refused',
      reason: 'ScopedInstallRefused',
      message: `installs in this namespace are scoped to ${who}, and the bundle asks for everything, which no scoped install may grant; nothing was installed: ${refusals.join('; ')}`,
    };
  }
  const written = installWrites(planned, og);
  const resources = await resolveResources(ctx.applier, written.objects);
  const liveRules = await readLiveRoles(ctx, written.objects);
  const { needs, unknownKinds } = accessNeeds({ ...written, resourceOf: resources, liveRules });
  const answers = await review(
    ctx,
    scope,
    needs.flatMap((n) => n.anyOf.flat()),
  );
  const unmet = unmetNeeds(needs, (a) => answers.get(accessKey(a)) === true);
  ctx.log.info(
    { needs: needs.length, reviews: answers.size, unmet: unmet.length, unknownKinds },
    'checked scoped install',
  );
  if (unmet.length === 0) return { kind: 'ok' };
  const missing = unmet.reduce((n, u) => n + Math.max(1, u.missing.length), 0);
  return {
    kind: 'refused',
    reason: 'ServiceAccountLacksPermissions',
    message: `installs in this namespace are scoped to ${who}, which lacks ${missing} permission${missing === 1 ? '' : 's'} the install needs, so nothing was installed: ${unmet.map(unmetText).join('; ')}`,
  };
}

/**
 * Everything the install writes: the plan's objects, and for each CSV what the CSV controller
 * applies after it (install/csv-objects.ts, install/serving.ts). The serving objects are rendered
 * with a placeholder certificate: which objects there are does not depend on it.
 */
export function installWrites(
  planned: PlannedInstall,
  og: OperatorGroup | undefined,
): { objects: Resource[]; patchedCRDs: string[] } {
  const objects = planned.steps.map(stepObject);
  const patchedCRDs: string[] = [];
  for (const step of planned.steps) {
    if (step.resource.kind !== Resources.ClusterServiceVersion.kind) continue;
    const csv = stepObject(step) as unknown as ClusterServiceVersion;
    const desired = desiredCSVObjects({ csv, targets: planned.targets });
    if (desired.ok) {
      objects.push(...desired.value.rbac, ...desired.value.operatorCondition);
      objects.push(...(desired.value.deployments as unknown as Resource[]));
    }
    const serving = servingDeployments(csv);
    if (!serving.ok || serving.value.length === 0 || og === undefined) continue;
    const placeholder = { caPEM: '', certPEM: '', keyPEM: '' };
    const rendered = renderServing({
      csv,
      operatorGroup: og,
      serving: serving.value,
      certificates: new Map(serving.value.map((s) => [s.deployment, placeholder])),
    });
    objects.push(...rendered.beforeDeployments, ...rendered.afterDeployments);
    patchedCRDs.push(...rendered.conversions.map((c) => c.crd));
  }
  return { objects, patchedCRDs };
}

/** The resource serving each kind written, through the manager's cached discovery. */
async function resolveResources(applier: Applier, objects: readonly Resource[]): Promise<ResourceOf> {
  const found = new Map<string, { name: string; namespaced: boolean } | undefined>();
  for (const o of objects) {
    const key = `${o.apiVersion} ${o.kind}`;
    if (!found.has(key)) found.set(key, await applier.resourceFor(o.apiVersion, o.kind));
  }
  return (apiVersion, kind) => found.get(`${apiVersion} ${kind}`);
}

/** The rules of each role a binding refers to that the install does not create, read as the manager. */
async function readLiveRoles(ctx: InstallPlanContext, objects: readonly Resource[]): Promise<LiveRules> {
  const created = new Set(
    objects
      .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
      .map((o) => roleKey(o.kind, o.metadata.name, o.metadata.namespace)),
  );
  const live = new Map<string, PolicyRule[] | undefined>();
  for (const o of objects) {
    if (o.kind !== 'RoleBinding' && o.kind !== 'ClusterRoleBinding') continue;
    const ref = (o.roleRef ?? {}) as { kind?: string; name?: string };
    const kind = ref.kind === 'Role' ? 'Role' : 'ClusterRole';
    const namespace = kind === 'Role' ? o.metadata.namespace : undefined;
    const key = roleKey(kind, ref.name ?? '', namespace);
    if (created.has(key) || live.has(key)) continue;
    const resource = kind === 'Role' ? Builtin.Role : Builtin.ClusterRole;
    try {
      const role = await ctx.client.request<KubeObject & { rules?: PolicyRule[] }>({
        path: objectPath(resource, ref.name ?? '', namespace),
      });
      live.set(key, role.rules ?? []);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      live.set(key, undefined);
    }
  }
  return (kind, name, namespace) => live.get(roleKey(kind, name, namespace));
}

const roleKey = (kind: string, name: string, namespace?: string) =>
  `${kind}/${kind === 'Role' ? (namespace ?? '') : ''}/${name}`;

/**
 * Asks the API server whether the ServiceAccount may do each access (a SubjectAccessReview as the
 * user and groups it is impersonated with), each once, a few at a time.
 */
async function review(
  ctx: InstallPlanContext,
  scope: Extract<InstallScope, { kind: 'serviceAccount' }>,
  accesses: readonly Access[],
): Promise<Map<string, boolean>> {
  const answers = new Map<string, boolean>();
  const unique = new Map(accesses.map((a) => [accessKey(a), a]));
  const queue = [...unique];
  const groups = [
    'system:serviceaccounts',
    `system:serviceaccounts:${scope.namespace}`,
    'system:authenticated',
  ];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [key, access] = next;
      const attributes =
        'resource' in access
          ? { resourceAttributes: access.resource }
          : { nonResourceAttributes: access.nonResource };
      const answer = await ctx.client.request<{ status?: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: scope.user, groups, ...attributes },
        },
      });
      answers.set(key, answer.status?.allowed === true);
    }
  };
  await Promise.all(Array.from({ length: Math.min(reviewConcurrency, queue.length) }, worker));
  return answers;
}
