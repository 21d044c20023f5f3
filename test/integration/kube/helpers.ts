import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../../../src/apis/meta.js';
import { clusterLayout, readState } from '../../../src/cluster/controlplane.js';
import { Applier } from '../../../src/kube/apply.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { installCrds } from '../../../src/kube/crds.js';

export const crdDir = join(import.meta.dirname, '../../../deploy/crds');

/** A client and applier for the run's cluster, loaded the way Bosun loads a kubeconfig. */
export function connect() {
  const { access } = loadKubeConfig({ path: inject('kubeconfig') });
  const client = new KubeClient(access);
  return { client, applier: new Applier(client) };
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

/**
 * Compacts the history of the run's etcd up to `revision`, as the API server itself does every
 * few minutes, so that watching from an older resourceVersion gets 410. Returns false when the
 * tests run against a cluster that is not the local control plane (no etcd to reach).
 */
export async function compactEtcd(revision: string): Promise<boolean> {
  const name = inject('clusterName');
  if (!name) return false;
  const state = await readState(clusterLayout(name));
  if (!state) return false;
  const res = await fetch(`http://127.0.0.1:${state.ports.etcdClient}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision, physical: true }),
  });
  if (!res.ok) throw new Error(`etcd compaction: ${res.status} ${await res.text()}`);
  return true;
}
