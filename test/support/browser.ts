/**
 * Headless Chromium for the web catalog's browser tests and benchmarks: Debian's `chromium`
 * package, driven by playwright-core (which brings no browser of its own). Where no Chromium is
 * found and the tests run as root (CI does), it is installed with apt-get; otherwise the error says
 * how to install it. BOSUN_CHROMIUM names another Chromium or Chrome binary.
 */
import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';

/** Debian's real binary first (/usr/bin/chromium is a shell wrapper around it). */
const Candidates = [
  '/usr/lib/chromium/chromium',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
];

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function findChromium(): Promise<string | undefined> {
  const chosen = process.env.BOSUN_CHROMIUM;
  if (chosen) {
    if (await executable(chosen)) return chosen;
    throw new Error(`BOSUN_CHROMIUM=${chosen} is not an executable file`);
  }
  for (const c of Candidates) if (await executable(c)) return c;
  return undefined;
}

function run(cmd: string, args: string[], log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const keep = (d: Buffer) => {
      tail = (tail + d.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${tail}`));
    });
    log(`${cmd} ${args.join(' ')}`);
  });
}

let installing: Promise<string> | undefined;

/** The Chromium binary to drive, installed first when it is missing and we may. */
export function chromiumPath(log: (line: string) => void = (l) => process.stderr.write(`[browser] ${l}\n`)) {
  installing ??= (async () => {
    const found = await findChromium();
    if (found) return found;
    const root = process.getuid?.() === 0;
    if (!root) {
      throw new Error(
        'the web catalog tests need headless Chromium and none is installed: run `apt-get install chromium` as root, or set BOSUN_CHROMIUM to a Chromium binary',
      );
    }
    log('no Chromium found: installing Debian`s chromium package (a minute or two)');
    // Another apt-get may hold the lock (unattended upgrades): wait for it rather than fail.
    await run('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'update', '-qq'], log);
    await run('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', 'chromium'], log);
    const installed = await findChromium();
    if (!installed)
      throw new Error(`apt-get installed chromium, but none of ${Candidates.join(', ')} is there`);
    return installed;
  })();
  return installing;
}

/** A headless Chromium. As root it runs without its sandbox, which needs user namespaces root has not. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = await chromiumPath();
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      // /dev/shm is small in containers; Chromium falls back to /tmp instead of crashing.
      '--disable-dev-shm-usage',
    ],
  });
}
