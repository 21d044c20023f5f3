import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allocatorRestartEnv } from '../../../src/cli/allocator.js';
import { ManagerAllocatorEnv } from '../../../src/manager/defaults.js';

describe("the manager's allocator setting", () => {
  it.each([
    [['start'], true],
    [['operator', 'run', '--kubeconfig', 'k'], true],
    [['operator', 'run', '--help'], false],
    [['start', '-h'], false],
    [['catalog', 'serve', 'dir'], false],
    [['operator'], false],
    [[], false],
  ])('bosun %j restarts with it: %s', (argv, restarts) => {
    const env = allocatorRestartEnv(argv, { PATH: '/bin' }, 'linux');
    expect(env !== undefined).toBe(restarts);
    if (env) expect(env).toEqual({ PATH: '/bin', ...ManagerAllocatorEnv });
  });

  it('is left alone where the user set it, asked for the defaults, or the platform has no glibc', () => {
    expect(allocatorRestartEnv(['start'], { MALLOC_MMAP_THRESHOLD_: '65536' }, 'linux')).toBeUndefined();
    expect(allocatorRestartEnv(['start'], { BOSUN_ALLOCATOR: 'default' }, 'linux')).toBeUndefined();
    expect(allocatorRestartEnv(['start'], {}, 'darwin')).toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('bosun operator run, as a process', () => {
  it('runs with the allocator setting in its own environment, under the PID it was started with', async () => {
    // An API server that accepts connections and never answers keeps the manager waiting at start.
    const held: Socket[] = [];
    const server = createServer((s) => held.push(s));
    const port = await new Promise<number>((r) =>
      server.listen(0, '127.0.0.1', () => r((server.address() as { port: number }).port)),
    );
    const dir = await mkdtemp(join(tmpdir(), 'bosun-allocator-'));
    const kubeconfig = join(dir, 'config');
    await writeFile(
      kubeconfig,
      `current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: t}}]\n`,
    );
    const env = { ...process.env };
    delete env.MALLOC_MMAP_THRESHOLD_;
    delete env.BOSUN_ALLOCATOR;
    const bin = new URL('../../../bin/bosun.js', import.meta.url).pathname;
    const child = spawn(process.execPath, [bin, 'operator', 'run', '--kubeconfig', kubeconfig], {
      env,
      stdio: 'ignore',
    });
    try {
      // Once it connects, it has restarted and loaded everything; its environment is then final.
      while (held.length === 0) await new Promise((r) => setTimeout(r, 50));
      const environ = (await readFile(`/proc/${child.pid}/environ`, 'utf8')).split('\0');
      expect(environ).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    } finally {
      child.kill('SIGKILL');
      for (const s of held) s.destroy();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
