/**
 * The catalog loader and the bundle reader, fuzzed for a bounded number of cases: whatever bytes
 * they are given (random bytes, random YAML and JSON token soup with anchors, aliases, brackets
 * and document markers, random data serialised, real documents mutated), each ends in a value or
 * in problems that name the file, never in a thrown error, a hang or runaway memory. Whatever
 * loads also validates, decodes for install and encodes again without throwing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../src/apis/fbc.js';
import { bundleFromFiles } from '../../../src/bundle/read.js';
import { validateBundle } from '../../../src/bundle/validate.js';
import { parseYamlStream, toYaml } from '../../../src/bundle/yaml.js';
import { CatalogFormat, encodeDocuments } from '../../../src/catalog/encode.js';
import { addDocuments } from '../../../src/catalog/load.js';
import { validateCatalog } from '../../../src/catalog/validate.js';
import { decodeBundle } from '../../../src/install/bundle-objects.js';
import type { Problem } from '../../../src/util/result.js';
import { runs } from '../../support/properties.js';

const repo = join(import.meta.dirname, '../../..');
const sampleCatalog = readFileSync(join(repo, 'catalogs/bosun-samples/bosun-sample/catalog.yaml'));
const sampleJson = Buffer.from(
  (() => {
    const parsed = parseYamlStream(sampleCatalog.toString(), 'sample');
    if (!parsed.ok) throw new Error(parsed.problem.message);
    return parsed.docs.map((d) => JSON.stringify(d.value)).join('\n');
  })(),
);
const bundleDir = join(repo, 'bundles/bosun-sample/0.1.1');
const bundleFiles = [
  'metadata/annotations.yaml',
  'manifests/bosun-sample.clusterserviceversion.yaml',
  'manifests/widgets.sample.bosun.dev.crd.yaml',
].map((rel) => [rel, readFileSync(join(bundleDir, rel))] as const);

/** Loads `bytes` as one catalog file, then validates, decodes and encodes what loaded. */
function loadEverything(bytes: Buffer): void {
  const cfg = emptyConfig();
  const problems: Problem[] = [];
  addDocuments(cfg, bytes, 'fuzz.yaml', problems);
  for (const p of problems) {
    expect(p.file).toBe('fuzz.yaml');
    expect(p.message).not.toMatch(/Maximum call stack|internal error|unexpected error/i);
  }
  if (problems.length > 0) return;
  validateCatalog(cfg);
  for (const b of cfg.bundles) decodeBundle(b);
  const docs = [...cfg.packages, ...cfg.channels, ...cfg.bundles, ...cfg.deprecations, ...cfg.others];
  for (const format of [CatalogFormat.JSON, CatalogFormat.YAML])
    encodeDocuments(docs as unknown as Record<string, unknown>[], format);
}

/** YAML and JSON fragments, hostile ones among them, to be strung together. */
const token = fc.constantFrom(
  '\n',
  ' ',
  '  ',
  '- ',
  ': ',
  'schema: olm.bundle\n',
  'properties:\n',
  '- type: olm.bundle.object\n  value:\n    data: ',
  '{',
  '}',
  '[',
  ']',
  ',',
  '"',
  "'",
  '\\',
  '&a ',
  '*a',
  '&b [*a, *a, *a]',
  '*b',
  '<<: *a',
  '!!str ',
  '!<tag:yaml.org,2002:map> ',
  '---\n',
  '...\n',
  '|\n',
  '>-\n',
  '# c\n',
  '\t',
  '\r\n',
  '\0',
  '\uFEFF',
  'null',
  '~',
  '0x1F',
  '1e400',
  '.nan',
  '__proto__: ',
  '{"__proto__": {"polluted": 1}}',
  '"storedIn": "/proc/self/environ"',
  'QUJDRA=='.repeat(40),
  // Whole hostile fragments: a cycle, a small bomb, deep nesting.
  'x: &c [*c]\n',
  'y: &m {k: *m}\n',
  'l0: &l0 [a, a, a, a]\nl1: &l1 [*l0, *l0, *l0, *l0]\nl2: [*l1, *l1, *l1, *l1]\n',
  '['.repeat(150),
  '{"a":'.repeat(120),
);

