/** Runs the real `bosun` command in-process in a temporary working directory. */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.js';
import { tempDir } from '../../support/temp-dir.js';
import { capture } from '../../support/capture.js';

export const repo = join(import.meta.dirname, '../../..');
export const fixtures = join(repo, 'test/fixtures');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function bosun(cwd: string, ...args: string[]): Promise<Run> {
  return runBosun(args, { cwd });
}

/** The same, with a chosen environment (e.g. another XDG_STATE_HOME). */
export async function runBosun(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  const c = capture(opts.env ?? process.env, opts.cwd ?? process.cwd());
  const code = await main(args, c.ctx);
  await new Promise((r) => setImmediate(r)); // let the captured streams deliver
  return { code, stdout: c.stdout, stderr: c.stderr };
}

/**
 * A fresh working directory, optionally holding copies of `paths` (relative to the repository);
 * removed when the test file ends.
 */
export async function workdir(...paths: string[]): Promise<string> {
  const dir = await tempDir('bosun-cli-');
  for (const p of paths) await cp(join(repo, p), join(dir, p.split('/').at(-1)!), { recursive: true });
  return dir;
}

/** The JSON a command printed, loosely typed: tests read whichever fields they check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON output under test
export const json = (r: Run) => JSON.parse(r.stdout) as Record<string, any>;
