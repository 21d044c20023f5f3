/**
 * The Kubernetes side of ConfigMap catalogs: reading the ConfigMap a CatalogSource names (for the
 * configmap fetcher of src/catalog/content, which is given configMapReader) and watching it.
 *
 * ConfigMap catalogs are watched, so that a bundle published into one reaches the cluster in
 * seconds rather than at the next poll. Each CatalogSource of sourceType configmap gets a watch
 * on the one ConfigMap it names (a field selector on its name, in its namespace) that keeps only
 * metadata: a cluster-wide ConfigMap informer would hold every ConfigMap of the cluster. Any
 * change of that ConfigMap reconciles the CatalogSource, which reads it again. Polling at
 * `registryPoll.interval` stays, as a net under a watch that falls behind.
 */
import type { KubeObject } from '../apis/meta.js';
import { type CatalogSource, SourceType } from '../apis/operators.js';
import type { ConfigMapData, ConfigMapReader } from '../catalog/content/configmap.js';
import { type KubeClient, objectPath } from '../kube/client.js';
import { formatApiError, isNotFound, parseApiError } from '../kube/errors.js';
import { createInformer, type Informer } from '../kube/informer.js';
import { Builtin } from '../kube/resources.js';

/** Reads ConfigMaps with `client`: an answer of the API server is a value, anything else is thrown. */
export function configMapReader(client: KubeClient): ConfigMapReader {
  return async (namespace, name) => {
    try {
      const path = objectPath(Builtin.ConfigMap, name, namespace);
      return { ok: true, configMap: await client.request<ConfigMapData>({ path }) };
    } catch (err) {
      const apiError = parseApiError(err);
      if (!apiError) throw err;
      return { ok: false, notFound: isNotFound(err), message: formatApiError(apiError) };
    }
  };
}

export class ConfigMapWatches {
  private readonly bySource = new Map<string, { configMap: string; informer: Informer<KubeObject> }>();

  constructor(
    private readonly client: KubeClient,
    private readonly enqueue: (key: string) => void,
  ) {}

  /** Watches the ConfigMap `cs` names, or nothing for another source type or a deleted source. */
  follow(key: string, cs: CatalogSource | undefined): void {
    const live = cs !== undefined && !cs.metadata.deletionTimestamp;
    const want = live && cs.spec.sourceType === SourceType.ConfigMap ? cs.spec.configMap : undefined;
    const have = this.bySource.get(key);
    if (have?.configMap === want) return;
    if (have) {
      void have.informer.stop();
      this.bySource.delete(key);
    }
    if (!want || !cs) return;
    const informer = createInformer<KubeObject>(this.client, Builtin.ConfigMap, {
      namespace: cs.metadata.namespace,
      fieldSelector: `metadata.name=${want}`,
      transform: (cm) => ({ apiVersion: cm.apiVersion, kind: cm.kind, metadata: cm.metadata }),
    });
    const wake = () => this.enqueue(key);
    informer.on({ add: wake, update: wake, delete: wake });
    informer.start();
    this.bySource.set(key, { configMap: want, informer });
  }

  async stop(): Promise<void> {
    const all = [...this.bySource.values()];
    this.bySource.clear();
    await Promise.all(all.map((w) => w.informer.stop()));
  }
}
