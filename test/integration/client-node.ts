/**
 * @kubernetes/client-node for the tests that check Bosun's API server against it (its watch, its
 * typed clients); a module of its own so that the many test files that do not use it never load it.
 */
import * as k8s from '@kubernetes/client-node';
import { inject } from 'vitest';
import { eventually } from './support.js';

/** A client configuration for the run's shared cluster. */
export function kubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  return kc;
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
