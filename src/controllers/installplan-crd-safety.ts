/**
 * Before an approved plan changes anything, each CRD it would replace is checked: the live CRD
 * against the new one (install/crd-safety.ts), then every existing custom resource of every
 * version the live CRD serves against the new schema of that version (install/cr-validation.ts).
 * Any finding refuses the whole plan before its first step, so the old CSV, its Deployments, the
 * CRDs and every custom resource stay as they are.
 *
 * The manager reads custom resources through the `-view` ClusterRoles it writes for the APIs an
 * operator provides (deploy/'s `bosun-manager-custom-resources-view` aggregates them): a CRD that
 * someone else installed has none yet, so its list is refused. Given `grantRead`, the check
 * writes that CRD's view role (the one the CSV's install writes anyway, owned by the CRD) and
 * lists again once kube-controller-manager has aggregated it; without it (`bosun plan`, which
 * runs as the user and must not write) the refusal stands.
 */
import type { StepResource } from '../apis/operators.js';
import { type CRDShape, crdUpgradeFindings } from '../install/crd-safety.js';
import { invalidResources } from '../install/cr-validation.js';
import { type ClusterRole, providedApiRoles, RoleSuffix } from '../install/provided-api-roles.js';
import type { KubeClient } from '../kube/client.js';
import { isForbidden, isNotFound, parseApiError, StatusReason } from '../kube/errors.js';

/** How many invalid objects a refusal names per version; the count says how many there are. */
const NAMED_OBJECTS = 5;

/** How long a granted view role may take to be aggregated into the manager's role. */
const AGGREGATION_WAIT_MS = 30_000;

/** Writes a ClusterRole (the manager's applier). */
export type GrantRead = (role: ClusterRole) => Promise<unknown>;

/** Why replacing the plan's CRDs is unsafe, one line per problem; empty when it is safe. */
export async function unsafeCRDReplacements(
  client: KubeClient,
  steps: readonly { resource: Pick<StepResource, 'kind' | 'name' | 'manifest'> }[],
  grantRead?: GrantRead,
): Promise<string[]> {
  const problems: string[] = [];
  for (const step of steps) {
    if (step.resource.kind !== 'CustomResourceDefinition') continue;
    // Read whole: the manager's informer keeps CRDs without their schemas (cache-transforms.ts).
    const live = await client
      .request<CRDShape>({
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${step.resource.name}`,
      })
      .catch((err: unknown) => {
        if (isNotFound(err)) return undefined; // a new CRD replaces nothing
        throw err;
      });
    if (!live || !step.resource.manifest) continue;
    const next = JSON.parse(step.resource.manifest) as CRDShape & {
      spec?: { group?: string; names?: { plural?: string; kind?: string } };
    };
    for (const f of crdUpgradeFindings(live, next))
      problems.push(`CRD ${f.crd}${f.version ? ` ${f.version}` : ''}: ${f.check}: ${f.message}`);
    const group = next.spec?.group;
    const plural = next.spec?.names?.plural;
    if (!group || !plural) continue;
    const uid = (live.metadata as { uid?: string } | undefined)?.uid;
    for (const v of live.spec?.versions ?? []) {
      if (v.served === false) continue;
      const grant =
        grantRead && uid
          ? () =>
              grantRead(
                viewRole(step.resource.name, uid, {
                  group,
                  version: v.name,
                  plural,
                  kind: next.spec?.names?.kind,
                }),
              )
          : undefined;
      const list = await listReadable(client, `/apis/${group}/${v.name}/${plural}`, grant);
      const invalid = invalidResources(next, v.name, list.items ?? []);
      if (invalid.length === 0) continue;
      const named = invalid
        .slice(0, NAMED_OBJECTS)
        .map((o) => `${o.namespace ? `${o.namespace}/` : ''}${o.name} (${o.errors.join('; ')})`);
      problems.push(
        `CRD ${step.resource.name} ${v.name}: ${invalid.length} existing ${plural} would not be valid under the new schema: ${named.join(', ')}${invalid.length > NAMED_OBJECTS ? ', ...' : ''}`,
      );
    }
  }
  return problems;
}

/** OLM's `<crd>-<version>-view` role for one served version of a CRD, owned by the CRD. */
function viewRole(
  crd: string,
  uid: string,
  api: { group: string; version: string; plural: string; kind: string | undefined },
): ClusterRole {
  const roles = providedApiRoles(
    {
      group: api.group,
      version: api.version,
      kind: api.kind ?? '',
      plural: api.plural,
      servedBy: { kind: 'CustomResourceDefinition', name: crd },
    },
    { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd, uid },
  );
  return roles.find((r) => r.metadata?.name === `${crd}-${api.version}-${RoleSuffix.View}`)!;
}

/**
 * Lists custom resources; when refused and `grant` is given, grants the manager read access once
 * and lists again until the grant takes effect (or AGGREGATION_WAIT_MS passes: then the refusal
 * is the answer).
 */
async function listReadable(
  client: KubeClient,
  path: string,
  grant: (() => Promise<unknown>) | undefined,
): Promise<{ items?: unknown[] }> {
  try {
    return await listSoon(client, path);
  } catch (err) {
    if (!grant || !isForbidden(err)) throw err;
  }
  await grant();
  const deadline = Date.now() + AGGREGATION_WAIT_MS;
  for (;;) {
    try {
      return await listSoon(client, path);
    } catch (err) {
      if (!isForbidden(err) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * Lists custom resources. Right after a CRD changes, the API server answers 429 "storage is
 * (re)initializing" for a moment: that is waited out (up to ten seconds), not reported.
 */
async function listSoon(client: KubeClient, path: string): Promise<{ items?: unknown[] }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.request<{ items?: unknown[] }>({ path });
    } catch (err) {
      // Storage initializes in well under a second: look again soon, not after a long sleep.
      if (attempt >= 100 || parseApiError(err)?.reason !== StatusReason.TooManyRequests) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
