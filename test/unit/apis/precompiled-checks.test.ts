/**
 * The checkers `npm run build` compiles ahead of time (src/apis/crds/precompile.ts) must check
 * exactly as the ones compiled at run time: same verdict, same errors, same defaults filled in.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCompiled } from '../../../src/apis/crds/check.js';
import { parseYamlOne } from '../../../src/bundle/yaml.js';
import { compileCSVChecker } from '../../../src/bundle/csv-schema.js';
import { checkDocument } from '../../../src/catalog/schema.js';

const requireHere = createRequire(import.meta.url);
const sampleCSV = join(
  import.meta.dirname,
  '../../../bundles/bosun-sample/0.1.0/manifests/bosun-sample.clusterserviceversion.yaml',
);

let dir = '';
let written: { file: string; checker: ValidateFunction }[] = [];

beforeAll(async () => {
  compileCSVChecker();
  // Inside the project, as dist/ is, so that the code finds ajv's run-time helpers.
  const cache = join(import.meta.dirname, '../../../node_modules/.cache');
  await mkdir(cache, { recursive: true });
  dir = await mkdtemp(join(cache, 'bosun-precompiled-'));
  written = await writeCompiled(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The verdict, errors and value after checking (defaults are filled into the value). */
function run(check: ValidateFunction, value: unknown) {
  const copy: unknown = structuredClone(value);
  const ok = check(copy);
  return { ok, errors: check.errors ?? null, value: copy };
}

describe('checkers compiled ahead of time', () => {
  it('are written for the CSV and every catalog document schema', () => {
    const checkers = new Set(written.map((w) => w.checker));
    expect(checkers.has(compileCSVChecker())).toBe(true);
    for (const check of Object.values(checkDocument)) expect(checkers.has(check)).toBe(true);
  });

  it('check as the run-time ones do, on good and bad input', async () => {
    const parsed = parseYamlOne(await readFile(sampleCSV, 'utf8'), sampleCSV);
    if (!parsed.ok) throw new Error(parsed.problem.message);
    const csv = parsed.value as Record<string, unknown>;
    const inputs: unknown[] = [
      csv,
      { ...csv, spec: { ...(csv.spec as object), installModes: 'OwnNamespace' } },
      { schema: 'olm.package', name: 'p', defaultChannel: 7 },
      { schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1', skips: 'p.v0' }] },
      {
        schema: 'olm.bundle',
        package: 'p',
        properties: [{ type: 'olm.package', value: { packageName: 'p' } }],
      },
      'not an object',
      null,
    ];
    for (const { file, checker } of written) {
      const loaded = requireHere(file) as ValidateFunction;
      for (const input of inputs) expect(run(loaded, input)).toEqual(run(checker, input));
    }
  });
});
