import { existsSync } from 'node:fs';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkClusterServiceVersion, decodeClusterServiceVersion } from '../../../src/bundle/csv-schema.js';
import { readBundle } from '../../../src/bundle/read.js';
import { parseYamlOne } from '../../../src/bundle/yaml.js';
import type { Problem } from '../../../src/util/result.js';
import { tempDir } from '../../support/temp-dir.js';

const minimal = join(import.meta.dirname, '../../fixtures/bundles/minimal');
const CSV_FILE = 'manifests/gizmo.csv.yaml';
const FILE = 'gizmo/manifests/gizmo.csv.yaml';
const OBJECT = 'ClusterServiceVersion/gizmo.v1.0.0';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests poke at any field
type AnyCSV = any;

async function fixtureCSV(): Promise<AnyCSV> {
  const text = await readFile(join(minimal, CSV_FILE), 'utf8');
  const parsed = parseYamlOne(text, CSV_FILE);
  if (!parsed.ok) throw new Error(parsed.problem.message);
  return parsed.value;
}

const deployment = (csv: AnyCSV) => csv.spec.install.spec.deployments[0];
const container = (csv: AnyCSV) => deployment(csv).spec.template.spec.containers[0];

describe('a CSV is checked against the schema of its CRD', () => {
  it('accepts the fixture CSV as it is and leaves it unchanged', async () => {
    const csv = await fixtureCSV();
    const before = structuredClone(csv);
    expect(checkClusterServiceVersion(csv, FILE, OBJECT)).toEqual({ errors: [], warnings: [] });
    const decoded = decodeClusterServiceVersion(csv, FILE, OBJECT);
    expect(decoded.ok && decoded.value.spec.install.spec?.deployments[0]?.name).toBe('gizmo-operator');
    expect(csv).toEqual(before);
  });

  // What OLM's Go types cannot hold: reading fails, naming file, object and field.
  it.each<[string, (csv: AnyCSV) => void, Partial<Problem>[]]>([
    [
      'install modes as a string',
      (c) => (c.spec.installModes = 'AllNamespaces'),
      [{ field: 'spec.installModes', message: 'must be a list' }],
    ],
    [
      'an unquoted version',
      (c) => (c.spec.version = 1.5),
      [{ field: 'spec.version', message: 'must be a string; quote it in YAML ("1.5")' }],
    ],
    [
      'supported as a string',
      (c) => (c.spec.installModes[0].supported = 'yes'),
      [{ field: 'spec.installModes[0].supported', message: 'must be true or false' }],
    ],
    [
      'container args as a string',
      (c) => (container(c).args = '--verbose'),
      [
        {
          field: 'spec.install.spec.deployments[0].spec.template.spec.containers[0].args',
          message: 'must be a list',
        },
      ],
    ],
    [
      'a permission rule as a list of lists',
      (c) => (c.spec.install.spec.permissions = [{ serviceAccountName: 'gizmo', rules: [['get']] }]),
      [{ field: 'spec.install.spec.permissions[0].rules[0]', message: 'must be a map' }],
    ],
    [
      'an owned CRD kind as a number',
      (c) => (c.spec.customresourcedefinitions.owned[0].kind = 7),
      [
        {
          field: 'spec.customresourcedefinitions.owned[0].kind',
          message: 'must be a string; quote it in YAML ("7")',
        },
      ],
    ],
  ])('refuses %s', async (_, change, expected) => {
    const csv = await fixtureCSV();
    change(csv);
    const { errors } = checkClusterServiceVersion(csv, FILE, OBJECT);
    expect(errors).toEqual(expected.map((e) => ({ file: FILE, object: OBJECT, ...e })));
    const decoded = decodeClusterServiceVersion(csv, FILE, OBJECT);
    expect(decoded.ok).toBe(false);
  });

  // What OLM's typed decoding tolerates: accepted, each said in a warning.
  it.each<[string, (csv: AnyCSV) => void, string[]]>([
    [
      'null container args',
      (c) => (container(c).args = null),
      ['spec.install.spec.deployments[0].spec.template.spec.containers[0].args'],
    ],
    [
      'an owned CRD without a kind',
      (c) => delete c.spec.customresourcedefinitions.owned[0].kind,
      ['spec.customresourcedefinitions.owned[0].kind'],
    ],
    [
      'a resource reference without a name',
      (c) => (c.spec.customresourcedefinitions.owned[0].resources = [{ kind: 'Deployment', version: 'v1' }]),
      ['spec.customresourcedefinitions.owned[0].resources[0].name'],
    ],
    [
      'an install mode without supported',
      (c) => delete c.spec.installModes[0].supported,
      ['spec.installModes[0].supported'],
    ],
    ['a null status time', (c) => (c.status = { lastUpdateTime: null }), ['status.lastUpdateTime']],
  ])('tolerates %s', async (_, change, fields) => {
    const csv = await fixtureCSV();
    change(csv);
    const { errors, warnings } = checkClusterServiceVersion(csv, FILE, OBJECT);
    expect(errors).toEqual([]);
    expect(warnings.map((w) => w.field)).toEqual(fields);
    expect(decodeClusterServiceVersion(csv, FILE, OBJECT).ok).toBe(true);
  });

  it.each<[string, (csv: AnyCSV) => void]>([
    ['unknown fields', (c) => (c.spec.futureField = { anything: [1, 2] })],
    [
      // Go reads a descriptor's value as raw JSON, whatever it holds.
      'a descriptor value that is a number',
      (c) => (c.spec.customresourcedefinitions.owned[0].specDescriptors = [{ path: 'port', value: 9187 }]),
    ],
  ])('accepts %s without a word', async (_, change) => {
    const csv = await fixtureCSV();
    change(csv);
    expect(checkClusterServiceVersion(csv, FILE, OBJECT)).toEqual({ errors: [], warnings: [] });
  });

  it('fails reading a bundle whose CSV Go cannot decode, naming file, object and field', async () => {
    const dir = join(await tempDir('bosun-csv-schema-'), 'bundle');
    await cp(minimal, dir, { recursive: true });
    const csv = await fixtureCSV();
    deployment(csv).spec.replicas = 'two';
    await writeFile(join(dir, CSV_FILE), JSON.stringify(csv));
    const r = await readBundle(dir);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      {
        file: join(dir, CSV_FILE),
        object: OBJECT,
        field: 'spec.install.spec.deployments[0].spec.replicas',
        message: 'must be an integer',
      },
    ]);
  });
});

const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus) {
  console.warn(
    'skipping the CSV schema over the OperatorHub corpus: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
  );
}

describe.skipIf(!haveCorpus)('the CSV schema over the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR)', () => {
  it('refuses no corpus CSV, as OLM decodes them all', async () => {
    const files = (await readdir(corpus!, { recursive: true })).filter((f) =>
      f.endsWith('.clusterserviceversion.yaml'),
    );
    expect(files.length).toBeGreaterThan(900);
    const refused: Problem[] = [];
    let tolerated = 0;
    for (const f of files) {
      const parsed = parseYamlOne(await readFile(join(corpus!, f), 'utf8'), f);
      if (!parsed.ok) continue;
      const { errors, warnings } = checkClusterServiceVersion(
        parsed.value as Record<string, unknown>,
        f,
        'csv',
      );
      refused.push(...errors);
      if (warnings.length > 0) tolerated++;
    }
    expect(refused).toEqual([]);
    // The corpus does lean on the tolerance (resources without names, null args, ...).
    expect(tolerated).toBeGreaterThan(0);
  });
});
