/**
 * The production install (test/support/production-install.ts: `npm pack`, then `npm install -g`
 * of the tarball into an empty prefix) and how fast what it installs starts:
 * - install.packed_bytes: the tarball's size;
 * - install.files: the files in the tarball;
 * - install.installed_bytes: the prefix on disk once installed (`du`), dependencies included;
 * - install.version_ms: `bosun --version` from the install, from spawn to exit (median);
 * - install.manager_start_ms: `bosun operator run --install-crds` from the install against a
 *   local control plane of its own holding one CatalogSource (http, the sample catalog), from
 *   spawn to its first finished reconcile, read from the `time` of its JSON log record (median
 *   of 5 starts, after a first that creates the CRDs). Beside it: the time to "manager started"
 *   and to the CatalogSource's first reconcile.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { KubeObject } from '../../src/apis/meta.js';
import { Resources } from '../../src/apis/operators.js';
import { bosun, cleanEnv, type Installed, installGlobal, pack } from '../support/production-install.js';
import type { Emit } from './run.js';
import {
  benchAllocatorEnv,
  benchCluster,
  coreResource as core,
  managerAllocator,
  median,
  round,
  serveText,
  stopProcess,
} from './support.js';

const VERSION_RUNS = 10;
const MANAGER_RUNS = 5;
const namespace = 'bench-install';

const say = (s: string) => process.stderr.write(`install bench: ${s}\n`);

export default async function install(emit: Emit): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bosun-install-bench-'));
  try {
    say('npm pack');
    const packStarted = performance.now();
    const packed = await pack(join(dir, 'pack'));
    const packMs = performance.now() - packStarted;
    say('npm install -g');
    const installStarted = performance.now();
    const installed = await installGlobal(packed.tarball, join(dir, 'prefix'));
    const installMs = performance.now() - installStarted;
    const inputs = { node: process.version, npm: npmVersion() };

    emit({
      name: 'install.packed_bytes',
      value: packed.bytes,
      unit: 'B',
      inputs: { ...inputs, unpackedBytes: packed.unpackedBytes, packS: round(packMs / 1000) },
    });
    emit({ name: 'install.files', value: packed.files.length, unit: 'files', inputs });
    emit({
      name: 'install.installed_bytes',
      value: du(installed.prefix, '-sB1'),
      unit: 'B',
      inputs: {
        ...inputs,
        method: 'du -sB1 <prefix> (blocks on disk); apparentBytes from du -sb',
        apparentBytes: du(installed.prefix, '-sb'),
        packageBytes: du(installed.packageDir, '-sB1'),
        installS: round(installMs / 1000),
        npmFlags: '--prefer-offline --no-audit --no-fund',
      },
    });

    const work = join(dir, 'work');
    await mkdir(work);
    const versionMs: number[] = [];
    for (let i = 0; i <= VERSION_RUNS; i++) {
      const t = performance.now();
      const r = await bosun(installed, work, ['--version']);
      if (r.code !== 0) throw new Error(`bosun --version exited ${r.code}: ${r.stderr}`);
      if (i > 0) versionMs.push(performance.now() - t); // the first run warms the file cache
    }
    emit({
      name: 'install.version_ms',
      value: round(median(versionMs)),
      unit: 'ms',
      inputs: {
        ...inputs,
        method: 'spawn of bosun (found on PATH) to its exit, after one warm-up run',
        runs: versionMs.length,
        samples: versionMs.map(round),
      },
    });

    await managerStart(emit, installed, work, inputs);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function managerStart(
  emit: Emit,
  installed: Installed,
  work: string,
  inputs: Record<string, unknown>,
): Promise<void> {
  const cluster = await benchCluster('installbench');
  const keepAlive = setInterval(() => {}, 1 << 30);
  const rendered = await bosun(installed, work, [
    'catalog',
    'render',
    join(installed.packageDir, 'catalogs/bosun-samples'),
    '-o',
    'json',
  ]);
  if (rendered.code !== 0) throw new Error(`bosun catalog render: ${rendered.stderr}`);
  const served = await serveText(rendered.stdout);
  try {
    say(`control plane up at ${cluster.server}`);
    // The first start creates the CRDs; on a fresh cluster it has nothing to reconcile. Then the
    // CatalogSource, and the starts that are timed.
    const first = await startOnce(installed, work, cluster.kubeconfig, false);
    await cluster.create(core('namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    await cluster.create(Resources.CatalogSource, namespace, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'samples', namespace },
      spec: { sourceType: 'http', address: served.url },
    } as KubeObject);
    const runs: Start[] = [];
    for (let i = 0; i < MANAGER_RUNS; i++)
      runs.push(await startOnce(installed, work, cluster.kubeconfig, true));
    const med = (f: (s: Start) => number | undefined) => round(median(runs.map((r) => f(r) ?? Number.NaN)));
    emit({
      name: 'install.manager_start_ms',
      value: med((r) => r.firstReconcileMs),
      unit: 'ms',
      inputs: {
        ...inputs,
        method:
          'Date.now() just before spawning the installed `bosun operator run --install-crds --log-level debug --log-format json`, to the `time` of its first JSON log record of a finished reconcile ("reconciled" or "reconcile failed, retrying", any controller); median of the starts after a first that created the CRDs',
        runs: runs.length,
        samples: runs.map((r) => round(r.firstReconcileMs ?? Number.NaN)),
        firstControllers: [...new Set(runs.map((r) => r.firstController))],
        managerStartedMs: med((r) => r.startedMs),
        catalogSourceReconciledMs: med((r) => r.catalogSourceMs),
        catalogSource:
          'http, catalogs/bosun-samples rendered (2 packages, 6 bundles), created before the timed starts',
        crdsCreatedStartMs: round(first.startedMs),
        allocator: managerAllocator(),
      },
    });
  } finally {
    served.close();
    clearInterval(keepAlive);
    await cluster.close();
  }
}

interface Start {
  /** To the "manager started" record: CRDs applied, caches synced, queues started. */
  startedMs: number;
  /** To the first finished reconcile, of any controller; with `untilCatalogSource` only. */
  firstReconcileMs?: number;
  firstController?: string;
  /** To the first finished reconcile of the bench's CatalogSource. */
  catalogSourceMs?: number;
}

