/**
 * OLM v0's own resolver as a test oracle: the olm-oracle program (OLM v0.46.0's resolver used as
 * a Go library; see its README) kept beside the clone at ../shared/olm-oracle and named by
 * BOSUN_OLM_ORACLE_DIR. It is not part of Bosun: it is built from there with the Go toolchain and
 * cached under the Bosun cache directory, keyed by a hash of its go.mod, go.sum and main.go so
 * that a changed oracle is rebuilt. A cold build takes about 12 minutes on two cores.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot } from '../../../src/cluster/paths.js';

export const ORACLE_DIR_ENV = 'BOSUN_OLM_ORACLE_DIR';

export type OracleBinary = { ok: true; path: string; dir: string } | { ok: false; why: string };

const KEY_FILES = ['go.mod', 'go.sum', 'main.go'];

/** Where the oracle built from `dir` is cached, or why there is none to build. */
async function cachedPath(dir: string): Promise<OracleBinary> {
  const missing = KEY_FILES.filter((f) => !existsSync(join(dir, f)));
  if (missing.length > 0)
    return { ok: false, why: `${dir} is not the olm-oracle (no ${missing.join(', ')})` };
  const hash = createHash('sha256');
  for (const f of KEY_FILES) hash.update(`${f}\0`).update(await readFile(join(dir, f)));
  return {
    ok: true,
    dir,
    path: join(cacheRoot(), 'olm-oracle', hash.digest('hex').slice(0, 16), 'olm-oracle'),
  };
}

/**
 * The oracle binary: from the cache, else built (with progress lines on `log`), else why not.
 * With `build: false` only a cached binary is used.
 */
export async function oracleBinary(
  opts: { build?: boolean; log?: (line: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<OracleBinary> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((l: string) => process.stderr.write(`[olm oracle] ${l}\n`));
  const dir = env[ORACLE_DIR_ENV];
  if (!dir) {
    return {
      ok: false,
      why: `set ${ORACLE_DIR_ENV} to the olm-oracle folder (../shared/olm-oracle beside the clone)`,
    };
  }
  const target = await cachedPath(dir);
  if (!target.ok || existsSync(target.path)) return target;
  if (opts.build === false) {
    return {
      ok: false,
      why: `the olm-oracle in ${dir} is not built yet (it would be cached at ${target.path})`,
    };
  }
  const go = await run('go', ['version'], dir).catch(() => null);
  if (!go || go.code !== 0)
    return { ok: false, why: 'the Go toolchain (go) is not on PATH to build the olm-oracle' };

  await mkdir(join(target.path, '..'), { recursive: true });
  const partial = `${target.path}.partial-${process.pid}`;
  const started = Date.now();
  log(`building ${dir} into ${target.path} with ${go.out.trim()} (about 12 minutes on two cores when cold)`);
  const ticker = setInterval(
    () => log(`still building, ${Math.round((Date.now() - started) / 1000)} s so far`),
    30_000,
  );
  try {
    const built = await run('go', ['build', '-o', partial, '.'], dir);
    if (built.code !== 0) {
      await rm(partial, { force: true });
      return {
        ok: false,
        why: `go build in ${dir} failed (exit ${built.code}): ${built.out.trim().slice(-2000)}`,
      };
    }
    await rename(partial, target.path);
  } finally {
    clearInterval(ticker);
  }
  log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return target;
}

/** Runs a command to completion; stdout and stderr together. */
export function run(
  cmd: string,
  args: string[],
  cwd: string,
  input?: string,
): Promise<{ code: number; out: string; stdout: string }> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? -1, out: stdout + stderr, stdout }));
    child.stdin.end(input ?? '');
  });
}
