/**
 * crane v0.22.1 (github.com/google/go-containerregistry), an image tool that is not Bosun: the
 * tests build bundle and catalog images with it alone and prove Bosun reads them unchanged.
 * Built from its Go module by tools/crane (go.mod and go.sum only: the released command itself
 * is built) and cached like the other Go tools; tests skip, saying why, when it cannot be built.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { type GoProgram, goProgram } from './go-tool.js';

export { run } from './go-tool.js';

export const CraneVersion = 'v0.22.1';

export function craneBinary(opts: { build?: boolean } = {}): Promise<GoProgram> {
  return goProgram(resolve(import.meta.dirname, '../../tools/crane'), {
    name: 'crane',
    kind: 'tools',
    pkg: 'github.com/google/go-containerregistry/cmd/crane',
    build: opts.build,
    log: (l) => process.stderr.write(`[crane] ${l}\n`),
    expected: 'about a minute on two cores',
  });
}

/**
 * An image made with crane alone, as crane.test.ts and the manager's tests build them: a tar of
 * `names` below `dir` (GNU tar, sorted), pushed by `crane append` as a one-layer image (onto an
 * empty OCI base when `oci`, else in Docker's media types), then given `labels` by `crane
 * mutate`. Returns the digest crane reports. `work` holds the tarball; DOCKER_CONFIG points at
 * nothing there, so no credentials of the machine are used.
 */
export async function craneImage(
  crane: string,
  work: string,
  image: { ref: string; dir: string; names: string[]; labels: Record<string, string>; oci: boolean },
): Promise<string> {
  const env = { DOCKER_CONFIG: join(work, 'no-docker-config') };
  const must = async (cmd: string, args: string[]) => {
    const r = await runWithoutInput(cmd, args, work, env);
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${r.out}`);
    return r.stdout.trim();
  };
  const tarball = join(work, `${image.ref.replace(/\W/g, '_')}.tar`);
  await must('tar', ['--sort=name', '-cf', tarball, '-C', image.dir, ...image.names]);
  await must(crane, ['append', '-f', tarball, '-t', image.ref, ...(image.oci ? ['--oci-empty-base'] : [])]);
  const flags = Object.entries(image.labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
  await must(crane, ['mutate', image.ref, ...flags, '-t', image.ref]);
  return must(crane, ['digest', image.ref]);
}

/**
 * Runs a program with no standard input: crane and tar read none, and a pipe they never read
 * breaks (go-tool.ts's run writes to one: EPIPE).
 */
export function runWithoutInput(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number; out: string; stdout: string }>((done) => {
    const child = execFile(cmd, args, { cwd, env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr, stdout }),
    );
    child.stdin?.end();
  });
}
