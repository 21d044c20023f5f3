/**
 * `opm serve` (opm v1.73.0, test/support/opm.ts) serving a catalog directory over gRPC on a free
 * port of 127.0.0.1, for tests and benchmarks of the registry client. It builds its cache when it
 * starts (half a minute or more for the 2021 corpus), so `startOpmServe` waits until the health
 * check answers. A large catalog's cache is built once by opm itself (`--cache-only`) and kept in
 * Bosun's cache folder under the hash of the catalog's files, so later runs start opm on it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { cacheRoot } from '../../src/cluster/paths.js';
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
  const kept = await keptCache(opm, dir, cache);
  const child = spawn(
    opm,
    [
      'serve',
      dir,
      '-p',
      String(port),
      '--pprof-addr',
      '',
      '-t',
      join(cache, 'termination-log'),
      // A kept cache is only read: opm checks it matches the catalog (--cache-enforce-integrity,
      // its default with --cache-dir) and exits if not, so runs at once can share it.
      ...(kept ? ['--cache-dir', kept] : []),
    ],
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

/** Catalogs smaller than this build opm's cache in a moment: theirs is not kept. */
const KEEP_CACHE_FROM_BYTES = 8 * 2 ** 20;

/**
 * opm's cache of the catalog in `dir`, built by opm and kept under the hash of the catalog's
 * files, or undefined for a small catalog. Built into `scratch` and renamed into place, so a run
 * never sees half a cache; a run that loses the race to rename uses the winner's.
 */
async function keptCache(opm: string, dir: string, scratch: string): Promise<string | undefined> {
  const files = await catalogFiles(dir);
  let bytes = 0;
  for (const f of files) bytes += (await stat(f)).size;
  if (bytes < KEEP_CACHE_FROM_BYTES) return undefined;
  const hash = createHash('sha256').update(opm);
  for (const f of files)
    hash
      .update(relative(dir, f))
      .update('\0')
      .update(await readFile(f))
      .update('\0');
  const kept = join(cacheRoot(), 'opm-serve', hash.digest('hex').slice(0, 16));
  if (existsSync(kept)) return kept;
  const building = join(scratch, 'cache');
  await promisify(execFile)(opm, ['serve', dir, '--cache-dir', building, '--cache-only'], {
    env: { ...process.env, TMPDIR: scratch },
    maxBuffer: 64 * 2 ** 20,
  });
  await mkdir(join(cacheRoot(), 'opm-serve'), { recursive: true });
  await rename(building, kept).catch((err: NodeJS.ErrnoException) => {
    if (!existsSync(kept)) throw err;
  });
  return kept;
}

/** Every file under `dir`, sorted (what opm reads of a catalog). */
async function catalogFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}
