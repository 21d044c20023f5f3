/**
 * Before an approved plan changes anything, each CRD it would replace is checked: the live CRD
 * against the new one (install/crd-safety.ts), then every existing custom resource of every
 * version the live CRD serves against the new schema of that version (install/cr-validation.ts).
 * Any finding refuses the whole plan before its first step, so the old CSV, its Deployments, the
 * CRDs and every custom resource stay as they are.
 */
import type { InstallStep } from '../install/plan.js';
import { type CRDShape, crdUpgradeFindings } from '../install/crd-safety.js';
import { invalidResources } from '../install/cr-validation.js';
import type { InstallPlanContext } from './installplan.js';

/** How many invalid objects a refusal names per version; the count says how many there are. */
const NAMED_OBJECTS = 5;

/** Why replacing the plan's CRDs is unsafe, one line per problem; empty when it is safe. */
export async function unsafeCRDReplacements(
  ctx: InstallPlanContext,
  steps: readonly InstallStep[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const step of steps) {
    if (step.resource.kind !== 'CustomResourceDefinition') continue;
    if (!ctx.informers.crds.get(step.resource.name)) continue;
    // The informer keeps CRDs without their schemas (cache-transforms.ts): read the whole one.
    const live = await ctx.client.request<CRDShape>({
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${step.resource.name}`,
    });
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
      const list = await ctx.client.request<{ items?: unknown[] }>({
        path: `/apis/${group}/${v.name}/${plural}`,
      });
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
