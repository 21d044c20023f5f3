import { PassThrough } from 'node:stream';
import type { CommandContext } from '../../src/cli/command.js';

export interface Captured {
  ctx: CommandContext;
  readonly stdout: string;
  readonly stderr: string;
  code?: number;
}

/** A command context whose output is collected, for running `main([...])` in-process in tests. */
export function capture(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Captured {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  err.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return {
    ctx: { stdout: out, stderr: err, cwd, env },
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
  };
}
