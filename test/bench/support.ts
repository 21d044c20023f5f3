/**
 * What several benchmark suites share: a control plane of their own, the manager as its own
 * process (compiled as users run it), a catalog served over http, waiting, and reading a
 * process's memory.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../src/apis/meta.js';
import { importOperatorsDir } from '../../src/catalog/import.js';
import { type ClusterState, down, up } from '../../src/cluster/controlplane.js';
import { collectionPath, KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { isAlreadyExists } from '../../src/kube/errors.js';
import { ManagerAllocatorEnv, ManagerHeapFlags } from '../../src/manager/defaults.js';

export { serveText } from '../support/serve.js';

const repo = new URL('../../', import.meta.url).pathname;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
  pollMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(pollMs);
  }
}

/** Resident memory (VmRSS) or its high-water mark (VmHWM) of a process, in bytes. */
export async function rssBytes(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  return kb ? Number(kb[1]) * 1024 : Number.NaN;
}

export const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

export interface BenchCluster {
  kubeconfig: string;
  server: string;
  /** The local control plane's processes; absent for an existing cluster. */
  state?: ClusterState;
  client: KubeClient;
  /** POST `body` to the collection of `resource`; an object that exists already is left alone. */
  create(
    resource: { group: string; version: string; plural: string; namespaced: boolean },
    ns: string,
    body: KubeObject,
  ): Promise<'created' | 'exists'>;
  close(): Promise<void>;
}

/**
 * A fresh local control plane named `name` in a state folder of its own, or the existing (empty)
 * cluster of BOSUN_BENCH_KUBECONFIG. With BOSUN_BENCH_KEEP=1 the control plane is left running at
 * the end, for a look at what the benchmark left behind.
 */
export async function benchCluster(name: string): Promise<BenchCluster> {
  const existing = process.env.BOSUN_BENCH_KUBECONFIG;
  const stateDir = existing ? undefined : await mkdtemp(join(tmpdir(), `bosun-${name}-`));
  const env = { ...process.env, ...(stateDir ? { XDG_STATE_HOME: stateDir } : {}) };
  const state = existing ? undefined : await up({ name, env });
  const kubeconfig = existing ?? state!.kubeconfig;
  const client = new KubeClient(loadKubeConfig({ path: kubeconfig }).access);
  return {
    kubeconfig,
    server: state?.server ?? existing!,
    ...(state ? { state } : {}),
    client,
    create: (resource, ns, body) =>
      client.request({ method: 'POST', path: collectionPath(resource, ns), body }).then(
        () => 'created' as const,
        (err: unknown) => {
          if (isAlreadyExists(err)) return 'exists' as const;
          throw err;
        },
      ),
    async close() {
      client.close();
      if (stateDir && process.env.BOSUN_BENCH_KEEP === '1') {
        process.stderr.write(
          `bench: control plane kept running (BOSUN_BENCH_KEEP=1): KUBECONFIG=${kubeconfig}\n`,
        );
        return;
      }
      if (stateDir) {
        await down({ name, env });
        await rm(stateDir, { recursive: true, force: true });
      }
    },
  };
}

export const coreResource = (plural: string) => ({
  group: '',
  version: 'v1',
  plural,
  namespaced: plural !== 'namespaces' && plural !== 'nodes',
});

/**
 * `bosun operator run` as a child process, compiled as users run it (built first, so it is
 * current), with the memory settings it gives itself (src/cli/allocator.ts;
 * BOSUN_BENCH_MALLOC=default leaves glibc's and V8's defaults, for comparison).
 * BOSUN_BENCH_MANAGER_NODE_OPTIONS adds options for its node, e.g. `--cpu-prof` to profile it
 * (options node refuses in NODE_OPTIONS). `logTo` (a file descriptor) takes its log (its stdout,
 * dropped otherwise), e.g. a debug log asked for in `extraArgs` (the last --log-level wins).
 */
export function runManager(
  kubeconfig: string,
  globalNamespace: string,
  extraArgs: string[] = [],
  logTo: 'ignore' | number = 'ignore',
): ChildProcess {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: repo, stdio: 'inherit' });
  const nodeOptions = process.env.BOSUN_BENCH_MANAGER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  return spawn(
    process.execPath,
    [
      ...nodeOptions,
      join(repo, 'bin/bosun.js'),
      'operator',
      'run',
      '--kubeconfig',
      kubeconfig,
      '--install-crds',
      '--global-namespace',
      globalNamespace,
      '--metrics-addr',
      '127.0.0.1:0',
      '--log-level',
      'warn',
      '--log-format',
      'json',
      ...extraArgs,
    ],
    {
      cwd: repo,
      stdio: ['ignore', logTo, 'inherit'],
      env: { ...process.env, ...benchAllocatorEnv() },
    },
  );
}

/** The manager sets its own allocator variables unless BOSUN_BENCH_MALLOC=default asks for glibc's defaults. */
/** The global namespace and, in it, a ConfigMap holding `catalogJson`: the catalog a bench serves. */
export async function catalogConfigMap(
  cluster: Pick<BenchCluster, 'create'>,
  namespace: string,
  name: string,
  catalogJson: string,
): Promise<void> {
  await cluster.create(coreResource('namespaces'), '', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  await cluster.create(coreResource('configmaps'), namespace, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { 'catalog.json': catalogJson },
  } as KubeObject);
}

export const benchAllocatorEnv = (): Record<string, string> =>
  process.env.BOSUN_BENCH_MALLOC === 'default' ? { BOSUN_ALLOCATOR: 'default' } : {};

/** How the manager's allocator was set, for a figure's inputs. */
export const managerAllocator = () =>
  process.env.BOSUN_BENCH_MALLOC === 'default'
    ? 'glibc and V8 defaults'
    : [...Object.entries(ManagerAllocatorEnv).map(([k, v]) => `${k}=${v}`), ...ManagerHeapFlags].join(' ');

/**
 * A process's resident memory once it has settled: V8 gives back the heap a burst of requests
 * grew only when its memory reducer runs, up to a minute after the burst, so a figure read at
 * once measures garbage, and so can one read after a few quiet seconds. Sampled every 5 s until
 * a minute of samples lie within 1 MiB of each other, or for at most `maxMs`. Returns the last
 * sample, the first, and how long it took.
 */
export async function settledRss(
  pid: number,
  maxMs = 240_000,
): Promise<{ bytes: number; first: number; waitedS: number }> {
  const started = Date.now();
  const window = 13; // a minute of samples, 5 s apart
  const samples = [await rssBytes(pid)];
  const steady = () => {
    if (samples.length < window) return false;
    const last = samples.slice(-window);
    return Math.max(...last) - Math.min(...last) <= 2 ** 20;
  };
  while (!steady() && Date.now() - started < maxMs) {
    await sleep(5000);
    samples.push(await rssBytes(pid));
  }
  return { bytes: samples.at(-1)!, first: samples[0]!, waitedS: Math.round((Date.now() - started) / 1000) };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** The corpus imported as `bosun catalog import` does, as a JSON stream, with its import report. */
export async function importedCorpus(dir: string) {
  const imported = await importOperatorsDir(dir);
  const { config } = imported;
  const text = [...config.packages, ...config.channels, ...config.bundles, ...config.deprecations]
    .map((d) => JSON.stringify(d))
    .join('\n');
  return { ...imported, text };
}

/** The `q` quantile of `xs` (nearest rank, of a sorted copy); NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
}
export const median = (xs: readonly number[]): number => quantile(xs, 0.5);
/** Milliseconds to one decimal, as figures report them. */
export const round = (ms: number): number => Math.round(ms * 10) / 10;
