/**
 * The OperatorHub 2021 corpus's manifests of removed API versions, read with Bosun's own YAML
 * reader (repeated keys keep their last value, as Kubernetes reads them). Shared by the unit test
 * of the converter and the integration test that sends every converted CRD to an API server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseYamlStream } from '../../../../src/bundle/yaml.js';

export const corpusDir = process.env.BOSUN_CORPUS_DIR;

export const corpusSkipMessage =
  'skipping the removed-API corpus tests: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators';

export interface CorpusManifest {
  /** Path relative to the corpus root, with `#<document>` when the file holds several. */
  where: string;
  object: Record<string, unknown>;
}

function* yamlFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* yamlFiles(path);
    else if (/\.(ya?ml|json)$/.test(e.name)) yield path;
  }
}

/** Every manifest of the corpus whose apiVersion/kind `pick` accepts. */
export function corpusManifests(
  root: string,
  pick: (apiVersion: unknown, kind: unknown) => boolean,
): CorpusManifest[] {
  const out: CorpusManifest[] = [];
  for (const file of yamlFiles(root)) {
    const rel = relative(root, file);
    const parsed = parseYamlStream(readFileSync(file, 'utf8'), rel, { onDuplicateKey: () => undefined });
    if (!parsed.ok) continue;
    for (const d of parsed.docs) {
      const v = d.value as Record<string, unknown> | null;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
      if (!pick(v.apiVersion, v.kind)) continue;
      out.push({ where: parsed.docs.length > 1 ? `${rel}#${d.index}` : rel, object: v });
    }
  }
  return out;
}

export const isV1beta1CRD = (apiVersion: unknown, kind: unknown): boolean =>
  apiVersion === 'apiextensions.k8s.io/v1beta1' && kind === 'CustomResourceDefinition';
