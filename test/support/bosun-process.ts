/**
 * The `bosun` command in a process of its own, as a user runs it: bin/bosun.js on the Node that
 * runs the tests, loading dist/ (which the integration run's global setup rebuilds when a source
 * is newer: test/support/bosun-build.ts). For what only a process shows: a manager killed with
 * SIGKILL, frozen, or left running while the API server restarts, a server's output.
 */
import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import { bosunBin } from './bosun-build.js';

export function spawnBosun(args: string[], opts: { stdio?: StdioOptions; cwd?: string } = {}): ChildProcess {
  return spawn(process.execPath, [bosunBin, ...args], {
    stdio: opts.stdio ?? 'pipe',
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
}
