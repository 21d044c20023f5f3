/**
 * Bosun as users install it: `npm pack` of this repository (which runs the `prepare` build, as
 * publishing does), that tarball installed with `npm install -g` into a prefix of its own (so
 * production dependencies only), and its commands run from there with a PATH and a working
 * directory that reach nothing of the repository but the Node that runs them. Used by
 * test/integration/cli/production-install.test.ts and the `install` benchmark.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { delimiter, dirname, join, resolve, sep } from 'node:path';

export const repo = resolve(import.meta.dirname, '../..');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Packed {
  tarball: string;
  /** The tarball's size. */
  bytes: number;
  unpackedBytes: number;
  /** Every path in the tarball, relative to the package root. */
  files: string[];
}

export interface Installed {
  prefix: string;
  /** `<prefix>/bin`, where npm links the package's bins. */
  bin: string;
  /** The installed package: `<prefix>/lib/node_modules/bosun`. */
  packageDir: string;
  /** What its commands run with: PATH `<prefix>/bin`, Node's folder, the system's PATH. */
  env: NodeJS.ProcessEnv;
}

/**
 * The system's PATH: the folders of PATH but those npm and npx put there for the repository
 * (its node_modules/.bin) or for themselves, so that nothing there is found by accident.
 */
function systemPath(): string[] {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => p && !p.startsWith(repo + sep) && !p.split(sep).includes('node_modules'));
}

/**
 * An environment with `first` at the head of PATH, then the folder of the Node running this
 * process (the pinned Node 24), then the system's PATH. npm's variables (the npx that started
 * the tests sets npm_config_* ones, which would steer the npm run here), NODE_OPTIONS and
 * NODE_PATH are left out, and so is KUBECONFIG: nothing reaches a cluster unless told to.
 */
export function cleanEnv(first: string[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|NODE_OPTIONS$|NODE_PATH$|KUBECONFIG$|VITEST|INIT_CWD$)/i.test(k)) continue;
    env[k] = v;
  }
  env.PATH = [...first, dirname(process.execPath), ...systemPath()].join(delimiter);
  return env;
}

/** Runs `file` with `args`, collecting its output; resolves with the exit code, never rejects. */
export function run(
  file: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Run> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 2 ** 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr: err && typeof err.code !== 'number' ? `${stderr}${err}` : stderr });
      },
    );
  });
}

/** `npm pack` of the repository into `dest`: the tarball `npm publish` would upload. */
export async function pack(dest: string): Promise<Packed> {
  await mkdir(dest, { recursive: true });
  const r = await run('npm', ['pack', '--pack-destination', dest, '--json'], {
    cwd: repo,
    env: cleanEnv(),
    timeoutMs: 600_000,
  });
  if (r.code !== 0) throw new Error(`npm pack failed (${r.code}):\n${r.stderr}\n${r.stdout}`);
  // The prepare script's output may come first; the report is the JSON list after it.
  const start = r.stdout.search(/^\[/m);
  const [report] = JSON.parse(r.stdout.slice(start)) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  return {
    tarball: join(dest, report!.filename),
    bytes: report!.size,
    unpackedBytes: report!.unpackedSize,
    files: report!.files.map((f) => f.path),
  };
}

/**
 * `npm install -g --prefix <prefix> <tarball>`, as a user installs Bosun: production dependencies
 * only, nothing run from the repository. The npm registry is asked for what npm's cache lacks.
 */
export async function installGlobal(tarball: string, prefix: string): Promise<Installed> {
  await mkdir(prefix, { recursive: true });
  const r = await run(
    'npm',
    ['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund'],
    { cwd: prefix, env: cleanEnv(), timeoutMs: 900_000 },
  );
  if (r.code !== 0) throw new Error(`npm install -g failed (${r.code}):\n${r.stderr}\n${r.stdout}`);
  const bin = join(prefix, 'bin');
  return { prefix, bin, packageDir: join(prefix, 'lib/node_modules/bosun'), env: cleanEnv([bin]) };
}

/** The installed `bosun`, found on PATH as a shell finds it, run in `cwd`. */
export function bosun(installed: Installed, cwd: string, args: string[], timeoutMs?: number): Promise<Run> {
  return run('bosun', args, { cwd, env: installed.env, ...(timeoutMs ? { timeoutMs } : {}) });
}

/** The installed `bosun` as a long-running process (a server, the manager), its output collected. */
export function startBosun(
  installed: Installed,
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcessWithoutNullStreams; stdout: () => string; stderr: () => string } {
  const child = spawn('bosun', args, { cwd, env: { ...installed.env, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { child, stdout: () => out, stderr: () => err };
}
