/**
 * Reading a catalog from a registry server over gRPC (`sourceType: grpc` with `spec.address`),
 * from opm v1.73.0's own `opm serve` on 127.0.0.1 (tools/opm, built on first use): the 2021
 * OperatorHub corpus imported as `bosun catalog import --skip-invalid` writes it
 * (BOSUN_CORPUS_DIR), else catalogs/bosun-samples.
 * - registry.opm_serve_ready: from opm serve's start until its health check answers (it builds
 *   its cache of the catalog first);
 * - registry.read: fetchRegistryCatalog, from the health check to the validated DeclarativeConfig
 *   (the median of 3 reads, the fastest and slowest in its inputs);
 * - registry.read.received: what the server sent, in MiB (messages with their gRPC framing), with
 *   the number of messages and calls in its inputs;
 * - registry.read.heap: the JavaScript heap the read catalog holds, once collected (needs
 *   --expose-gc, which `npm run bench` gives).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { fetchRegistryCatalog, type RegistryCatalog } from '../../src/catalog/grpc/fetch.js';
import { capture } from '../support/capture.js';
import { opmBinary } from '../support/opm.js';
import { startOpmServe } from '../support/opm-serve.js';
import type { Emit } from './run.js';
import { median, mib, round } from './support.js';

const repo = join(import.meta.dirname, '../..');

export default async function registryBench(emit: Emit): Promise<void> {
  const opm = await opmBinary();
  if (!opm.ok) {
    process.stderr.write(`registry: skipped; ${opm.why}\n`);
    return;
  }
  const corpus = process.env.BOSUN_CORPUS_DIR;
  const work = await mkdtemp(join(tmpdir(), 'bosun-bench-registry-'));
  try {
    await readCatalog(emit, opm.path, work, corpus);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function readCatalog(emit: Emit, opm: string, work: string, corpus: string | undefined) {
  let dir = join(repo, 'catalogs/bosun-samples');
  let catalog = 'catalogs/bosun-samples';
  if (corpus && existsSync(corpus)) {
    dir = join(work, 'catalog');
    const c = capture();
    const code = await main(['catalog', 'import', '--skip-invalid', corpus, dir], c.ctx);
    if (code !== 0) throw new Error(`catalog import failed: ${c.stderr.slice(-2000)}`);
    catalog = 'the 2021 OperatorHub corpus, imported';
  } else {
    process.stderr.write('registry: BOSUN_CORPUS_DIR is not set; reading catalogs/bosun-samples instead\n');
  }

  const server = await startOpmServe(opm, dir);
  try {
    emit({ name: 'registry.opm_serve_ready', value: server.startMs, unit: 'ms', inputs: { catalog } });
    const times: number[] = [];
    let last: RegistryCatalog | undefined;
    for (let i = 0; i < 3; i++) {
      last = undefined; // the previous read is garbage before the next one starts
      const t0 = performance.now();
      const read = await fetchRegistryCatalog(server.address);
      times.push(performance.now() - t0);
      if (!read.ok) throw new Error(read.errors.message);
      last = read.value;
    }
    const { config, received } = last!;
    const inputs = { catalog, packages: config.packages.length, bundles: config.bundles.length };
    emit({
      name: 'registry.read',
      value: round(median(times)),
      unit: 'ms',
      inputs: { ...inputs, fastest: round(Math.min(...times)), slowest: round(Math.max(...times)) },
    });
    emit({
      name: 'registry.read.received',
      value: mib(received.bytes),
      unit: 'MiB',
      inputs: { ...inputs, messages: received.messages, calls: received.calls },
    });
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      last = undefined;
      gc();
      const before = process.memoryUsage().heapUsed;
      const read = await fetchRegistryCatalog(server.address);
      gc();
      const held = process.memoryUsage().heapUsed - before;
      if (read.ok) emit({ name: 'registry.read.heap', value: mib(held), unit: 'MiB', inputs });
    }
  } finally {
    await server.stop();
  }
}
