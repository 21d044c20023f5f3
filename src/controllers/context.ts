/**
 * What every reconciler is given: clients, informer caches, catalog content (the store, its
 * fetchers and bundle content, from src/catalog/content), logging, metrics and the clock. The manager (src/manager/manager.ts) builds one ControllerContext
 * and registers each Controller against it; controllers talk to each other only through API
 * objects (a Subscription creates an InstallPlan, an InstallPlan creates a CSV, ...).
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../apis/meta.js';
import type {
  CatalogSource,
  ClusterServiceVersion,
  InstallPlan,
  Operator,
  OperatorCondition,
  OperatorGroup,
  Subscription,
} from '../apis/operators.js';
import type { ClusterCatalog, ClusterExtension } from '../apis/olmv1.js';
import type { ClusterRole } from '../install/provided-api-roles.js';
import type { Applier } from '../kube/apply.js';
import type { KubeClient } from '../kube/client.js';
import type { Clock } from '../kube/clock.js';
import type { EventRecorder } from '../kube/events.js';
import type { Informer } from '../kube/informer.js';
import type { SchemaSource } from '../kube/schemas.js';
import type { Reconcile } from '../kube/workqueue.js';
import type { BundleContent } from '../catalog/content/bundles.js';
import type { ClusterCatalogContent } from '../catalog/content/cluster-catalogs.js';
import type { CatalogFetchers } from '../catalog/content/fetcher.js';
import type { CatalogStore } from '../catalog/content/store.js';

/** A Deployment, CRD or Namespace as plain JSON (only the fields controllers read are typed). */
export type Deployment = KubeObject & {
  spec?: {
    replicas?: number;
    template?: { metadata?: { annotations?: Record<string, string> } };
    selector?: unknown;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
};
export type CustomResourceDefinition = KubeObject & {
  spec?: {
    group?: string;
    names?: { kind?: string; plural?: string };
    versions?: { name: string; served?: boolean; storage?: boolean }[];
  };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    storedVersions?: string[];
  };
};
export type Namespace = KubeObject;
/** An object of which an informer keeps only the metadata (and status conditions, if any). */
export type ObjectMetadata = KubeObject & { status?: { conditions?: unknown[] } };
export type { ClusterRole };

/** Informer caches shared by all controllers (cluster-wide). */
export interface Informers {
  catalogSources: Informer<CatalogSource>;
  subscriptions: Informer<Subscription>;
  installPlans: Informer<InstallPlan>;
  csvs: Informer<ClusterServiceVersion>;
  operatorGroups: Informer<OperatorGroup>;
  operatorConditions: Informer<OperatorCondition>;
  /** Only Deployments Bosun manages (label `olm.managed=true`). */
  deployments: Informer<Deployment>;
  crds: Informer<CustomResourceDefinition>;
  namespaces: Informer<Namespace>;
  /** Every Operator (cluster-scoped). */
  operators: Informer<Operator>;
  /** Only ClusterRoles Bosun manages (`olm.managed=true`). */
  clusterRoles: Informer<ClusterRole>;
  /**
   * The other kinds an operator is made of: only objects Bosun manages (`olm.managed=true`, as
   * OLM's caches of these kinds), and of each only its metadata and status conditions.
   */
  apiServices: Informer<ObjectMetadata>;
  serviceAccounts: Informer<ObjectMetadata>;
  secrets: Informer<ObjectMetadata>;
  configMaps: Informer<ObjectMetadata>;
  services: Informer<ObjectMetadata>;
  roles: Informer<ObjectMetadata>;
  roleBindings: Informer<ObjectMetadata>;
  clusterRoleBindings: Informer<ObjectMetadata>;
  /** OLM v1's ClusterCatalogs (cluster-scoped). */
  clusterCatalogs: Informer<ClusterCatalog>;
  /** OLM v1's ClusterExtensions (cluster-scoped). */
  clusterExtensions: Informer<ClusterExtension>;
}

