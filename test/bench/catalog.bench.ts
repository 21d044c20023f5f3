/**
 * The catalog figures, on the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR: 193 packages, 1008
 * bundles, 130 MB of YAML):
 * - catalog.import: import + validate of the corpus, wall time, with worker threads as the CLI uses;
 *   catalog.import.peak_rss: the process's peak resident memory by then;
 * - catalog.write.<format>: writing the imported catalog, one file per package;
 * - catalog.load.<format>: loading that catalog back and validating it;
 * - catalog.publish.<format>: `bosun catalog publish` of one sample bundle into it (load,
 *   validate, write one package), run through the CLI in-process;
 * - catalog.peak_rss: the peak resident memory by then;
 * - catalog.decode.yaml: decoding every YAML file of the corpus with the project's codec (the
 *   fast block reader, js-yaml where it gives up); catalog.decode.yaml.jsyaml: the same files with
 *   js-yaml's core schema alone, so the two show what the block reader saves (the faster of two
 *   passes each);
 * - catalog.decode.bundle.first / .cached: decoding the install manifests of the corpus's largest
 *   bundles (by manifest bytes) as the InstallPlan controller does, the first time and again for
 *   the same content (the decoder's cache); catalog.decode.bundle.manifests.codec / .yaml_lib:
 *   parsing just those manifests with the codec and with the `yaml` library that decoded them before.
 * - catalog.vs_opm.<validate|render>: `bosun catalog validate` and `render -o json` of the written
 *   JSON catalog against opm v1.73.0's `validate` and `render` on the same directory, each a
 *   command in its own process (the faster of two runs): Bosun's time, with opm's time, the
 *   speed-up and both peak memories (VmHWM, polled) in its inputs; .peak_rss: Bosun's peak,
 *   with opm's beside it. opm is tools/opm, built on first use (minutes when cold).
 * All of it runs the compiled modules in dist/, as the `bosun` command does.
 * Without BOSUN_CORPUS_DIR it reports nothing and says why.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { execFileSync, spawn } from 'node:child_process';
import jsyaml from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { CatalogFormat } from '../../src/catalog/encode.js';
import { opmBinary } from '../support/opm.js';
import type { Emit } from './run.js';
import { mib, rssBytes, sleep } from './support.js';

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
    ...(await load<typeof import('../../src/bundle/yaml.js')>('bundle/yaml.js')),
    ...(await load<typeof import('../../src/install/bundle-objects.js')>('install/bundle-objects.js')),
    ...(await load<typeof import('../../src/catalog/payloads.js')>('catalog/payloads.js')),
    ...(await load<typeof import('../../src/catalog/content/bundles.js')>('catalog/content/bundles.js')),
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
  const modules = await compiled();
  const { importOperatorsDir, loadCatalog, validateCatalog, writeCatalog, main } = modules;
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
    if (!files.ok) throw new Error(`writing the catalog was refused: ${JSON.stringify(files.errors)}`);
    emit({
      name: `catalog.write.${format}`,
      value: since(t0),
      unit: 'ms',
      inputs: { files: files.value.length },
    });
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
    emit({ name: 'catalog.peak_rss', value: peakRssMiB(), unit: 'MiB' });
    await opmFigures(emit, dirs.get(CatalogFormat.JSON)!);
    await decodeFigures(emit, modules, corpus, dirs.get(CatalogFormat.JSON)!);
  } finally {
    for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true });
  }
}

/** A command's wall time and peak resident memory: VmHWM, read until it exits. */
async function measured(cmd: string, args: string[]): Promise<{ ms: number; peakMiB: number; code: number }> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] });
  let peak = 0;
  const exited = new Promise<number>((done) => child.on('exit', (code) => done(code ?? -1)));
  let running = true;
  void exited.then(() => (running = false));
  while (running) {
    // The high-water mark only rises, so the last reading before exit is the peak.
    // (An exited process not yet reaped has no VmHWM: NaN, skipped.)
    const hwm = await rssBytes(child.pid!, 'VmHWM').catch(() => Number.NaN);
    if (Number.isFinite(hwm)) peak = Math.max(peak, hwm);
    await sleep(20);
  }
  return { ms: since(t0), peakMiB: mib(peak), code: await exited };
}

async function opmFigures(emit: Emit, catalog: string): Promise<void> {
  const opm = await opmBinary();
  if (!opm.ok) {
    process.stderr.write(`catalog.vs_opm: skipped: ${opm.why}\n`);
    return;
  }
  const bosun = join(import.meta.dirname, '../../bin/bosun.js');
  const best = async (cmd: string, args: string[]) => {
    const runs = [await measured(cmd, args), await measured(cmd, args)];
    return runs.sort((a, b) => a.ms - b.ms)[0]!;
  };
  for (const [verb, bosunArgs, opmArgs] of [
    ['validate', ['catalog', 'validate', catalog], ['validate', catalog]],
    ['render', ['catalog', 'render', catalog, '-o', 'json'], ['render', catalog, '-o', 'json']],
  ] as const) {
    const ours = await best(process.execPath, [bosun, ...bosunArgs]);
    const theirs = await best(opm.path, [...opmArgs]);
    const inputs = { exitCode: ours.code, opm_ms: theirs.ms, opm_exitCode: theirs.code };
    emit({
      name: `catalog.vs_opm.${verb}`,
      value: ours.ms,
      unit: 'ms',
      inputs: { ...inputs, speedup: Math.round((theirs.ms / ours.ms) * 10) / 10 },
    });
    emit({
      name: `catalog.vs_opm.${verb}.peak_rss`,
      value: ours.peakMiB,
      unit: 'MiB',
      inputs: { opm_MiB: theirs.peakMiB },
    });
  }
}

