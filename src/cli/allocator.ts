/**
 * The memory allocator setting the manager runs with, whoever starts it (`npm start`, a global
 * install, the container image, `kubectl bosun`).
 *
 * glibc raises its mmap threshold each time a large block is freed (an HTTP body, an icon, a
 * catalog file): later blocks up to that size then come from the heap, whose freed pages it
 * keeps. Fixed at its initial 128 KiB (ManagerAllocatorEnv), blocks that large are mapped and
 * unmapped, and a manager serving the corpus catalog settles about 20 MiB lower
 * (`npm run bench -- browse`). glibc reads the variable only when a process starts, so a command
 * that runs the manager replaces its own process image once, before loading anything, with the
 * variable set (`process.execve`: same PID, so signals and a container's PID 1 are unchanged).
 * A variable the user set is left as it is; BOSUN_ALLOCATOR=default keeps glibc's defaults.
 * Other C libraries ignore it.
 */
import { ManagerAllocatorEnv } from '../manager/defaults.js';

/** Whether `argv` (after `bosun`) runs the manager: `bosun start`, `bosun operator run`. */
function runsManager(argv: readonly string[]): boolean {
  if (argv.includes('--help') || argv.includes('-h')) return false;
  return argv[0] === 'start' || (argv[0] === 'operator' && argv[1] === 'run');
}

/** The environment to restart with, or undefined when this process should go on as it is. */
export function allocatorRestartEnv(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): NodeJS.ProcessEnv | undefined {
  if (platform !== 'linux' || !runsManager(argv) || env.BOSUN_ALLOCATOR === 'default') return undefined;
  if (Object.keys(ManagerAllocatorEnv).some((k) => env[k] !== undefined)) return undefined;
  return { ...env, ...ManagerAllocatorEnv };
}

/** Restarts this process with the manager's allocator setting when it runs the manager (see above). */
export function tuneAllocator(argv: readonly string[]): void {
  const env = allocatorRestartEnv(argv, process.env);
  if (!env || !process.execve) return;
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env);
}
