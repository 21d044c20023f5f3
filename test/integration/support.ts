import { randomBytes } from 'node:crypto';
import { afterEach, inject } from 'vitest';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';

// Bosun's own client, not @kubernetes/client-node: nearly every test file imports this module,
// and loading client-node took each file's worker 1 to 3 s. Tests that use client-node import
// it from ./client-node.ts.
const connect = () => new KubeClient(loadKubeConfig({ path: inject('kubeconfig') }).access);

const created: string[] = [];

afterEach(async () => {
  if (created.length === 0) return;
  // Namespaces are deleted in the background; the namespace controller finishes the job.
  const client = connect();
  try {
    await Promise.all(
      created
        .splice(0)
        .map((name) =>
          client.request({ method: 'DELETE', path: `/api/v1/namespaces/${name}` }).catch(() => undefined),
        ),
    );
  } finally {
    client.close();
  }
});

/** A fresh namespace for one test, deleted after it. */
export async function freshNamespace(prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const client = connect();
  try {
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
  } finally {
    client.close();
  }
  created.push(name);
  return name;
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
