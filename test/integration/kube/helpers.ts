import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../../../src/apis/meta.js';
import { Applier } from '../../../src/kube/apply.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { installCrds } from '../../../src/kube/crds.js';

export const crdDir = join(import.meta.dirname, '../../../deploy/crds');

/** A client and applier for the run's cluster, loaded the way Bosun loads a kubeconfig. */
export function connect() {
  const { kubeConfig } = loadKubeConfig({ path: inject('kubeconfig') });
  const client = new KubeClient(kubeConfig);
  return { kubeConfig, client, applier: new Applier(kubeConfig, client) };
}

/** The CRDs exactly as a user would `kubectl apply -f deploy/crds`. */
export async function readDeployedCrds(): Promise<KubeObject[]> {
  const files = (await readdir(crdDir)).filter((f) => f.endsWith('.yaml')).sort();
  return Promise.all(files.map(async (f) => parse(await readFile(join(crdDir, f), 'utf8')) as KubeObject));
}

/** Installs deploy/crds (idempotent: every test file may call it; server-side apply converges). */
export async function installOperatorCrds(): Promise<void> {
  const { client, applier } = connect();
  try {
    await installCrds(applier, client, await readDeployedCrds(), { timeoutMs: 120_000 });
  } finally {
    client.close();
  }
}

export async function fixture<T = KubeObject>(name: string): Promise<T> {
  return parse(await readFile(join(import.meta.dirname, 'fixtures', name), 'utf8')) as T;
}

export const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));
