/**
 * Debian packages some tests need (the OCI registry, bubblewrap), installed with apt-get when
 * they are missing and the tests run as root, as CI does. Elsewhere the answer says what to
 * install, for the test to skip with.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Undefined once every file of `binaries` exists, installing `packages` first when one is missing;
 * otherwise why they are not there and how to fix it. `purpose` ends "the ... tests need".
 */
export async function aptInstalled(
  packages: readonly string[],
  binaries: readonly string[],
  purpose: string,
  log: (line: string) => void = console.log,
): Promise<string | undefined> {
  if (binaries.every((b) => existsSync(b))) return undefined;
  const names = packages.join(' and ');
  if (process.getuid?.() !== 0)
    return `${purpose} Debian's ${names} package${packages.length > 1 ? 's' : ''}: run \`apt-get install ${packages.join(' ')}\` as root`;
  log(`installing Debian's ${names} for ${purpose.replace(/ need$/, '')}`);
  const install = ['install', '-y', '-qq', '--no-install-recommends', ...packages];
  try {
    // A machine whose package lists were never fetched needs an update first.
    await apt(install).catch(async () => {
      await apt(['update', '-qq']);
      await apt(install);
    });
  } catch (err) {
    return `apt-get could not install ${names}: ${(err as Error).message}`;
  }
  const missing = binaries.filter((b) => !existsSync(b));
  return missing.length === 0 ? undefined : `apt-get ran, but ${missing.join(' and ')} is still missing`;
}

function apt(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    // Another apt-get may hold the lock: wait for it rather than fail.
    const child = spawn('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const keep = (d: Buffer) => (tail = (tail + d.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`apt-get ${args.join(' ')}: ${tail}`)),
    );
  });
}
