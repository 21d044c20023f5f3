import { describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { OperatorGroup } from '../../../src/apis/operators.js';
import type { CatalogRef, CatalogSnapshot } from '../../../src/catalog/content/store.js';
import {
  csvDeploymentProblems,
  installTargets,
  locateBundle,
  prunedMessage,
  prunedProblems,
  uniqueProblems,
  warningConditions,
  warningsMessage,
} from '../../../src/controllers/installplan-steps.js';
import type { KindSchema } from '../../../src/install/prune.js';

const bundle = (name: string): BundleDoc => ({
  schema: 'olm.bundle',
  package: 'p',
  name,
  image: '',
  properties: [],
});

function store(snapshots: { ref: CatalogRef; priority: number; bundles: string[] }[]) {
  const full: CatalogSnapshot[] = snapshots.map((s) => ({
    ref: s.ref,
    priority: s.priority,
    digest: 'd',
    fetchedAt: 0,
    config: { packages: [], channels: [], bundles: s.bundles.map(bundle), deprecations: [], others: [] },
  }));
  const same = (a: CatalogRef, b: CatalogRef) => a.name === b.name && a.namespace === b.namespace;
  return {
    get: (ref: CatalogRef) => full.find((s) => same(s.ref, ref)),
    findBundle: (ref: CatalogRef, name: string) =>
      full.find((s) => same(s.ref, ref))?.config.bundles.find((b) => b.name === name),
    visibleFrom: (ns: string) => full.filter((s) => s.ref.namespace === ns || s.ref.namespace === 'global'),
  };
}

const plan = (spec: { source?: string; sourceNamespace?: string }) => ({
  metadata: { name: 'ip', namespace: 'ops' },
  spec: { clusterServiceVersionNames: ['op.v1'], approval: 'Automatic' as const, approved: true, ...spec },
});

describe('locateBundle', () => {
  const catalogs = store([
    { ref: { namespace: 'global', name: 'low' }, priority: 0, bundles: ['op.v1'] },
    { ref: { namespace: 'global', name: 'high' }, priority: 10, bundles: ['op.v1'] },
    { ref: { namespace: 'elsewhere', name: 'hidden' }, priority: 99, bundles: ['op.v1'] },
  ]);

  it('uses the catalog the plan names', () => {
    const found = locateBundle(catalogs, plan({ source: 'low', sourceNamespace: 'global' }), 'op.v1');
    expect(found).toMatchObject({ kind: 'found', source: { name: 'low', namespace: 'global' } });
  });

  it('waits for a named catalog that is not loaded yet', () => {
    expect(
      locateBundle(catalogs, plan({ source: 'later', sourceNamespace: 'global' }), 'op.v1'),
    ).toMatchObject({
      kind: 'wait',
    });
  });

  it('fails when the named catalog does not have the bundle', () => {
    const r = locateBundle(catalogs, plan({ source: 'low', sourceNamespace: 'global' }), 'op.v9');
    expect(r).toEqual({ kind: 'failed', message: 'bundle op.v9 is not in catalog global/low' });
  });

  it('without a source, takes the visible catalog of highest priority', () => {
    expect(locateBundle(catalogs, plan({}), 'op.v1')).toMatchObject({
      kind: 'found',
      source: { name: 'high' },
    });
  });

  it('without a source and no visible catalog offering it, waits', () => {
    expect(locateBundle(catalogs, plan({}), 'op.v9')).toMatchObject({ kind: 'wait' });
  });
});

describe('installTargets', () => {
  const og = (name: string, spec: OperatorGroup['spec'] = {}): OperatorGroup => ({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name, namespace: 'ops' },
    spec,
  });

  it('is the one group’s targets', () => {
    expect(installTargets([og('g', { targetNamespaces: ['a'] })], [], 'ops')).toEqual({
      operatorGroup: 'g',
      namespaces: ['a'],
    });
    expect(installTargets([og('g')], [], 'ops')).toEqual({ operatorGroup: 'g', namespaces: [''] });
  });

  it('falls back to the own namespace without exactly one group (the CSV reports why)', () => {
    expect(installTargets([], [], 'ops')).toEqual({ operatorGroup: '', namespaces: ['ops'] });
    expect(installTargets([og('a'), og('b')], [], 'ops')).toEqual({ operatorGroup: '', namespaces: ['ops'] });
  });
});

