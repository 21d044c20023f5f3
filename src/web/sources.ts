/**
 * Where the web catalog's data comes from: the manager (every CatalogSource's packages, from the
 * PackageIndex, and what the cluster has installed, from the informer caches) or one catalog
 * directory served by `bosun catalog serve` (no cluster: nothing is installed, and the install
 * instructions start with the CatalogSource that reads this server).
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../apis/meta.js';
import type {
  CatalogSource,
  ClusterServiceVersion,
  InstallPlan,
  OperatorGroup,
  Subscription,
} from '../apis/operators.js';
import type { CatalogRef, CatalogSnapshot } from '../catalog/content/store.js';
import type { ServedCatalog } from '../catalog/serve.js';
import { withPayloadsAll } from '../catalog/payloads.js';
import { objectKey } from '../kube/cache.js';
import type { Informer } from '../kube/informer.js';
import type { IndexedPackage, PackageEvent } from '../packages/index.js';
import { packageManifests } from '../packages/projection.js';
import { CatalogMode, type InstallContext, type OperatorGroupInfo } from './client/api.js';
import { GlobalOperatorsNamespace, type WebState } from './scope.js';
import type { WebSource } from './server.js';
import type { CatalogContent } from './view.js';

export { GlobalOperatorsNamespace } from './scope.js';

export interface ManagerWebInputs {
  catalogs: {
    get(ref: CatalogRef): CatalogSnapshot | undefined;
    onChange(listener: (ref: CatalogRef) => void): () => void;
  };
  packages: {
    visible(namespace: string): readonly IndexedPackage[];
    onEvent(listener: (e: PackageEvent) => void): () => void;
  };
  /** The manager's informer caches of these kinds. */
  informers: {
    catalogSources: Informer<CatalogSource>;
    subscriptions: Informer<Subscription>;
    csvs: Informer<ClusterServiceVersion>;
    installPlans: Informer<InstallPlan>;
    operatorGroups: Informer<OperatorGroup>;
    namespaces: Informer<KubeObject>;
  };
  /** Catalogs here are visible from every namespace. */
  globalNamespace: string;
}

/** The OperatorGroup's target namespaces as OLM resolves them; empty for every namespace. */
export function operatorGroupInfo(og: OperatorGroup): OperatorGroupInfo {
  const spec = og.spec ?? {};
  const listed = spec.targetNamespaces ?? (spec.selector ? og.status?.namespaces : undefined) ?? [];
  return {
    namespace: og.metadata.namespace ?? '',
    name: og.metadata.name ?? '',
    // OLM writes [""] for every namespace.
    targetNamespaces: listed.filter((n) => n !== ''),
  };
}

/** The namespace of an OperatorGroup for every namespace: `operators` where it has one, else the first. */
export function globalOperatorsNamespace(groups: readonly OperatorGroupInfo[]): string | undefined {
  const global = groups
    .filter((g) => g.targetNamespaces.length === 0)
    .map((g) => g.namespace)
    .sort();
  return global.includes(GlobalOperatorsNamespace) ? GlobalOperatorsNamespace : global[0];
}

