/**
 * One docker-registry process (Debian's `docker-registry`, the distribution project's registry)
 * on 127.0.0.1, from a config of base lines plus what its kind adds. Free of vitest, so the
 * benchmarks start registries with it as well as the tests (test/support/registry.ts adds the
 * kinds, the apt install and the cleanup at the end of a test file).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';

export const RegistryBinary = '/usr/bin/docker-registry';

/** The config every registry starts from: quiet logs, the storage folder, the address. */
export function baseRegistryConfig(storage: string, host: string): string[] {
  return [
    'version: 0.1',
    'log:',
    '  level: error',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${storage}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${host}`,
    // A fixed secret, so uploads begun before a restart could be resumed by the same registry.
    '  secret: bosun-test-registry',
  ];
}

export interface RegistryProcess {
  /** Starts the registry and resolves once it accepts connections (10 s at most). */
  start(): Promise<void>;
  /** Ends the process (the registry-down case); `start()` brings it back on the same port. */
  stop(): Promise<void>;
}

/** A registry run from `config` (written to `dir/config.yml`), listening at `host` (127.0.0.1:port). */
export async function registryProcess(
  dir: string,
  config: readonly string[],
  host: string,
): Promise<RegistryProcess> {
  const file = join(dir, 'config.yml');
  await writeFile(file, `${config.join('\n')}\n`);
  const port = Number(host.slice(host.lastIndexOf(':') + 1));
  let child: ChildProcess | undefined;
  return {
    async start() {
      let output = '';
      const started = spawn(RegistryBinary, ['serve', file], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      const keep = (d: Buffer) => (output = (output + d.toString()).slice(-4000));
      started.stdout!.on('data', keep);
      started.stderr!.on('data', keep);
      const deadline = Date.now() + 10_000;
      while (!(await listening(port))) {
        if (started.exitCode !== null || Date.now() > deadline)
          throw new Error(`docker-registry did not start on ${host}: ${output}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGTERM');
      await exited;
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