describe('what a plan reports about pruned fields', () => {
  /** DeploymentSpec as the apps/v1 document spells it, trimmed to what the cases use. */
  const deploymentSpec: KindSchema = {
    flavor: 'openapi',
    schema: { $ref: '#/components/schemas/DeploymentSpec' },
    components: {
      DeploymentSpec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer' },
          template: { allOf: [{ $ref: '#/components/schemas/PodTemplateSpec' }] },
        },
      },
      PodTemplateSpec: {
        type: 'object',
        properties: { spec: { type: 'object', properties: { containers: { type: 'array' } } } },
      },
    },
  };
  const csv = {
    metadata: { name: 'op.v1' },
    spec: {
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            { name: 'fine', spec: { replicas: 1 } },
            {
              name: 'odd',
              spec: { replicas: 1, replica: 2, template: { spec: { containers: [], hostname: 'x' } } },
            },
          ],
        },
      },
    },
  };

  it('names the CSV, the deployment and the field of each undeclared field of a Deployment spec', () => {
    expect(csvDeploymentProblems(csv, deploymentSpec)).toEqual([
      {
        object: 'ClusterServiceVersion/op.v1, deployment odd',
        field: 'spec.install.spec.deployments[1].spec.replica',
        message: 'not declared in apps/v1 DeploymentSpec; left out of the Deployment',
      },
      {
        object: 'ClusterServiceVersion/op.v1, deployment odd',
        field: 'spec.install.spec.deployments[1].spec.template.spec.hostname',
        message: 'not declared in apps/v1 DeploymentSpec; left out of the Deployment',
      },
    ]);
  });

  it('finds nothing in a CSV without an install strategy', () => {
    expect(csvDeploymentProblems({ metadata: { name: 'x' }, spec: {} }, deploymentSpec)).toEqual([]);
    expect(csvDeploymentProblems({ metadata: { name: 'x' } }, deploymentSpec)).toEqual([]);
  });

  it('names each object once with its fields, in the order they were found', () => {
    const problems = uniqueProblems([
      ...prunedProblems(
        {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
          metadata: { name: 'op.v1' },
        },
        ['spec.MinKubeVersion', 'spec.customresourcedefinitions.owned[0].group'],
      ),
      ...prunedProblems({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics' } }, ['spec.port']),
      ...prunedProblems({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics' } }, ['spec.port']),
    ]);
    expect(problems).toHaveLength(3);
    expect(problems[2]).toEqual({
      object: 'Service/metrics',
      field: 'spec.port',
      message: 'not declared in the schema of v1 Service',
    });
    expect(prunedMessage(problems)).toBe(
      'removed fields their schema does not declare (the API server drops them when OLM creates the objects): ' +
        'ClusterServiceVersion/op.v1: spec.MinKubeVersion, spec.customresourcedefinitions.owned[0].group; ' +
        'Service/metrics: spec.port',
    );
  });

  it('lists bundle warnings with their object and field', () => {
    expect(
      warningsMessage([
        {
          object: 'bundle op.v1, CustomResourceDefinition/a.x.io',
          field: 'apiVersion',
          message: 'converted to v1',
        },
        { message: 'plain' },
      ]),
    ).toBe('bundle op.v1, CustomResourceDefinition/a.x.io: apiVersion: converted to v1; plain');
  });
});

describe('warningConditions', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const t1 = Date.parse('2026-01-01T00:05:00Z');
  const installed = { type: 'Installed' as const, status: 'True' as const };
  const warning = {
    object: 'bundle op.v1, CustomResourceDefinition/a.x.io',
    field: 'apiVersion',
    message: 'converted',
  };
  const pruned = { object: 'ClusterServiceVersion/op.v1', field: 'spec.x', message: 'not declared' };

  it('adds a Pruned and a BundleWarnings condition beside the existing ones', () => {
    const out = warningConditions([installed], { warnings: [warning], pruned: [pruned] }, t0);
    expect(out).toEqual([
      installed,
      {
        type: 'BundleWarnings',
        status: 'True',
        reason: 'BundleDecodedWithWarnings',
        message: warningsMessage([warning]),
        lastUpdateTime: '2026-01-01T00:00:00Z',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
      {
        type: 'Pruned',
        status: 'True',
        reason: 'UndeclaredFieldsPruned',
        message: prunedMessage([pruned]),
        lastUpdateTime: '2026-01-01T00:00:00Z',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]);
  });

  it('keeps a condition that says the same as it is, times included', () => {
    const first = warningConditions([], { warnings: [warning], pruned: [pruned] }, t0);
    expect(warningConditions(first, { warnings: [warning], pruned: [pruned] }, t1)).toEqual(first);
  });

  it('updates a changed message but keeps when it became true', () => {
    const first = warningConditions([], { warnings: [], pruned: [pruned] }, t0);
    const next = warningConditions(
      first,
      { warnings: [], pruned: [pruned, { ...pruned, field: 'spec.y' }] },
      t1,
    );
    expect(next[0]).toMatchObject({
      type: 'Pruned',
      lastUpdateTime: '2026-01-01T00:05:00Z',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    expect(next[0]?.message).toContain('spec.x, spec.y');
  });

  it('says nothing when there is nothing to say, and leaves Pruned alone when pruning is not known yet', () => {
    expect(warningConditions([installed], { warnings: [], pruned: [] }, t0)).toEqual([installed]);
    const withPruned = warningConditions([], { warnings: [], pruned: [pruned] }, t0);
    expect(warningConditions(withPruned, { warnings: [] }, t1)).toEqual(withPruned);
    expect(warningConditions(withPruned, { warnings: [], pruned: [] }, t1)).toEqual([]);
  });
});
