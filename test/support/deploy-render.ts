/**
 * deploy/bosun.yaml is deploy/kustomization.yaml rendered, for clusters installed with
 * `kubectl apply -f`. `npm run gen:deploy` writes it; the unit test test/unit/deploy/manifests.test.ts
 * renders again and fails when the checked-in file differs, so the two never drift apart.
 * Rendering is kubectl's own kustomize (`kubectl kustomize`), the one `kubectl apply -k` uses.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const deployDir = join(import.meta.dirname, '../../deploy');
export const renderedFile = join(deployDir, 'bosun.yaml');

const header =
  '# Generated from deploy/kustomization.yaml by `npm run gen:deploy`; do not edit.\n' +
  '# Install: see deploy/README.md.\n';

/** Whether kubectl runs here; undefined when it does, else why not. */
export async function kubectlMissing(): Promise<string | undefined> {
  try {
    await promisify(execFile)('kubectl', ['version', '--client']);
    return undefined;
  } catch (err) {
    return `kubectl is not usable here (${(err as Error).message.split('\n')[0]}); it renders deploy/`;
  }
}

/** deploy/ (or another kustomization directory) as `kubectl apply -k` would see it. */
export async function renderKustomization(dir = deployDir): Promise<string> {
  const { stdout } = await promisify(execFile)('kubectl', ['kustomize', dir], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return header + stdout;
}

async function main(): Promise<void> {
  const missing = await kubectlMissing();
  if (missing) {
    process.stderr.write(`gen:deploy: ${missing}\n`);
    process.exitCode = 1;
    return;
  }
  await writeFile(renderedFile, await renderKustomization());
  process.stdout.write(`wrote ${renderedFile}\n`);
}

if (process.argv[1] === import.meta.filename) await main();
