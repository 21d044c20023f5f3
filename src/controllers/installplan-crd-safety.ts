/**
 * Before an approved plan changes anything, each CRD it would replace is checked: the live CRD
 * against the new one (install/crd-safety.ts), then every existing custom resource of every
 * version the live CRD serves against the new schema of that version (install/cr-validation.ts).
 * Any finding refuses the whole plan before its first step, so the old CSV, its Deployments, the
 * CRDs and every custom resource stay as they are.
 */
import type { StepResource } from '../apis/operators.js';
import { type CRDShape, crdUpgradeFindings } from '../install/crd-safety.js';
import { invalidResources } from '../install/cr-validation.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound, parseApiError, StatusReason } from '../kube/errors.js';

/** How many invalid objects a refusal names per version; the count says how many there are. */
const NAMED_OBJECTS = 5;

/** Why replacing the plan's CRDs is unsafe, one line per problem; empty when it is safe. */
export async function unsafeCRDReplacements(
  client: KubeClient,
  steps: readonly { resource: Pick<StepResource, 'kind' | 'name' | 'manifest'> }[],
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
      spec?: { group?: string; names?: { plural?: string } };
    };
    for (const f of crdUpgradeFindings(live, next))
      problems.push(`CRD ${f.crd}${f.version ? ` ${f.version}` : ''}: ${f.check}: ${f.message}`);
    const group = next.spec?.group;
    const plural = next.spec?.names?.plural;
    if (!group || !plural) continue;
    for (const v of live.spec?.versions ?? []) {
      if (v.served === false) continue;
      const list = await listSoon(client, `/apis/${group}/${v.name}/${plural}`);
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

/**
 * Lists custom resources. Right after a CRD changes, the API server answers 429 "storage is
 * (re)initializing" for a moment: that is waited out (up to ten seconds), not reported.
 */
async function listSoon(client: KubeClient, path: string): Promise<{ items?: unknown[] }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.request<{ items?: unknown[] }>({ path });
    } catch (err) {
      if (attempt >= 20 || parseApiError(err)?.reason !== StatusReason.TooManyRequests) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