/** How many of the largest bundles the bundle decoding figures take. */
const LargestBundles = 5;
/** How often the corpus's YAML is read by each reader. */
const DecodePasses = 2;

async function decodeFigures(
  emit: Emit,
  modules: Awaited<ReturnType<typeof compiled>>,
  corpus: string,
  catalogDir: string,
): Promise<void> {
  const { parseYamlStream, loadCatalog, bundleDecoder, catalogBundleManifests, payloadOf, withPayloads } =
    modules;
  const files = (await readdir(corpus, { recursive: true })).filter((f) => /\.ya?ml$/i.test(f)).sort();
  const texts = await Promise.all(files.map((f) => readFile(join(corpus, f), 'utf8')));
  const megabytes = Math.round(texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / 2 ** 20);
  const readers = {
    'catalog.decode.yaml': (text: string, i: number) => parseYamlStream(text, files[i]!).ok,
    'catalog.decode.yaml.jsyaml': (text: string) => {
      try {
        jsyaml.loadAll(text.replace(/^\uFEFF/, ''), () => undefined, { schema: jsyaml.CORE_SCHEMA });
        return true;
      } catch {
        return false;
      }
    },
  };
  // Each reader reads everything twice, one after the other, and the faster time counts: the
  // first pass of whichever runs first also pays for compiling its code.
  const best = new Map<string, { ms: number; failed: number }>();
  for (let pass = 0; pass < DecodePasses; pass++) {
    for (const [name, read] of Object.entries(readers)) {
      const t0 = performance.now();
      const failed = texts.filter((t, i) => !read(t, i)).length;
      const ms = since(t0);
      if (ms < (best.get(name)?.ms ?? Infinity)) best.set(name, { ms, failed });
    }
  }
  for (const [name, { ms, failed }] of best) {
    emit({
      name,
      value: ms,
      unit: 'ms',
      inputs: { files: files.length, megabytes, failed, passes: DecodePasses },
    });
  }

  const loaded = await loadCatalog(catalogDir);
  if (!loaded.ok) throw new Error('the written catalog does not load again');
  // Manifest bytes, stored in the catalog file or inline.
  const size = (b: (typeof loaded.value.bundles)[number]) =>
    (b.properties ?? []).reduce((n, p) => {
      if (p.type !== 'olm.bundle.object') return n;
      const data = (p.value as { data?: unknown }).data;
      return n + (payloadOf(p.value)?.length ?? (typeof data === 'string' ? data.length : 0));
    }, 0);
  const largest = loaded.value.bundles
    .map((b) => ({ bundle: b, bytes: size(b) }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, LargestBundles);
  const decoder = bundleDecoder();
  const inputs = {
    bundles: largest.map((l) => l.bundle.name),
    megabytes: Math.round(largest.reduce((n, l) => n + l.bytes, 0) / 2 ** 20),
  };
  for (const pass of ['first', 'cached'] as const) {
    const t0 = performance.now();
    let ok = 0;
    for (const l of largest) if ((await decoder.decode(catalogBundleManifests(l.bundle))).ok) ok++;
    emit({ name: `catalog.decode.bundle.${pass}`, value: since(t0), unit: 'ms', inputs: { ...inputs, ok } });
  }
  // The same manifests parsed by the codec and by the `yaml` library, which decoded them before.
  const manifests: string[] = [];
  for (const l of largest) {
    for (const p of (await withPayloads(l.bundle)).properties) {
      const data = p.type === 'olm.bundle.object' ? (p.value as { data?: unknown }).data : undefined;
      if (typeof data === 'string') manifests.push(Buffer.from(data, 'base64').toString('utf8'));
    }
  }
  const parsers = {
    codec: (text: string) => parseYamlStream(text, 'manifest').ok,
    yaml_lib: (text: string) =>
      parseAllDocuments(text).every((d) => d.errors.length === 0 && d.toJS() !== undefined),
  };
  for (const [parser, parse] of Object.entries(parsers)) {
    const t0 = performance.now();
    const ok = manifests.filter(parse).length;
    emit({
      name: `catalog.decode.bundle.manifests.${parser}`,
      value: since(t0),
      unit: 'ms',
      inputs: { ...inputs, manifests: manifests.length, ok },
    });
  }
}
