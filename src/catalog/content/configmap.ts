/**
 * A catalog kept in a ConfigMap: `sourceType: configmap` (or OLM's deprecated `internal`) with
 * `spec.configMap`, the name of a ConfigMap in the CatalogSource's namespace whose data holds FBC
 * documents under any keys. The keys are spooled in order of name and parsed as one catalog.
 *
 * Reading the ConfigMap is Kubernetes I/O, which is the controllers' side: the fetcher is given a
 * ConfigMapReader (src/controllers/catalogsource-configmaps.ts makes one of a KubeClient).
 */
import type { CatalogSource } from '../../apis/operators.js';
import { type CatalogFetcher, FetchFailureReason, type FetchOutcome } from './fetcher.js';
import { parseSpooled } from './parse.js';
import type { CatalogSpool } from './spool.js';
import type { CatalogContent } from './store.js';

/** A ConfigMap, as far as the fetcher reads it. */
export interface ConfigMapData {
  metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** What reading a ConfigMap came to: the object, or why not in the API server's words. */
export type ConfigMapRead =
  { ok: true; configMap: ConfigMapData } | { ok: false; notFound: boolean; message: string };

/** Reads one ConfigMap; an error the API server did not answer with is thrown. */
export type ConfigMapReader = (namespace: string, name: string) => Promise<ConfigMapRead>;

export function configMapFetcher(deps: {
  spool: Pick<CatalogSpool, 'writeFiles' | 'remove'>;
  read: ConfigMapReader;
}): CatalogFetcher {
  return {
    fetch: (source, previous) => fetchConfigMap(deps, source, previous),
  };
}

async function fetchConfigMap(
  { spool, read }: Parameters<typeof configMapFetcher>[0],
  source: CatalogSource,
  previous: CatalogContent | undefined,
): Promise<FetchOutcome> {
  const namespace = source.metadata.namespace ?? '';
  const name = source.spec.configMap;
  if (!name) {
    return {
      ok: false,
      reason: FetchFailureReason.SpecInvalidError,
      message: 'spec.configMap: sourceType configmap needs the name of a ConfigMap in the same namespace',
    };
  }
  const where = `ConfigMap ${namespace}/${name}`;
  const got = await read(namespace, name);
  if (!got.ok) {
    const message = got.notFound
      ? `${where} (spec.configMap) does not exist: create it with FBC documents in its data, or fix spec.configMap`
      : `${where}: ${got.message}`;
    return { ok: false, reason: FetchFailureReason.ConfigMapError, message };
  }
  const cm = got.configMap;
  const files = Object.entries(cm.data ?? {}).map(([key, text]) => ({
    name: `${where} data.${key}`,
    bytes: Buffer.from(text),
  }));
  if (files.length === 0) {
    return {
      ok: false,
      reason: FetchFailureReason.ConfigMapError,
      message: `${where} has no data: put the catalog's FBC documents under any key`,
    };
  }
  const ref = { namespace, name: source.metadata.name ?? '' };
  const parsed = await parseSpooled(spool, await spool.writeFiles(ref, files), previous, where);
  if (!parsed.ok) return { ok: false, reason: FetchFailureReason.InvalidCatalog, message: parsed.message };
  const { metadata } = cm;
  return {
    ok: true,
    content: parsed.content,
    configMap: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
    },
  };
}
