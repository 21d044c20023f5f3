/**
 * What the PackageManifest API tests share: a manager serving the API, registered with the run's
 * control plane, and the repository's sample catalog as a global CatalogSource, both taken away
 * when the test file is done (a global catalog is seen from every namespace, an APIService nobody
 * answers breaks discovery).
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { inject } from 'vitest';
import { catalogConfigMapData } from '../../../src/cli/commands/start.js';
import { Builtin } from '../../../src/kube/resources.js';
import { type RunningManager, startManager } from '../../../src/manager/manager.js';
import { apiServiceAvailable } from '../../../src/server/packageserver/register.js';
import { eventually } from '../support.js';
import {
  catalogSource,
  client,
  ConfigMapResource,
  create,
  remove,
  Resources,
} from '../controllers/support.js';

export const GlobalNamespace = 'olm';
export const repoCatalogs = join(import.meta.dirname, '../../../catalogs');

/** A ConfigMap `name` holding `data`, served as CatalogSource `name` in `namespace`. */
export async function configMapCatalog(
  namespace: string,
  name: string,
  data: Record<string, string>,
  spec: Record<string, unknown> = {},
): Promise<void> {
  await create(ConfigMapResource, namespace, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data,
  } as never);
  await create(
    Resources.CatalogSource,
    namespace,
    catalogSource(namespace, name, { sourceType: 'configmap', configMap: name, ...spec }),
  );
}

/**
 * A manager serving the PackageManifest API at `packageApiAddr`, with catalogs/ as the global
 * CatalogSource `catalog`; resolves once the aggregator reports the API available.
 */
export async function managerWithPackageApi(opts: {
  packageApiAddr: string;
  catalog: string;
  displayName: string;
  /** The catalog's ConfigMap data; catalogs/ (as `bosun start` serves it) by default. */
  data?: Record<string, string>;
}): Promise<{ manager: RunningManager; stop(): Promise<void> }> {
  await create(Builtin.Namespace, '', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: GlobalNamespace },
  }).catch(() => undefined);
  const manager = await startManager({
    kubeconfig: inject('kubeconfig'),
    installCrds: true,
    metricsAddr: null,
    globalNamespace: GlobalNamespace,
    packageApiAddr: opts.packageApiAddr,
    logger: pino({ level: process.env.BOSUN_TEST_LOG ?? 'silent' }),
  });
  const stop = async () => {
    await remove(Resources.CatalogSource, GlobalNamespace, opts.catalog);
    await remove(ConfigMapResource, GlobalNamespace, opts.catalog);
    await manager.stop();
  };
  try {
    await configMapCatalog(
      GlobalNamespace,
      opts.catalog,
      opts.data ?? (await catalogConfigMapData(repoCatalogs)),
      {
        displayName: opts.displayName,
        publisher: 'Bosun',
      },
    );
    await eventually(
      'the APIService to be Available',
      async () => ((await apiServiceAvailable(client())).available ? true : undefined),
      120_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { manager, stop };
}
