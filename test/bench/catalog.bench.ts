/**
 * The catalog figures, on the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR: 193 packages, 1008
 * bundles, 130 MB of YAML):
 * - catalog.import: import + validate of the corpus, wall time, with worker threads as the CLI uses;
 *   catalog.import.peak_rss: the process's peak resident memory by then;
 * - catalog.write.<format>: writing the imported catalog, one file per package;
 * - catalog.load.<format>: loading that catalog back and validating it;
 * - catalog.publish.<format>: `bosun catalog publish` of one sample bundle into it (load,
 *   validate, write one package), run through the CLI in-process;
 * - catalog.peak_rss: the peak resident memory at the end.
 * All of it runs the compiled modules in dist/, as the `bosun` command does.
 * Without BOSUN_CORPUS_DIR it reports nothing and says why.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { execFileSync } from 'node:child_process';
import { CatalogFormat } from '../../src/catalog/encode.js';
import type { Emit } from './run.js';

/**
 * The compiled modules, as the `bosun` command runs them (built first, so they are current):
 * under tsx, each worker thread would compile the TypeScript sources again as it starts.
 */
async function compiled() {
  const repo = new URL('../../', import.meta.url);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: repo.pathname, stdio: 'inherit' });
  const load = <T>(path: string) => import(new URL(`dist/${path}`, repo).href) as Promise<T>;
  return {
    ...(await load<typeof import('../../src/catalog/import.js')>('catalog/import.js')),
    ...(await load<typeof import('../../src/catalog/load.js')>('catalog/load.js')),
    ...(await load<typeof import('../../src/catalog/validate.js')>('catalog/validate.js')),
    ...(await load<typeof import('../../src/catalog/write.js')>('catalog/write.js')),
    ...(await load<typeof import('../../src/cli/main.js')>('cli/main.js')),
  };
}

const peakRssMiB = () => Math.round(process.resourceUsage().maxRSS / 1024);
const since = (t0: number) => Math.round(performance.now() - t0);

export default async function catalogBench(emit: Emit): Promise<void> {
  const corpus = process.env.BOSUN_CORPUS_DIR;
  if (!corpus || !existsSync(corpus)) {
    process.stderr.write(
      'catalog: skipped; set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators\n',
    );
    return;
  }
  const { importOperatorsDir, loadCatalog, validateCatalog, writeCatalog, main } = await compiled();
  const workers = Math.min(availableParallelism(), 4);
  let t0 = performance.now();
  const imported = await importOperatorsDir(corpus, { workers });
  const check = validateCatalog(imported.config);
  emit({
    name: 'catalog.import',
    value: since(t0),
    unit: 'ms',
    inputs: {
      packages: imported.packages,
      bundles: imported.bundles,
      errors: imported.errors.length + check.errors.length,
      workers,
    },
  });
  emit({ name: 'catalog.import.peak_rss', value: peakRssMiB(), unit: 'MiB' });

  // Both formats are written first, and the imported catalog dropped, so that loading is timed
  // in a heap that does not also hold another copy of the corpus (a CLI run starts without one).
  const formats = [CatalogFormat.JSON, CatalogFormat.YAML];
  const dirs = new Map<CatalogFormat, string>();
  let config: typeof imported.config | undefined = imported.config;
  imported.config = undefined as never;
  for (const format of formats) {
    const dir = await mkdtemp(join(tmpdir(), 'bosun-bench-catalog-'));
    dirs.set(format, dir);
    t0 = performance.now();
    const files = await writeCatalog(dir, config, { format });
    emit({ name: `catalog.write.${format}`, value: since(t0), unit: 'ms', inputs: { files: files.length } });
  }
  // eslint-disable-next-line no-useless-assignment -- drops the last reference, for the collector
  config = undefined;

  const sample = join(import.meta.dirname, '../../bundles/bosun-sample/0.1.0');
  try {
    for (const format of formats) {
      const dir = dirs.get(format)!;
      t0 = performance.now();
      const loaded = await loadCatalog(dir);
      const valid = loaded.ok && validateCatalog(loaded.value).errors.length === 0;
      emit({ name: `catalog.load.${format}`, value: since(t0), unit: 'ms', inputs: { valid } });

      const out = new PassThrough().resume();
      t0 = performance.now();
      const code = await main(['catalog', 'publish', dir, sample], {
        stdout: out,
        stderr: out,
        cwd: dir,
        env: process.env,
      });
      emit({
        name: `catalog.publish.${format}`,
        value: since(t0),
        unit: 'ms',
        inputs: { exitCode: code, bundle: 'bosun-sample.v0.1.0' },
      });
    }
  } finally {
    for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true });
  }
  emit({ name: 'catalog.peak_rss', value: peakRssMiB(), unit: 'MiB' });
}
