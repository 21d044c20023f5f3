/**
 * Pruning on real data: every ClusterServiceVersion of the OperatorHub corpus (BOSUN_CORPUS_DIR)
 * against Bosun's own CSV CRD (deploy/crds). Skips when BOSUN_CORPUS_DIR is not set.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { crdKindSchema, type KindSchema, pruneObject } from '../../../src/install/prune.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
const present = corpus !== undefined && existsSync(corpus);
if (!present) {
  console.warn(
    'prune corpus tests skipped: set BOSUN_CORPUS_DIR to the upstream-community-operators folder of the corpus',
  );
}

const crdFile = join(
  import.meta.dirname,
  '../../../deploy/crds/clusterserviceversions.operators.coreos.com.yaml',
);

function* yamlFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* yamlFiles(path);
    else if (/\.ya?ml$/.test(e.name)) yield path;
  }
}

/** Every CSV of the corpus, by file. */
function corpusCSVs(dir: string): { file: string; csv: unknown }[] {
  const out: { file: string; csv: unknown }[] = [];
  for (const file of yamlFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('ClusterServiceVersion')) continue;
    for (const doc of parseAllDocuments(text)) {
      const v = doc.errors.length === 0 ? (doc.toJS() as { kind?: unknown } | null) : null;
      if (v?.kind === 'ClusterServiceVersion') out.push({ file: relative(dir, file), csv: v });
    }
  }
  return out;
}

describe.skipIf(!present)('pruning the corpus CSVs against deploy/crds', () => {
  const csvs = present ? corpusCSVs(corpus) : [];
  const crd = parseAllDocuments(readFileSync(crdFile, 'utf8'))[0]?.toJS() as unknown;
  const schema = crdKindSchema(crd, 'v1alpha1') as KindSchema;

  it('finds the undeclared fields that made server-side apply refuse real CSVs', () => {
    const pruned = new Map(csvs.map(({ file, csv }) => [file, pruneObject(csv, schema).fields]));
    const of = (suffix: string) => [...pruned].find(([file]) => file.endsWith(suffix))?.[1];
    expect(csvs.length).toBeGreaterThan(1000);
    expect(
      of(
        'ibm-block-csi-operator-community/1.6.0/manifests/ibm-block-csi-operator.v1.6.0.clusterserviceversion.yaml',
      ),
    ).toEqual(['spec.customresourcedefinitions.owned[0].group']);
    expect(
      of('strimzi-kafka-operator/0.24.0/strimzi-cluster-operator.v0.24.0.clusterserviceversion.yaml'),
    ).toContain('spec.MinKubeVersion');
  });

  it('is idempotent on every corpus CSV, and keeps what it does not prune', () => {
    for (const { file, csv } of csvs) {
      const once = pruneObject(csv, schema);
      const twice = pruneObject(once.value, schema);
      expect(twice.fields, file).toEqual([]);
      expect(twice.value, file).toBe(once.value);
      // Pruning removes whole fields and nothing else: the scalars left and the pruned ones add up.
      expect(leaves(once.value) + once.fields.reduce((n, f) => n + leaves(valueAt(csv, f)), 0), file).toBe(
        leaves(csv),
      );
    }
  });
});

/** The number of scalars in a value. */
function leaves(v: unknown): number {
  if (v === null || typeof v !== 'object') return 1;
  return Object.values(v).reduce<number>((n, c) => n + leaves(c), 0);
}

/** The value at a path such as `spec.owned[0].group`. */
function valueAt(obj: unknown, path: string): unknown {
  let v = obj;
  for (const part of path.split(/\.|(?=\[)/)) {
    if (v === null || typeof v !== 'object') return undefined;
    const index = /^\[(\d+)\]$/.exec(part);
    v = index ? (v as unknown[])[Number(index[1])] : (v as Record<string, unknown>)[part];
  }
  return v;
}
