/**
 * `opm serve` (opm v1.73.0, test/support/opm.ts) serving a catalog directory over gRPC on a free
 * port of 127.0.0.1, for tests and benchmarks of the registry client. It builds its cache when it
 * starts (a minute for the 2021 corpus), so `startOpmServe` waits until the health check answers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { freePort } from '../../src/cluster/ports.js';
import { RegistryMethod, wire } from '../../src/catalog/grpc/wire.js';

export interface OpmServer {
  /** `127.0.0.1:<port>`, as a CatalogSource's spec.address names it. */
  address: string;
  /** How long opm took from its start until its health check answered. */
  startMs: number;
  stop(): Promise<void>;
}

/** Starts `opm serve <dir>` and resolves once it answers its health check, or rejects with its log. */
export async function startOpmServe(opm: string, dir: string, timeoutMs = 240_000): Promise<OpmServer> {
  const port = await freePort();
  // Its own temporary folder (opm builds its cache there) and no profiling endpoint, so servers
  // started at once by several test runs share nothing (pprof's default is localhost:6060).
  // (--cache-dir would make opm insist on a cache built beforehand.)
  const cache = await mkdtemp(join(tmpdir(), 'bosun-opm-serve-'));
  const child = spawn(
    opm,
    ['serve', dir, '-p', String(port), '--pprof-addr', '', '-t', join(cache, 'termination-log')],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: cache } },
  );
  let log = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-20_000)));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-20_000)));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const address = `127.0.0.1:${port}`;
  const started = Date.now();
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(cache, { recursive: true, force: true });
  };
  try {
    await waitServing(address, child, () => log, started + timeoutMs);
  } catch (err) {
    await stop();
    throw err;
  }
  return { address, startMs: Date.now() - started, stop };
}

async function waitServing(
  address: string,
  child: ChildProcess,
  log: () => string,
  until: number,
): Promise<void> {
  const client = new Client(`dns:${address}`, credentials.createInsecure());
  try {
    while (Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`opm serve exited with ${child.exitCode}:\n${log()}`);
      if (await healthy(client)) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`opm serve did not answer its health check at ${address} in time:\n${log()}`);
  } finally {
    client.close();
  }
}

function healthy(client: Client): Promise<boolean> {
  return new Promise((done) =>
    client.makeUnaryRequest(
      RegistryMethod.HealthCheck,
      (v: { service: string }) => wire.healthCheckRequest.encode(v),
      (b: Buffer) => wire.healthCheckResponse.decode(b),
      { service: 'Registry' },
      new Metadata(),
      { deadline: Date.now() + 2_000 },
      (err, res) => done(!err && res?.status === 1),
    ),
  );
}
