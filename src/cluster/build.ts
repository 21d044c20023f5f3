import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../util/errors.js';
import { cacheRoot, recipeRoot } from './paths.js';
import { type Component, controlPlaneVersions, versionKey } from './versions.js';

/** What to build, from which recipe module, and what the binary is called once built. */
interface Target {
  component: Component;
  recipe: 'kube' | 'kwok';
  pkg: string;
  /** `go build -o DIR/` names the binary after the package path's last element (without a /vN suffix). */
  output: string;
}

const targets: Target[] = [
  {
    component: 'kube-apiserver',
    recipe: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-apiserver',
    output: 'kube-apiserver',
  },
  {
    component: 'kube-controller-manager',
    recipe: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager',
    output: 'kube-controller-manager',
  },
  {
    component: 'kube-scheduler',
    recipe: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-scheduler',
    output: 'kube-scheduler',
  },
  { component: 'etcd', recipe: 'kube', pkg: 'go.etcd.io/etcd/server/v3', output: 'server' },
  { component: 'kwok', recipe: 'kwok', pkg: 'sigs.k8s.io/kwok/cmd/kwok', output: 'kwok' },
];

export type Binaries = Record<Component, string>;

export interface BuildOptions {
  env?: NodeJS.ProcessEnv;
  /** Called with one line of progress at a time (e.g. to print on a TTY). */
  onProgress?: (line: string) => void;
}

export function binDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'controlplane', versionKey(), 'bin');
}

function binariesIn(dir: string): Binaries {
  return Object.fromEntries(targets.map((t) => [t.component, join(dir, t.component)])) as Binaries;
}

/** The cached binaries, or undefined when they have not been built (completely) yet. */
export async function cachedBinaries(env: NodeJS.ProcessEnv = process.env): Promise<Binaries | undefined> {
  const dir = binDir(env);
  try {
    // The stamp is written last, after every binary is in place.
    await access(join(dir, '.complete'));
    return binariesIn(dir);
  } catch {
    return undefined;
  }
}

/**
 * Returns the control-plane binaries, building them with the local Go toolchain on first use.
 * The build goes to a temporary folder that is renamed into place, so an interrupted build never
 * leaves a half-filled cache; a lock file keeps two concurrent first runs from building twice.
 */
export async function ensureBinaries(opts: BuildOptions = {}): Promise<Binaries> {
  const env = opts.env ?? process.env;
  const cached = await cachedBinaries(env);
  if (cached) return cached;
  const dir = binDir(env);
  const parent = join(dir, '..');
  await mkdir(parent, { recursive: true });
  const release = await lock(join(parent, 'build.lock'), opts.onProgress);
  try {
    const again = await cachedBinaries(env);
    if (again) return again;
    await goBuild(parent, dir, env, opts.onProgress);
    return binariesIn(dir);
  } finally {
    await release();
  }
}

async function goBuild(
  parent: string,
  dir: string,
  env: NodeJS.ProcessEnv,
  onProgress?: (l: string) => void,
) {
  const go = await findGo(env);
  const tmp = join(parent, `bin.tmp-${process.pid}`);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  const logFile = join(parent, 'build.log');
  await writeFile(logFile, '');
  const v = controlPlaneVersions;
  const ldflags = [
    '-s -w',
    `-X k8s.io/component-base/version.gitVersion=${v.kubernetes}`,
    `-X k8s.io/component-base/version.gitMajor=${v.kubernetes.split('.')[0]!.slice(1)}`,
    `-X k8s.io/component-base/version.gitMinor=${v.kubernetes.split('.')[1]}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
  ].join(' ');
  for (const recipe of ['kube', 'kwok'] as const) {
    const pkgs = targets.filter((t) => t.recipe === recipe);
    onProgress?.(
      `building ${pkgs.map((t) => t.component).join(', ')} with ${go} (first use only; log: ${logFile})`,
    );
    const flags = recipe === 'kube' ? ['-ldflags', ldflags] : ['-ldflags', '-s -w'];
    const code = await run(go, ['build', '-trimpath', ...flags, '-o', `${tmp}/`, ...pkgs.map((t) => t.pkg)], {
      cwd: join(recipeRoot, recipe),
      env: { ...env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: env.GOTOOLCHAIN ?? 'local' },
      logFile,
    });
    if (code !== 0) {
      throw new UserError(
        `building the local control plane failed (go build exited ${code}); see ${logFile}`,
      );
    }
    for (const t of pkgs) await rename(join(tmp, t.output), join(tmp, t.component));
  }
  await writeFile(join(tmp, '.complete'), `${versionKey()}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

/** The Go toolchain: `$BOSUN_GO` if set, else `go` on PATH. */
async function findGo(env: NodeJS.ProcessEnv): Promise<string> {
  const candidates = env.BOSUN_GO
    ? [env.BOSUN_GO]
    : (env.PATH ?? '')
        .split(':')
        .filter(Boolean)
        .map((p) => join(p, 'go'));
  for (const c of candidates) {
    try {
      await access(c, constants.X_OK);
      return c;
    } catch {}
  }
  throw new UserError(
    'the local control plane is built from source with Go, and no `go` was found on PATH (or at $BOSUN_GO).\n' +
      'Install Go 1.25 or newer (https://go.dev/doc/install), or point KUBECONFIG at an existing cluster.',
  );
}

function run(
  cmd: string,
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; logFile: string },
): Promise<number> {
  return new Promise((resolve, reject) => {
    void open(o.logFile, 'a').then((fh) => {
      const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', fh.fd, fh.fd] });
      child.on('error', (err) => {
        void fh.close();
        reject(err);
      });
      child.on('exit', (code) => {
        void fh.close();
        resolve(code ?? 1);
      });
    }, reject);
  });
}

/**
 * An exclusive lock by creating a file with O_EXCL; a lock left by a process that no longer runs
 * is taken over. Waits (polling) while another live process holds it.
 */
async function lock(path: string, onProgress?: (l: string) => void): Promise<() => Promise<void>> {
  let told = false;
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return () => rm(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      if (!Number.isFinite(holder) || !isAlive(holder)) {
        await rm(path, { force: true });
        continue;
      }
      if (!told) onProgress?.(`waiting for another build of the control plane (pid ${holder}) to finish`);
      told = true;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
