/**
 * The manager as a real process (`bosun operator run`, test/support/bosun-process.ts), for tests
 * that kill it, freeze it or pull the API server from under it: a process, unlike an in-process
 * manager, can die at any instruction, with nothing flushed and nothing cleaned up.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { spawnBosun } from '../../support/bosun-process.js';
import { eventually } from '../support.js';

export interface ManagerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

export interface ManagerProcess {
  child: ChildProcess;
  pid: number;
  /** Where it serves the web catalog, /healthz, /readyz and /metrics. */
  url: string;
  /** Its Lease identity (with `leaderElect`). */
  identity: string;
  exited: Promise<ManagerExit>;
  /** Its log, one JSON record a line. */
  log: string[];
}

export interface ManagerProcessOptions {
  kubeconfig: string;
  globalNamespace?: string;
  leaderElect?: boolean;
  /** How long to wait for it to serve HTTP. */
  timeoutMs?: number;
}

/** Starts `bosun operator run` and returns once it serves HTTP (and, with `leaderElect`, names its identity). */
export async function managerProcess(opts: ManagerProcessOptions): Promise<ManagerProcess> {
  const args = [
    'operator',
    'run',
    '--kubeconfig',
    opts.kubeconfig,
    '--install-crds',
    '--metrics-addr',
    '127.0.0.1:0',
    ...(opts.globalNamespace ? ['--global-namespace', opts.globalNamespace] : []),
    ...(opts.leaderElect ? ['--leader-elect'] : []),
    '--log-format',
    'json',
  ];
  const child = spawnBosun(args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<ManagerExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const log: string[] = [];
  let url: string | undefined;
  let identity: string | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    log.push(line);
    try {
      const rec = JSON.parse(line) as { url?: string; identity?: string };
      url ??= rec.url;
      identity ??= rec.identity;
    } catch {
      // not a log record
    }
  });
  await eventually(
    opts.leaderElect ? 'the manager to serve HTTP and name its Lease identity' : 'the manager to serve HTTP',
    async () => {
      if (child.exitCode !== null) throw new Error(`the manager exited: ${log.join('\n')}`);
      return url && (identity || !opts.leaderElect) ? true : undefined;
    },
    opts.timeoutMs ?? 90_000,
  );
  return { child, pid: child.pid!, url: url!, identity: identity ?? '', exited, log };
}

/** Sends `signal` unless the process has exited already, and waits for it to exit. */
export async function killWith(m: ManagerProcess, signal: NodeJS.Signals): Promise<ManagerExit> {
  if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill(signal);
  return m.exited;
}

/** `/readyz`'s status and body. */
export async function readyz(m: ManagerProcess): Promise<{ status: number; body: string }> {
  const res = await fetch(`${m.url}/readyz`);
  return { status: res.status, body: await res.text() };
}

/** The ids (`namespace/name`) of the catalogs the manager's web catalog serves. */
export async function catalogIds(m: ManagerProcess): Promise<string[]> {
  const index = (await (await fetch(`${m.url}/api/index`)).json()) as { catalogs: { id: string }[] };
  return index.catalogs.map((c) => c.id);
}