interface LogRecord {
  time?: number;
  msg?: string;
  controller?: string;
  key?: string;
}

const finished = (r: LogRecord) => r.msg === 'reconciled' || r.msg === 'reconcile failed, retrying';

/**
 * Starts the installed manager once and reads its JSON log: until the "manager started" record,
 * or with `untilCatalogSource` until the first finished reconcile of the bench's CatalogSource
 * (noting the first finished reconcile of any controller on the way); then stops it.
 */
async function startOnce(
  installed: Installed,
  cwd: string,
  kubeconfig: string,
  untilCatalogSource: boolean,
): Promise<Start> {
  const spawned = Date.now();
  const child = spawn(
    'bosun',
    [
      'operator',
      'run',
      '--kubeconfig',
      kubeconfig,
      '--install-crds',
      '--metrics-addr',
      '127.0.0.1:0',
      '--log-level',
      'debug',
      '--log-format',
      'json',
    ],
    { cwd, env: { ...installed.env, ...benchAllocatorEnv() }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    return await new Promise<Start>((resolve, reject) => {
      const start: Partial<Start> = {};
      const timer = setTimeout(() => reject(new Error(`the manager did not get there in 180 s`)), 180_000);
      child.once('exit', (code) => reject(new Error(`the manager exited (${code})`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const rec = JSON.parse(line) as LogRecord;
        if (rec.time === undefined) return;
        const ms = rec.time - spawned;
        if (rec.msg === 'manager started') start.startedMs ??= ms;
        if (finished(rec) && start.firstReconcileMs === undefined) {
          start.firstReconcileMs = ms;
          start.firstController = rec.controller ?? '';
        }
        if (finished(rec) && rec.controller === 'catalogsource' && rec.key === `${namespace}/samples`)
          start.catalogSourceMs ??= ms;
        const done = untilCatalogSource ? start.catalogSourceMs : start.startedMs;
        if (done === undefined || start.startedMs === undefined) return;
        clearTimeout(timer);
        resolve(start as Start);
      });
    });
  } finally {
    await stopProcess(child as ChildProcess);
  }
}

/** `du <flag> <path>`'s figure. */
function du(path: string, flag: '-sB1' | '-sb'): number {
  return Number(execFileSync('du', [flag, path], { encoding: 'utf8' }).split('\t')[0]);
}

function npmVersion(): string {
  return execFileSync('npm', ['--version'], { encoding: 'utf8', env: cleanEnv() }).trim();
}
