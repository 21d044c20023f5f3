/**
 * The container image's runtime stage, without a container engine: bubblewrap (Debian's
 * `bubblewrap`, the sandbox Flatpak uses) runs the image's ENTRYPOINT and CMD in a mount, PID,
 * IPC and UTS namespace of their own, as the image's numeric USER (a real uid of this machine,
 * not only one inside a user namespace), with a root filesystem that is read-only but for the
 * image's VOLUMEs, as a pod with `readOnlyRootFilesystem` and an emptyDir on /tmp has it:
 * - the image's files: the production install bound read-only where its COPY lines put it;
 * - the base image's: this machine's /usr and /etc (Debian 12, as the node:24-bookworm-slim base
 *   is) read-only, and the Node that runs the tests at /usr/local/bin/node, where the Node images
 *   have theirs;
 * - what the platform adds: the volumes, the ServiceAccount files, the environment a container
 *   runtime sets (PATH, HOME=/ for a uid without a passwd entry, HOSTNAME) and the image's ENV.
 * The network is this machine's: the manager reaches the local control plane on 127.0.0.1.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import type { RuntimeImage } from './dockerfile.js';
import { aptInstalled } from './apt.js';

const Bwrap = '/usr/bin/bwrap';

/** PATH as Docker and containerd set it when the image sets none (the Node images set none). */
const RuntimePath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface SandboxSpec {
  image: RuntimeImage;
  /** The host folder holding the production install the image's COPY lines copy. */
  installed: string;
  /** The Node binary to put at /usr/local/bin/node. */
  node: string;
  /** Each VOLUME of the image: the host folder mounted there, writable. */
  volumes: Record<string, string>;
  /** Files or folders mounted read-only at these paths (the ServiceAccount's). */
  mounts: Record<string, string>;
  /** Environment the platform adds (KUBERNETES_SERVICE_HOST, ...). */
  env: Record<string, string>;
  /** The arguments after ENTRYPOINT: the image's CMD, or a Deployment's args. */
  args: string[];
}

/** bubblewrap's arguments for the spec, then the command. */
export function sandboxArgs(spec: SandboxSpec): string[] {
  const { image } = spec;
  const missing = image.volumes.filter((v) => !(v in spec.volumes));
  if (missing.length > 0) throw new Error(`no host folder for the image's VOLUME ${missing.join(', ')}`);
  const env: Record<string, string> = {
    PATH: RuntimePath,
    HOME: '/',
    HOSTNAME: 'bosun',
    ...image.env,
    ...spec.env,
  };
  return [
    ...['--unshare-user', '--uid', String(image.user.uid), '--gid', String(image.user.gid)],
    // PID 1 in its own namespace, as in a container: no reaper of bubblewrap's in between.
    ...['--unshare-pid', '--as-pid-1', '--unshare-ipc', '--unshare-uts', '--hostname', env.HOSTNAME!],
    ...['--die-with-parent', '--new-session'],
    ...['--ro-bind', '/usr', '/usr', '--tmpfs', '/usr/local'],
    ...['--ro-bind', spec.node, '/usr/local/bin/node', '--remount-ro', '/usr/local'],
    ...['bin', 'lib', 'lib64', 'sbin'].flatMap((d) => ['--symlink', `usr/${d}`, `/${d}`]),
    ...['--ro-bind', '/etc', '/etc'],
    ...image.copies.flatMap((c) => ['--ro-bind', spec.installed, c.dest]),
    ...Object.entries(spec.mounts).flatMap(([at, from]) => ['--ro-bind', from, at]),
    ...['--proc', '/proc', '--dev', '/dev'],
    ...image.volumes.flatMap((v) => ['--bind', spec.volumes[v]!, v]),
    // Everything else, the root included, is read-only: a write there fails with EROFS.
    ...['--remount-ro', '/'],
    ...['--chdir', image.workdir, '--clearenv'],
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    // The sandboxed process's PID on this machine, to signal it as a kubelet signals PID 1.
    ...['--json-status-fd', '3'],
    '--',
    ...image.entrypoint,
    ...spec.args,
  ];
}

export interface Sandboxed {
  /** bubblewrap itself. */
  bwrap: ChildProcessWithoutNullStreams;
  /** The entrypoint's PID on this machine, once bubblewrap has started it. */
  pid: Promise<number>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the entrypoint's exit code (bubblewrap exits with it). */
  exited: Promise<number | null>;
}

/** Runs the spec under bubblewrap as the image's user. */
export function startSandboxed(spec: SandboxSpec): Sandboxed {
  const bwrap = spawn(Bwrap, sandboxArgs(spec), {
    uid: spec.image.user.uid,
    gid: spec.image.user.gid,
    env: {},
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  }) as ChildProcessWithoutNullStreams;
  let out = '';
  let err = '';
  bwrap.stdout.on('data', (d: Buffer) => (out += d.toString()));
  bwrap.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const status = bwrap.stdio[3] as NodeJS.ReadableStream;
  const pid = new Promise<number>((resolve, reject) => {
    let text = '';
    status.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    bwrap.once('exit', () => reject(new Error(`bubblewrap exited before starting the entrypoint:\n${err}`)));
  });
  pid.catch(() => undefined);
  const exited = new Promise<number | null>((r) => bwrap.once('exit', (code) => r(code)));
  return { bwrap, pid, stdout: () => out, stderr: () => err, exited };
}

let checked: Promise<string | undefined> | undefined;

/**
 * Undefined when bubblewrap can run a sandbox here as `uid`; otherwise why not (it is installed
 * with apt-get when missing and the tests run as root).
 */
export function sandboxUnavailable(uid: number): Promise<string | undefined> {
  checked ??= (async () => {
    if (process.getuid?.() !== 0)
      return 'the image entrypoint test starts bubblewrap as the image`s user, which takes root';
    const missing = await aptInstalled(['bubblewrap'], [Bwrap], 'the image entrypoint test needs');
    if (missing) return missing;
    const probe = spawnSync(
      Bwrap,
      ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--', '/bin/true'],
      { uid, gid: uid, encoding: 'utf8', env: {} },
    );
    return probe.status === 0
      ? undefined
      : `bubblewrap cannot make a sandbox here as uid ${uid} (user namespaces disabled?): ${probe.stderr.trim()}`;
  })();
  return checked;
}
