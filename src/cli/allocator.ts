/**
 * The memory settings the manager runs with, whoever starts it (`npm start`, a global install,
 * the container image, `kubectl bosun`): glibc's and V8's.
 *
 * glibc raises its mmap threshold each time a large block is freed (an HTTP body, an icon, a
 * catalog file): later blocks up to that size then come from the heap, whose freed pages it
 * keeps. Fixed at its initial 128 KiB (ManagerAllocatorEnv), blocks that large are mapped and
 * unmapped, and a manager serving the corpus catalog settles about 20 MiB lower
 * (`npm run bench -- browse`). glibc reads the variable only when a process starts.
 *
 * V8 grows its young generation up to 2 × 32 MiB semi-spaces under allocation bursts (a catalog
 * pulled, parsed and validated) and keeps it resident: in the `oci` benchmark the manager's young
 * generation held 28 MiB at rest and 52 MiB while it read the corpus catalog image, and the
 * pull's buffers (39 MiB at once) stayed in memory as garbage until the next scavenge. What a
 * controller allocates in a burst mostly lives on (the catalog it keeps) or is garbage at once,
 * so a small young generation (ManagerHeapFlags) costs little time: the corpus catalog image was
 * read as fast. V8 reads its heap sizes only when a process starts too.
 *
 * So a command that runs the manager replaces its own process image once, before loading
 * anything, with what is missing (`process.execve`: same PID, so signals and a container's PID 1
 * are unchanged). A variable or node option the user set is left as it is; BOSUN_ALLOCATOR=default
 * keeps glibc's and V8's defaults. Other C libraries ignore the variable.
 */
import { ManagerAllocatorEnv, ManagerHeapFlags } from '../manager/defaults.js';

/** Whether `argv` (after `bosun`) runs the manager: `bosun start`, `bosun operator run`. */
function runsManager(argv: readonly string[]): boolean {
  if (argv.includes('--help') || argv.includes('-h')) return false;
  return argv[0] === 'start' || (argv[0] === 'operator' && argv[1] === 'run');
}

/** What to restart with: the environment and node's options; undefined when this process should go on as it is. */
export function allocatorRestart(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  execArgv: readonly string[],
  platform: NodeJS.Platform = process.platform,
): { env: NodeJS.ProcessEnv; execArgv: string[] } | undefined {
  if (!runsManager(argv) || env.BOSUN_ALLOCATOR === 'default') return undefined;
  // glibc's variable only on Linux; the user's own value of it stands.
  const setsMalloc =
    platform === 'linux' && !Object.keys(ManagerAllocatorEnv).some((k) => env[k] !== undefined);
  // A V8 option the user gave (on the command line or in NODE_OPTIONS) stands: ours would override it.
  const given = new Set([...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].map(v8OptionName));
  const flags = ManagerHeapFlags.filter((f) => !given.has(v8OptionName(f)));
  if (!setsMalloc && flags.length === 0) return undefined;
  return {
    env: setsMalloc ? { ...env, ...ManagerAllocatorEnv } : env,
    execArgv: [...flags, ...execArgv],
  };
}

/** An option's name as V8 reads it: `--max_semi_space_size=4` and `--max-semi-space-size` are one option. */
const v8OptionName = (option: string): string => option.split('=')[0]!.replaceAll('_', '-');

/** Restarts this process with the manager's memory settings when it runs the manager (see above). */
export function tuneAllocator(argv: readonly string[]): void {
  const restart = allocatorRestart(argv, process.env, process.execArgv);
  if (!restart || !process.execve) return;
  process.execve(
    process.execPath,
    [process.execPath, ...restart.execArgv, ...process.argv.slice(1)],
    restart.env,
  );
}
