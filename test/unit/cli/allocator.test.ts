import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allocatorRestart } from '../../../src/cli/allocator.js';
import { ManagerAllocatorEnv, ManagerHeapFlags } from '../../../src/manager/defaults.js';

describe("the manager's memory settings", () => {
  it.each([
    [['start'], true],
    [['operator', 'run', '--kubeconfig', 'k'], true],
    [['operator', 'run', '--help'], false],
    [['start', '-h'], false],
    [['catalog', 'serve', 'dir'], false],
    [['operator'], false],
    [[], false],
  ])('bosun %j restarts with them: %s', (argv, restarts) => {
    const restart = allocatorRestart(argv, { PATH: '/bin' }, ['--enable-source-maps'], 'linux');
    expect(restart !== undefined).toBe(restarts);
    if (restart) {
      expect(restart.env).toEqual({ PATH: '/bin', ...ManagerAllocatorEnv });
      // Ours first: an option of the same name given after it would win.
      expect(restart.execArgv).toEqual([...ManagerHeapFlags, '--enable-source-maps']);
    }
  });

  it('keeps the allocator variable the user set, and still sets the heap', () => {
    const restart = allocatorRestart(['start'], { MALLOC_MMAP_THRESHOLD_: '65536' }, [], 'linux');
    expect(restart).toEqual({ env: { MALLOC_MMAP_THRESHOLD_: '65536' }, execArgv: [...ManagerHeapFlags] });
  });

  it.each([
    ['on the command line', { MALLOC_MMAP_THRESHOLD_: '131072' }, ['--max-semi-space-size=8']],
    ['with underscores', { MALLOC_MMAP_THRESHOLD_: '131072' }, ['--max_semi_space_size=8']],
    [
      'in NODE_OPTIONS',
      { MALLOC_MMAP_THRESHOLD_: '131072', NODE_OPTIONS: '--x --max-semi-space-size=8' },
      [],
    ],
  ])('keeps a young generation size the user gave %s', (_how, env, execArgv) => {
    expect(allocatorRestart(['start'], env, execArgv, 'linux')).toBeUndefined();
  });

  it('sets only the heap where glibc is not the C library, and nothing when asked for the defaults', () => {
    expect(allocatorRestart(['start'], {}, [], 'darwin')).toEqual({
      env: {},
      execArgv: [...ManagerHeapFlags],
    });
    expect(allocatorRestart(['start'], { BOSUN_ALLOCATOR: 'default' }, [], 'linux')).toBeUndefined();
  });

  it('restarts once: a process restarted with them does not restart again', () => {
    const first = allocatorRestart(['operator', 'run'], { PATH: '/bin' }, [], 'linux')!;
    expect(allocatorRestart(['operator', 'run'], first.env, first.execArgv, 'linux')).toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('bosun operator run, as a process', () => {
  it('runs with the allocator setting in its own environment and the heap flags on its command line, under the PID it was started with', async () => {
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
      const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0');
      expect(cmdline.slice(1, 1 + ManagerHeapFlags.length)).toEqual([...ManagerHeapFlags]);
    } finally {
      child.kill('SIGKILL');
      for (const s of held) s.destroy();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
