import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { afterEach, inject } from 'vitest';

/** A client configuration for the run's shared cluster. */
export function kubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  return kc;
}

const created: string[] = [];

afterEach(async () => {
  // Namespaces are deleted in the background; the namespace controller finishes the job.
  const core = kubeConfig().makeApiClient(k8s.CoreV1Api);
  await Promise.all(created.splice(0).map((name) => core.deleteNamespace({ name }).catch(() => undefined)));
});

/** A fresh namespace for one test, deleted after it. */
export async function freshNamespace(prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await kubeConfig()
    .makeApiClient(k8s.CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
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

/**
 * Opens a watch and keeps it open: the API server answers 429 while the storage of a just-created
 * resource type initialises, so a watch that ends with an error in its first moments is retried.
 */
export async function openWatch(
  kc: k8s.KubeConfig,
  path: string,
  onEvent: (type: string, obj: unknown) => void,
): Promise<{ abort(): void }> {
  return eventually(`a watch on ${path}`, async () => {
    let ended: unknown;
    const req = await new k8s.Watch(kc).watch(path, {}, onEvent, (err) => {
      ended = err ?? 'closed';
    });
    await new Promise((r) => setTimeout(r, 500));
    if (ended === undefined) return req;
    req.abort();
    return undefined;
  });
}
