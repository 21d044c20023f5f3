import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { progressReporter } from '../../src/cli/progress.js';
import { down, up } from '../../src/cluster/controlplane.js';
import { ensureBuilt } from '../support/bosun-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of an admin kubeconfig for the cluster the integration tests run against. */
    kubeconfig: string;
    /** Name of the local control plane started for this run (empty when an existing cluster is used). */
    clusterName: string;
    /** A folder for the whole run, removed at its end: work shared by test files (test/support/corpus-import.ts). */
    runDir: string;
  }
}

/**
 * One real control plane for the whole integration run. `BOSUN_TEST_KUBECONFIG` points the tests at
 * an existing cluster instead (never plain KUBECONFIG, so a developer's cluster is not used by accident).
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Tests start bosun processes from dist/ (test/support/bosun-process.ts): it must be the sources' build.
  await ensureBuilt((l) => process.stderr.write(`[build] ${l}\n`));
  const runDir = await mkdtemp(join(tmpdir(), 'bosun-test-run-'));
  project.provide('runDir', runDir);
  const removeRunDir = () => rm(runDir, { recursive: true, force: true });
  const existing = process.env.BOSUN_TEST_KUBECONFIG;
  if (existing) {
    project.provide('kubeconfig', existing);
    project.provide('clusterName', '');
    return removeRunDir;
  }
  const name = `test-${process.pid}`;
  const started = Date.now();
  const progress = progressReporter({ stderr: process.stderr });
  const state = await up({
    name,
    onProgress: (l) => process.stderr.write(`[control plane] ${l}\n`),
    onBuildStatus: progress.build,
  }).catch(async (err: unknown) => {
    await removeRunDir();
    throw err;
  });
  process.stderr.write(
    `[control plane] "${name}" ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${state.server}\n`,
  );
  project.provide('kubeconfig', state.kubeconfig);
  project.provide('clusterName', name);
  return async () => {
    await down({ name });
    await removeRunDir();
  };
}