/**
 * How the Subscription controller tells the InstallPlan controller where a bundle comes from.
 * It creates one InstallPlan per Subscription and target CSV with:
 * - `spec.clusterServiceVersionNames: [<csv>]` (the CSV name is the bundle name in the catalog);
 * - `spec.source` / `spec.sourceNamespace`: the CatalogSource (OLM's InstallPlan spec fields), so
 *   the bundle is `catalogs.findBundle({ namespace: spec.sourceNamespace, name: spec.source }, csv)`;
 * - `spec.approval` / `spec.approved` (approved at creation only when Automatic), `spec.generation`;
 * - a (non-controller) ownerReference to the Subscription, and the label
 *   `operators.coreos.com/subscription: <subscription>` (InstallPlanSubscriptionLabel);
 * - a deterministic name, `install-<10 hex of sha256(namespace/subscription/csv)>`.
 * The Subscription controller never writes an InstallPlan after creating it; its status belongs
 * to the InstallPlan controller.
 */
export const InstallPlanSubscriptionLabel = 'operators.coreos.com/subscription';

/** What reconcilers reach the world through, besides informers. */
export interface Ports {
  client: KubeClient;
  applier: Applier;
  /** Live schemas of kinds: what is applied from a bundle is pruned by them first. */
  schemas: SchemaSource;
  events: EventRecorder;
  clock: Clock;
  catalogs: CatalogStore;
  /** What reads each kind of CatalogSource's content. */
  catalogFetchers: CatalogFetchers;
  /** OLM v1's ClusterCatalogs' images, read and served over catalogd's HTTP API. */
  clusterCatalogContent: ClusterCatalogContent;
  /** Bundles' manifests, as an install reads them. */
  bundles: BundleContent;
  /** Catalogs in this namespace are visible from every namespace (OLM's global catalog namespace). */
  globalNamespace: string;
  metrics: Metrics;
}

/** What controllers report, whatever records it (src/server/metrics.ts records it with prom-client). */
export interface Metrics {
  /** Counts one finished reconcile of `controller` with its outcome. */
  reconciled(controller: string, outcome: 'success' | 'requeue' | 'retry', seconds: number): void;
  /** Records how long one namespace's resolution took. */
  resolution(seconds: number): void;
}

export type InformerName = keyof Informers;
export type PortName = keyof Ports;

/** The whole context, built once by the manager; each controller sees only its `ScopedContext`. */
export interface ControllerContext extends Ports {
  /**
   * The manager gives each reconcile a child logger (kind, namespace, name, reconcileID): read
   * `ctx.log` inside the reconcile function, not once when the controller is set up.
   */
  log: Logger;
  informers: Informers;
}

/** What a controller declared it uses: those informers, those ports, and the logger. */
export type ScopedContext<I extends InformerName, P extends PortName> = {
  readonly log: Logger;
  informers: Pick<Informers, I>;
} & Pick<Ports, P>;

/**
 * One reconciler. It declares the informers and ports it uses and is given only those. `watch`
 * subscribes to the informers (and the catalog store) whose changes should reconcile some key,
 * and calls `enqueue` with that key; `reconcile` does the work for one key (level-based: read the
 * world, compute, apply, write status only if it changed).
 */
export interface Controller<I extends InformerName = InformerName, P extends PortName = PortName> {
  /** Names the controller in logs and metrics, e.g. `subscription`. */
  name: string;
  /** The kind it reconciles, for logs (e.g. `Subscription`); defaults to the name. */
  kind?: string;
  /** What a key names: an object (`namespace/name`, the default) or a whole namespace. */
  keyScope?: 'object' | 'namespace';
  informers: readonly I[];
  ports: readonly P[];
  /** May return what stops the watches it started itself, for the manager to call when it stops. */
  watch(ctx: ScopedContext<I, P>, enqueue: (key: string) => void): void | (() => Promise<void>);
  reconcile(ctx: ScopedContext<I, P>): Reconcile;
}

/** A controller's context: the declared informers and ports of `ctx`, nothing else. */
export function scopedContext<I extends InformerName, P extends PortName>(
  ctx: ControllerContext,
  uses: { informers: readonly I[]; ports: readonly P[] },
): ScopedContext<I, P> {
  const informers = Object.fromEntries(uses.informers.map((i) => [i, ctx.informers[i]])) as Pick<
    Informers,
    I
  >;
  const ports = Object.fromEntries(uses.ports.map((p) => [p, ctx[p]])) as unknown as Pick<Ports, P>;
  const scoped = { ...ports, informers } as ScopedContext<I, P>;
  // The logger is the current reconcile's, read when used.
  Object.defineProperty(scoped, 'log', { get: () => ctx.log, enumerable: true });
  return scoped;
}
