/**
 * Go programs the tests use as oracles: small ones under tools/ that answer questions with the
 * libraries OLM and opm use (blang/semver, distribution/reference), and OLM's own resolver
 * (the olm-oracle beside the clone). Each is built once per source version (a hash of its go.mod,
 * go.sum and main.go) into the Bosun cache directory, with modules from the Go module proxy on
 * first use. Where `go` is missing or the build fails, the result says why, for the test to skip
 * with.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { cacheRoot } from '../../src/cluster/paths.js';

export type GoProgram = { ok: true; path: string } | { ok: false; why: string };

export interface BuildOptions {
  /** Names the program in messages and in the cache (`<cache>/<kind>/<name>-<hash>`). */
  name: string;
  /** The cache folder's kind: `tools` for tools/, `olm-oracle` for the oracle. */
  kind: string;
  /** With `false`, only a program already built is used. */
  build?: boolean;
  /** Progress lines for builds long enough to need them (every 30 s while building). */
  log?: (line: string) => void;
  /** How long a cold build takes, for the first progress line. */
  expected?: string;
  /** Go build tags (`-tags`), part of the cache key. */
  tags?: string[];
  /**
   * Build this main package of a required module (e.g. a released command) instead of the
   * source folder's own main.go; the folder then holds only go.mod and go.sum.
   */
  pkg?: string;
  /**
   * Build main.go inside a released module instead of a module of its own: for a program that
   * imports that module's internal packages, which Go allows only from within it. The module is
   * downloaded through the module proxy, copied unmodified from the module cache to a work folder,
   * and main.go mapped into it as the package `dir` with `go build -overlay`, so none of the
   * module's code is copied into Bosun's tree. The source folder then holds only main.go.
   */
  inside?: { module: string; version: string; dir: string };
}

const KEY_FILES = ['go.mod', 'go.sum', 'main.go'];

/** The program built from the Go module in `source`: from the cache, else built, else why not. */
export async function goProgram(source: string, opts: BuildOptions): Promise<GoProgram> {
  const keyFiles = opts.inside
    ? ['main.go']
    : opts.pkg
      ? KEY_FILES.filter((f) => f !== 'main.go')
      : KEY_FILES;
  const missing = keyFiles.filter((f) => !existsSync(join(source, f)));
  if (missing.length > 0)
    return { ok: false, why: `${source} has no ${missing.join(', ')} to build ${opts.name}` };
  const hash = createHash('sha256');
  for (const f of keyFiles) hash.update(`${f}\0`).update(await readFile(join(source, f)));
  if (opts.pkg) hash.update(`pkg\0${opts.pkg}`);
  if (opts.inside) hash.update(`inside\0${opts.inside.module}@${opts.inside.version}\0${opts.inside.dir}`);
  const tags = opts.tags?.length ? [`-tags=${opts.tags.join(',')}`] : [];
  hash.update(tags.join(''));
  const path = join(cacheRoot(), opts.kind, `${opts.name}-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(path)) return { ok: true, path };
  if (opts.build === false)
    return { ok: false, why: `${opts.name} is not built yet (it would be cached at ${path})` };

  const go = await run('go', ['version'], source).catch(() => undefined);
  if (go === undefined || go.code !== 0)
    return { ok: false, why: `${opts.name} not built: \`go\` is not installed` };
  await mkdir(join(path, '..'), { recursive: true });
  // Built to a temporary name and renamed, so a run cut short never leaves half a binary.
  const partial = `${path}.${process.pid}.partial`;
  const started = Date.now();
  const log = opts.log;
  log?.(`building ${source} with ${go.out.trim()}${opts.expected ? ` (${opts.expected} when cold)` : ''}`);
  const ticker = log
    ? setInterval(() => log(`still building, ${Math.round((Date.now() - started) / 1000)} s so far`), 30_000)
    : undefined;
  try {
    const built = opts.inside
      ? await buildInside(source, opts.inside, tags, partial)
      : await run('go', ['build', ...tags, '-o', partial, opts.pkg ?? '.'], source, {
          GOFLAGS: '-mod=mod',
          GOTOOLCHAIN: 'local',
        });
    if (built.code !== 0) {
      await rm(partial, { force: true });
      return { ok: false, why: `${opts.name} not built: go build failed: ${built.out.trim().slice(-2000)}` };
    }
    await rename(partial, path);
  } finally {
    clearInterval(ticker);
  }
  log?.(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { ok: true, path };
}

/** `go build` of source/main.go as the package `inside.dir` of a work copy of `inside.module`. */
async function buildInside(
  source: string,
  inside: NonNullable<BuildOptions['inside']>,
  tags: string[],
  output: string,
): Promise<{ code: number; out: string }> {
  const env = { GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
  const work = await mkdtemp(join(tmpdir(), 'bosun-go-inside-'));
  try {
    const dl = await run('go', ['mod', 'download', '-json', `${inside.module}@${inside.version}`], work, env);
    if (dl.code !== 0) return dl;
    const { Dir } = JSON.parse(dl.stdout) as { Dir?: string };
    if (!Dir)
      return { code: 1, out: `go mod download named no folder for ${inside.module}@${inside.version}` };
    const copy = join(work, 'module');
    await cp(Dir, copy, { recursive: true });
    // The module cache's files are read-only; the copy is removed afterwards, so it must not be.
    await chmodTree(copy);
    const overlay = join(work, 'overlay.json');
    await writeFile(
      overlay,
      JSON.stringify({ Replace: { [join(copy, inside.dir, 'main.go')]: join(source, 'main.go') } }),
    );
    // -mod=readonly: the module builds with its own go.mod and go.sum, as released.
    return await run('go', ['build', ...tags, `-overlay=${overlay}`, '-o', output, `./${inside.dir}`], copy, {
      ...env,
      GOFLAGS: '-mod=readonly',
    });
  } finally {
    await chmodTree(work).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

async function chmodTree(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    await chmod(join(e.parentPath, e.name), e.isDirectory() ? 0o755 : 0o644);
  }
}

const toolsDir = resolve(import.meta.dirname, '../../tools');

/** The built program of tools/<name>, or why it cannot be built here. */
export function goTool(name: string): Promise<GoProgram> {
  return goProgram(join(toolsDir, name), { name, kind: 'tools' });
}

/** Runs a command to completion; stdout and stderr together in `out`. */
export function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
  input?: string,
): Promise<{ code: number; out: string; stdout: string }> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? -1, out: stdout + stderr, stdout }));
    child.stdin.end(input ?? '');
  });
}

/** A running tool that talks JSON lines: requests answered one by one, in order. */
export class GoTool<Request, Answer> {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((a: Answer) => void)[] = [];

  constructor(path: string) {
    this.child = spawn(path, [], { stdio: 'pipe' });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.waiting.shift()?.(JSON.parse(line) as Answer);
    });
  }

  ask(req: Request): Promise<Answer> {
    return new Promise((done) => {
      this.waiting.push(done);
      this.child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