export function managerWebSource(inputs: ManagerWebInputs): WebSource & { stop(): void } {
  const boot = randomBytes(6).toString('hex');
  let changes = 0;
  const bump = () => void changes++;
  const watched: Informer<KubeObject>[] = [
    inputs.informers.catalogSources,
    inputs.informers.subscriptions,
    inputs.informers.csvs,
    inputs.informers.installPlans,
    inputs.informers.operatorGroups,
    inputs.informers.namespaces,
  ] as Informer<KubeObject>[];
  const unsubscribe = [
    inputs.catalogs.onChange(bump),
    inputs.packages.onEvent(bump),
    ...watched.map((i) => i.on({ add: bump, update: bump, delete: bump })),
  ];
  let cached: WebState | undefined;

  const build = (revision: string): WebState => {
    const byCatalog = new Map<string, { ref: CatalogRef; manifests: IndexedPackage['manifest'][] }>();
    for (const p of inputs.packages.visible('')) {
      const id = `${p.catalog.namespace}/${p.catalog.name}`;
      const entry = byCatalog.get(id) ?? { ref: p.catalog, manifests: [] };
      entry.manifests.push(p.manifest);
      byCatalog.set(id, entry);
    }
    const catalogs: CatalogContent[] = [];
    for (const [id, { ref, manifests }] of [...byCatalog].sort(([a], [b]) => a.localeCompare(b))) {
      const snapshot = inputs.catalogs.get(ref);
      if (!snapshot) continue;
      const cs: CatalogSource | undefined = inputs.informers.catalogSources.get(
        objectKey(ref.namespace, ref.name),
      );
      const first = manifests[0]?.status;
      const displayName = cs?.spec.displayName || first?.catalogSourceDisplayName || ref.name;
      const publisher = cs?.spec.publisher || first?.catalogSourcePublisher;
      catalogs.push({
        info: {
          id,
          name: ref.name,
          namespace: ref.namespace,
          displayName,
          ...(publisher ? { publisher } : {}),
        },
        config: snapshot.config,
        manifests,
      });
    }
    const operatorGroups = inputs.informers.operatorGroups.list().map(operatorGroupInfo);
    const namespaces = inputs.informers.namespaces
      .list()
      .map((n) => n.metadata?.name ?? '')
      .filter(Boolean);
    const globalOps = globalOperatorsNamespace(operatorGroups);
    return {
      revision,
      catalogs,
      cluster: {
        subscriptions: inputs.informers.subscriptions.list(),
        csvs: inputs.informers.csvs.list(),
        installPlans: inputs.informers.installPlans.list(),
        operatorGroups,
        namespaces,
        globalNamespace: inputs.globalNamespace,
      },
      installContext: (c): InstallContext => {
        const namespace = c.info.namespace ?? '';
        return {
          source: { name: c.info.name, namespace },
          ...(namespace !== inputs.globalNamespace ? { onlyNamespace: namespace } : {}),
          ...(globalOps ? { globalOperatorsNamespace: globalOps } : {}),
          cluster: { operatorGroups, namespaces },
        };
      },
    };
  };

  return {
    mode: CatalogMode.Cluster,
    state: async () => {
      const revision = `${boot}.${changes}`;
      if (cached?.revision !== revision) cached = build(revision);
      return cached;
    },
    stop: () => {
      for (const u of unsubscribe.splice(0)) u();
    },
  };
}

export interface DirectoryWebInputs {
  /** The catalog as it is now (reloaded when its files change). */
  current(): Promise<ServedCatalog>;
  /** The CatalogSource name the install instructions give it. */
  name: string;
  /** The URL a CatalogSource of sourceType http reads this catalog from. */
  address(): string;
  /** Where that CatalogSource goes: the global catalog namespace (`olm`, as `bosun start` has it). */
  catalogNamespace: string;
}

/** A CatalogSource name made from a directory's name: lower case, `-` for anything else. */
export function catalogSourceName(dirName: string): string {
  const name = dirName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name || 'catalog';
}

/**
 * How long the page's requests trust the directory as last read. Loading the page asks for every
 * icon at once, and each look at the directory walks and stats every catalog file; the catalog
 * route (what CatalogSources poll) still looks on every request.
 */
const DirectoryRecheckMs = 1000;

export function directoryWebSource(inputs: DirectoryWebInputs): WebSource {
  let cached: { etag: string; state: Promise<WebState>; checkedAt: number } | undefined;

  const build = async (served: ServedCatalog): Promise<WebState> => {
    const source = { name: inputs.name, namespace: inputs.catalogNamespace, displayName: inputs.name };
    const manifests = await packageManifests(served.config, source, withPayloadsAll);
    const content: CatalogContent = {
      info: { id: inputs.name, name: inputs.name, displayName: inputs.name },
      config: served.config,
      manifests,
    };
    return {
      revision: served.etag,
      catalogs: [content],
      installContext: () => ({
        source: { name: inputs.name, namespace: inputs.catalogNamespace },
        catalogSource: { address: inputs.address(), displayName: inputs.name },
        globalOperatorsNamespace: GlobalOperatorsNamespace,
      }),
    };
  };

  return {
    mode: CatalogMode.Directory,
    state: async () => {
      if (cached && Date.now() - cached.checkedAt < DirectoryRecheckMs) return cached.state;
      const served = await inputs.current();
      if (cached?.etag !== served.etag) {
        const state = build(served);
        cached = { etag: served.etag, state, checkedAt: Date.now() };
        // A failed projection is not kept: the next request tries again.
        state.catch(() => {
          if (cached?.state === state) cached = undefined;
        });
      } else {
        cached.checkedAt = Date.now();
      }
      return cached.state;
    },
  };
}
