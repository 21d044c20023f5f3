import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { crdDefinitions, crdFiles, crdName, renderCrd } from '../../../src/apis/crds/index.js';
import type { JSONSchemaProps } from '../../../src/apis/crds/schema.js';

const deployDir = join(import.meta.dirname, '../../../deploy/crds');

/**
 * Walks a simple JSONPath (`.a.b[0].c`, or a filter `.conditions[?(@.type=="Serving")].status`)
 * through a schema; undefined when a step is not described.
 */
function schemaAt(root: JSONSchemaProps, jsonPath: string): JSONSchemaProps | undefined {
  let node: JSONSchemaProps | undefined = root;
  // A filter picks list items, as an index does (and its own dots are not steps).
  for (const step of jsonPath
    .replace(/\[\?\([^)]*\)\]/g, '[0]')
    .split('.')
    .slice(1)) {
    const m = /^([^[\]]+)((\[\d+\])*)$/.exec(step);
    if (!m || !node) return undefined;
    node = node.properties?.[m[1]!];
    for (let i = 0; i < (m[2]?.match(/\[/g)?.length ?? 0); i++) node = node?.items;
  }
  return node;
}

/** Collects violations of the structural-schema rules the API server enforces on CRDs. */
function structuralProblems(s: JSONSchemaProps, path: string): string[] {
  const problems: string[] = [];
  const open = s['x-kubernetes-preserve-unknown-fields'] === true || s['x-kubernetes-int-or-string'] === true;
  if (s.type === undefined && !open) problems.push(`${path}: no type`);
  for (const name of s.required ?? []) {
    if (!s.properties?.[name]) problems.push(`${path}: required ${name} is not a property`);
  }
  if (s.type === 'array' && !s.items) problems.push(`${path}: array without items`);
  if (s.properties && s.additionalProperties)
    problems.push(`${path}: both properties and additionalProperties`);
  for (const [name, child] of Object.entries(s.properties ?? {})) {
    problems.push(...structuralProblems(child, `${path}.${name}`));
  }
  if (s.items) problems.push(...structuralProblems(s.items, `${path}[]`));
  if (s.additionalProperties) problems.push(...structuralProblems(s.additionalProperties, `${path}{}`));
  return problems;
}