/** A real document with random bytes inserted, deleted or overwritten. */
function mutated(base: Buffer) {
  const edit = fc.record({
    at: fc.nat({ max: base.length }),
    remove: fc.nat({ max: 16 }),
    insert: fc.oneof(
      fc.uint8Array({ maxLength: 8 }),
      token.map((t) => Buffer.from(t)),
    ),
  });
  return fc.array(edit, { minLength: 1, maxLength: 6 }).map((edits) => {
    let out = Buffer.from(base);
    for (const e of edits) {
      const at = Math.min(e.at, out.length);
      out = Buffer.concat([out.subarray(0, at), Buffer.from(e.insert), out.subarray(at + e.remove)]);
    }
    return out;
  });
}

describe('the catalog loader, fuzzed', () => {
  it('ends in documents or problems for arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => loadEverything(Buffer.from(bytes))),
      runs(300),
    );
  });

  it('ends in documents or problems for YAML and JSON token soup', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 60 }), (tokens) =>
        loadEverything(Buffer.from(tokens.join(''))),
      ),
      runs(300),
    );
  });

  it('ends in documents or problems for token soup inside a bundle document', () => {
    const bundle =
      'schema: olm.bundle\nname: b\npackage: p\nimage: i\nproperties:\n- type: olm.bundle.object\n  value: ';
    fc.assert(
      fc.property(fc.array(token, { maxLength: 30 }), (tokens) =>
        loadEverything(Buffer.from(`${bundle}${tokens.join('')}\n`)),
      ),
      runs(300),
    );
  });

  it('ends in documents or problems for arbitrary data, written as JSON and as YAML', () => {
    const doc = fc.record({
      schema: fc.constantFrom('olm.package', 'olm.channel', 'olm.bundle', 'olm.deprecations', 'x.other'),
      name: fc.oneof(fc.string(), fc.jsonValue()),
      package: fc.oneof(fc.string(), fc.jsonValue()),
      properties: fc.array(
        fc.record({
          type: fc.constantFrom('olm.package', 'olm.gvk', 'olm.bundle.object', 'olm.constraint', 'x'),
          value: fc.jsonValue({ maxDepth: 4 }),
        }),
        { maxLength: 4 },
      ),
      entries: fc.jsonValue({ maxDepth: 3 }),
    });
    fc.assert(
      fc.property(fc.array(doc, { maxLength: 4 }), fc.boolean(), (docs, json) =>
        loadEverything(
          Buffer.from(
            json
              ? docs.map((d) => JSON.stringify(d)).join('\n')
              : docs.map((d) => `---\n${toYaml(d)}`).join(''),
          ),
        ),
      ),
      runs(200),
    );
  });

  it('ends in documents or problems for the sample catalog mutated, as YAML and as JSON', () => {
    fc.assert(fc.property(mutated(sampleCatalog), loadEverything), runs(150));
    fc.assert(fc.property(mutated(sampleJson), loadEverything), runs(150));
  });
});

describe('the bundle reader, fuzzed', () => {
  const read = (files: (readonly [string, Buffer])[]) => {
    const bundle = bundleFromFiles(new Map(files), 'fuzz-bundle', false);
    if (!bundle.ok) {
      for (const p of bundle.errors) expect(p.message).not.toMatch(/Maximum call stack|internal error/i);
      return;
    }
    validateBundle(bundle.value);
  };

  it('ends in a bundle or problems with any of its files mutated', () => {
    fc.assert(
      fc.property(fc.nat({ max: bundleFiles.length - 1 }), fc.nat({ max: 2 ** 31 }), (which, seed) => {
        const [rel, base] = bundleFiles[which]!;
        const sample = fc.sample(mutated(base), { numRuns: 1, seed })[0]!;
        read(bundleFiles.map(([r, b]) => [r, r === rel ? sample : b] as const));
      }),
      runs(150),
    );
  });

  it('ends in a bundle or problems with a manifest of token soup or random bytes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(token, { maxLength: 60 }).map((t) => Buffer.from(t.join(''))),
          fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)),
        ),
        (manifest) => read([...bundleFiles, ['manifests/extra.yaml', manifest] as const]),
      ),
      runs(200),
    );
  });
});
