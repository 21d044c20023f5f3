import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { isMap, isSeq, parseAllDocuments, type YAMLMap } from 'yaml';
import { operatorCommand } from '../../../src/cli/commands/operator.js';
import { deployDir, kubectlMissing, renderedFile, renderKustomization } from '../../support/deploy-render.js';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  nonResourceURLs?: string[];
  resourceNames?: string[];
}
interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
}

// Each wildcard a rule holds, as `field: value`. A `*` anywhere in a value counts: the whole
// value, and RBAC's subresource forms (`*/scale`, `deployments/*`), which grant as much.
function wildcards(rule: Rule): string[] {
  return (['apiGroups', 'resources', 'verbs', 'nonResourceURLs'] as const).flatMap((field) =>
    (rule[field] ?? []).filter((v) => v.includes('*')).map((v) => `${field}: ${v}`),
  );
}

const kubectl = await kubectlMissing();

async function rendered(): Promise<Manifest[]> {
  return yaml.loadAll(await readFile(renderedFile, 'utf8')) as Manifest[];
}

describe('deploy/', () => {
  it.skipIf(kubectl)(
    `deploy/bosun.yaml is deploy/kustomization.yaml rendered (npm run gen:deploy)`,
    async () => {
      const fresh = await renderKustomization();
      const checkedIn = await readFile(renderedFile, 'utf8');
      // The message says what to run; toBe's diff then shows what changed.
      expect(checkedIn, 'deploy/bosun.yaml is out of date: run npm run gen:deploy').toBe(fresh);
    },
  );

  it('the kustomization installs every CRD of deploy/crds', async () => {
    const kustomization = yaml.load(await readFile(join(deployDir, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    const crds = (await readdir(join(deployDir, 'crds'))).filter((f) => f.endsWith('.yaml'));
    expect(crds.length).toBeGreaterThan(0);
    expect(kustomization.resources.filter((r) => r.startsWith('crds/')).sort()).toEqual(
      crds.map((f) => `crds/${f}`).sort(),
    );
  });

  it('no Role or ClusterRole deploy/ installs has a * in its groups, resources, verbs or URLs', async () => {
    const roles = (await rendered()).filter((m) => m.kind === 'ClusterRole' || m.kind === 'Role');
    expect(roles.map((r) => r.metadata.name)).toContain('bosun-manager');
    const found = roles.flatMap((r) =>
      (r.rules ?? []).flatMap((rule, i) => wildcards(rule).map((w) => `${r.metadata.name} rules[${i}] ${w}`)),
    );
    expect(found).toEqual([]);
  });

  it('the wildcard check finds * in every place RBAC reads one', () => {
    const shapes: Rule[] = [
      { apiGroups: ['*'], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['*'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['*'] },
      { apiGroups: ['apps'], resources: ['*/scale'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments/*'], verbs: ['get'] },
      { nonResourceURLs: ['/metrics*'], verbs: ['get'] },
    ];
    expect(shapes.map((s) => wildcards(s).length)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(wildcards({ apiGroups: [''], resources: ['pods/status'], verbs: ['get'] })).toEqual([]);
  });

  it("the manager's container passes only flags bosun operator run knows, each once", async () => {
    const deployment = (await rendered()).find((m) => m.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { name: string; args: string[] }[] } } };
    };
    const args = deployment.spec.template.spec.containers.find((c) => c.name === 'manager')?.args ?? [];
    const run = operatorCommand.subcommands?.find((c) => c.name === 'run');
    const known = Object.keys(run?.options ?? {});
    const names = args.map((a) => /^--([a-z-]+)(=|$)/.exec(a)?.[1] ?? `(not a --flag: ${a})`);
    expect(names).toContain('leader-elect');
    expect(names.filter((n) => !known.includes(n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('every rule of the manager ClusterRole and its Lease Role says why, in a comment above it', async () => {
    const text = await readFile(join(deployDir, 'manager/clusterrole.yaml'), 'utf8');
    const checked: string[] = [];
    const uncommented: string[] = [];
    for (const doc of parseAllDocuments(text)) {
      if ('empty' in doc) continue;
      const kind = doc.get('kind');
      if (kind !== 'ClusterRole' && kind !== 'Role') continue;
      const name = String(doc.getIn(['metadata', 'name']));
      const rules = doc.get('rules', true);
      if (!isSeq(rules)) throw new Error(`deploy/manager/clusterrole.yaml: ${name}: rules is not a list`);
      rules.items.forEach((item, i) => {
        checked.push(`${name} rules[${i}]`);
        // The comment lines right above `- apiGroups:` (yaml keeps them as the item's commentBefore;
        // the first item's may sit on the list itself).
        const comment =
          (isMap(item) ? (item as YAMLMap).commentBefore : undefined) ??
          (i === 0 ? rules.commentBefore : undefined);
        if (!comment?.trim()) uncommented.push(`${name} rules[${i}]`);
      });
    }
    expect(checked).toContain('bosun-manager rules[0]');
    expect(checked).toContain('bosun-manager-leader-election rules[0]');
    expect(uncommented).toEqual([]);
  });
});