describe('generated CRDs', () => {
  it('deploy/crds holds exactly what npm run gen:crds writes', async () => {
    const generated = crdFiles();
    const onDisk = (await readdir(deployDir)).filter((f) => f.endsWith('.yaml')).sort();
    expect(onDisk).toEqual(generated.map((f) => f.fileName).sort());
    for (const f of generated) {
      const text = await readFile(join(deployDir, f.fileName), 'utf8');
      expect(text, `${f.fileName} is stale: run npm run gen:crds`).toBe(f.content);
    }
  });

  it('rendering is deterministic', () => {
    expect(crdFiles()).toEqual(crdFiles());
  });

  it('the YAML parses back to the rendered object', () => {
    for (const f of crdFiles()) {
      const def = crdDefinitions.find((d) => f.fileName === `${crdName(d)}.yaml`)!;
      expect(parse(f.content)).toEqual(renderCrd(def));
    }
  });

  it.each([
    ['CatalogSource', 'v1alpha1', ['catsrc']],
    ['Subscription', 'v1alpha1', ['sub', 'subs']],
    ['InstallPlan', 'v1alpha1', ['ip']],
    ['ClusterServiceVersion', 'v1alpha1', ['csv', 'csvs']],
    ['OperatorGroup', 'v1', ['og']],
    ['OperatorCondition', 'v2', ['condition']],
  ])(
    '%s is served as operators.coreos.com/%s with short names %j in category olm',
    (kind, version, short) => {
      const def = crdDefinitions.find((d) => d.resource.kind === kind)!;
      expect(def.resource.group).toBe('operators.coreos.com');
      expect(def.resource.version).toBe(version);
      expect(def.shortNames).toEqual(short);
      expect(def.categories).toEqual(['olm']);
    },
  );

  it.each([
    ['ClusterCatalog', 'clustercatalogs'],
    ['ClusterExtension', 'clusterextensions'],
  ])('%s is served as olm.operatorframework.io/v1, cluster-scoped, as %s, in no category', (kind, plural) => {
    const def = crdDefinitions.find((d) => d.resource.kind === kind)!;
    const crd = renderCrd(def) as { spec: { scope: string; names: Record<string, unknown> } };
    expect(crd.spec.scope).toBe('Cluster');
    expect(`${def.resource.group}/${def.resource.version}`).toBe('olm.operatorframework.io/v1');
    expect(crd.spec.names).toEqual({
      kind,
      listKind: `${kind}List`,
      plural,
      singular: kind.toLowerCase(),
    });
  });

  it.each([
    ['ClusterCatalog', ['LastUnpacked', 'Serving', 'Age']],
    ['ClusterExtension', ['Installed Bundle', 'Version', 'Installed', 'Progressing', 'Age']],
    ['CatalogSource', ['Display', 'Type', 'Publisher', 'Age']],
    ['Subscription', ['Package', 'Source', 'Channel']],
    ['InstallPlan', ['CSV', 'Approval', 'Approved']],
    ['ClusterServiceVersion', ['Display', 'Version', 'Release', 'Replaces', 'Phase']],
  ])('kubectl get shows the same columns for %s as OLM: %j', (kind, columns) => {
    const def = crdDefinitions.find((d) => d.resource.kind === kind)!;
    expect(def.printerColumns.map((c) => c.name)).toEqual(columns);
  });

  it('every printer column points at a field the schema describes, with a matching type', () => {
    for (const def of crdDefinitions) {
      for (const col of def.printerColumns) {
        if (col.jsonPath.startsWith('.metadata.')) continue; // metadata is the API server's own
        const node = schemaAt(def.schema, col.jsonPath);
        expect(node, `${def.resource.kind} column ${col.name}: ${col.jsonPath}`).toBeDefined();
        const expected = col.type === 'date' ? 'string' : col.type;
        expect(node?.type, `${def.resource.kind} column ${col.name}`).toBe(expected);
      }
    }
  });

  it('every schema is structural, so the API server accepts it and prunes unknown fields', () => {
    for (const def of crdDefinitions) {
      expect(structuralProblems(def.schema, def.resource.kind)).toEqual([]);
    }
  });

  it('statuses keep fields the schema does not list, specs do not', () => {
    for (const def of crdDefinitions) {
      const props = def.schema.properties!;
      expect(props.status?.['x-kubernetes-preserve-unknown-fields'], def.resource.kind).toBe(true);
      expect(props.spec?.['x-kubernetes-preserve-unknown-fields'], def.resource.kind).toBeUndefined();
    }
  });

  it('requires the fields OLM requires', () => {
    const required = (kind: string, path: string) =>
      schemaAt(crdDefinitions.find((d) => d.resource.kind === kind)!.schema, path)?.required;
    expect(required('Subscription', '.spec')).toEqual(['name', 'source', 'sourceNamespace']);
    expect(required('CatalogSource', '.spec')).toEqual(['sourceType']);
    expect(required('InstallPlan', '.spec')).toEqual(['approval', 'approved', 'clusterServiceVersionNames']);
    expect(required('ClusterServiceVersion', '.spec')).toEqual(['displayName', 'install']);
    expect(required('OperatorGroup', '')).toEqual(['metadata']);
    expect(required('OperatorCondition', '')).toEqual(['metadata']);
    expect(required('ClusterCatalog', '')).toEqual(['metadata', 'spec']);
    expect(required('ClusterCatalog', '.spec')).toEqual(['source']);
    expect(required('ClusterCatalog', '.spec.source')).toEqual(['type']);
    // OLM v1 requires neither metadata nor spec of a ClusterExtension (the API server still wants a name).
    expect(required('ClusterExtension', '')).toBeUndefined();
    expect(required('ClusterExtension', '.spec')).toEqual(['namespace', 'serviceAccount', 'source']);
    expect(required('ClusterExtension', '.spec.source')).toEqual(['sourceType']);
  });
});
