/**
 * The composition root: connects to the cluster, makes sure the CRDs are there, builds the one
 * ControllerContext, starts the informers, one work queue per controller, the package index,
 * the HTTP endpoints (the web catalog at /, /healthz, /readyz, /metrics) and, when asked, the
 * PackageManifest API. `startManager` runs it all in-process and returns a handle to stop it,
 * which is what `bosun operator run`, `bosun start` and the integration tests use.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { KubeObject, ResourceType } from '../apis/meta.js';
import {
  type CatalogSource,
  type ClusterServiceVersion,
  type InstallPlan,
  type Operator,
  type OperatorCondition,
  type OperatorGroup,
  Resources,
  type Subscription,
} from '../apis/operators.js';
import { Applier } from '../kube/apply.js';
import { objectKey, splitKey } from '../kube/cache.js';
import { sleep, systemClock, type Clock } from '../kube/clock.js';
import type { KubeClient } from '../kube/client.js';
import { connectToCluster } from '../kube/config.js';
import { installCrds } from '../kube/crds.js';
import { accessRefusal, isNamespaceTerminating, isNotFound, parseApiError } from '../kube/errors.js';
import { EventRecorder } from '../kube/events.js';
import { createInformer, type Informer } from '../kube/informer.js';
import { type Outcome, type Reconcile, WorkQueue } from '../kube/workqueue.js';
import { Builtin } from '../kube/resources.js';
import { managedSelector } from '../install/ownership.js';
import { SchemaSource } from '../kube/schemas.js';
import { startHttpServer, type RunningServer } from '../server/http.js';
import { webCatalog } from '../web/server.js';
import { managerWebSource } from '../web/sources.js';
import { catalogBundleContent } from '../catalog/content/bundles.js';
import { configMapFetcher } from '../catalog/content/configmap.js';
import type { CatalogFetchers } from '../catalog/content/fetcher.js';
import { grpcFetcher } from '../catalog/content/grpc.js';
import { BundleImageCache } from '../catalog/content/bundle-image-cache.js';
import { imageBundleContent } from '../catalog/content/bundle-images.js';
import { imageFetcher } from '../catalog/content/image.js';
import { registryAccess } from '../catalog/content/registry-access.js';
import { refKey } from '../catalog/content/store.js';
import { httpFetcher } from '../catalog/content/http.js';
import { MemoryCatalogStore } from '../catalog/content/memory-store.js';
import { CatalogSpool, sweepStaleSpools } from '../catalog/content/spool.js';
import { withPayloadsAll } from '../catalog/payloads.js';
import { PackageIndex } from '../packages/index.js';
import { startPackageApi, type RunningPackageApi } from '../server/packageserver/index.js';
import { Reviewer } from '../server/packageserver/auth.js';
import { webAccess } from '../server/web-access.js';
import { createMetrics } from '../server/metrics.js';
import { UserError } from '../util/errors.js';
import { formatProblem } from '../util/result.js';
import { parseYamlOne } from '../bundle/yaml.js';
import { slimCRD, slimCSV, slimInstallPlan, withoutBookkeeping } from '../controllers/cache-transforms.js';
import { catalogSourceController } from '../controllers/catalogsource.js';
import { clusterCatalogController } from '../controllers/clustercatalog.js';
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../apis/olmv1.js';
import { clusterExtensionController } from '../controllers/clusterextension.js';
import { clusterCatalogContent } from '../catalog/content/cluster-catalogs.js';
import { servedCatalogs } from '../catalog/content/served.js';
import { withClusterCatalogs } from '../catalog/content/with-cluster-catalogs.js';
import { catalogdHandler } from '../server/catalogd.js';
import { gzipCopies } from '../server/catalogd-gzip.js';
import { catalogBaseUrl, catalogdHostNames } from '../server/catalogd-request.js';
import { configMapReader } from '../controllers/catalogsource-configmaps.js';
import { pullSecretReader } from '../controllers/catalogsource-secrets.js';
import {
  bundleCacheBytes,
  globalPullSecretOf,
  registryTransport,
  type SecretRef,
} from './registry-settings.js';
import type { TransportOptions } from '../oci/transport.js';
import {
  type ClusterRole,
  type Controller,
  type ControllerContext,
  type CustomResourceDefinition,
  type Deployment,
  type Informers,
  type Namespace,
  type ObjectMetadata,
  scopedContext,
} from '../controllers/context.js';
import { removeStaleRegistration } from '../server/packageserver/register.js';
import { csvController } from '../controllers/csv.js';
import { ServingResources } from '../controllers/csv-serving.js';
import { DefaultGlobalNamespace, DefaultMetricsAddress } from './defaults.js';
import {
  drainThenRelease,
  type LeaderElectionOptions,
  managerElection,
  refuseWrites,
  standbyOutcome,
} from './leadership.js';
import { installPlanController } from '../controllers/installplan.js';
import { metadataOnly, operatorController } from '../controllers/operator.js';
import { operatorConditionController } from '../controllers/operatorcondition.js';
import { operatorGroupController } from '../controllers/operatorgroup.js';
import { subscriptionController } from '../controllers/subscription.js';

export { DefaultGlobalNamespace, DefaultMetricsAddress };

/** Every controller the manager runs, in start order. */
export const controllers: readonly Controller[] = [
  catalogSourceController,
  clusterCatalogController,
  subscriptionController,
  clusterExtensionController,
  installPlanController,
  csvController,
  operatorGroupController,
  operatorConditionController,
  operatorController,
];

const crdDir = new URL('../../deploy/crds/', import.meta.url);

export interface ManagerOptions {
  /** A kubeconfig file; otherwise KUBECONFIG, ~/.kube/config or in-cluster (never a silent default). */
  kubeconfig?: string;
  env?: NodeJS.ProcessEnv;
  /** Catalogs in this namespace are visible from every namespace. */
  globalNamespace?: string;
  /** `host:port` for /healthz, /readyz and /metrics (port 0: any free port); `null` serves nothing. */
  metricsAddr?: string | null;
  /** Apply the CRDs from deploy/crds (and wait until Established) instead of only checking them. */
  installCrds?: boolean;
  /** Defaults to JSON lines on stdout at `logLevel`. */
  logger?: Logger;
  logLevel?: string;
  /**
   * Serve the PackageManifest API (`packages.operators.coreos.com/v1`) over HTTPS at this
   * `host:port` and register it with the aggregator; the API server must reach the manager at
   * that host (the local control plane does). Unset: not served.
   */
  packageApiAddr?: string;
  /**
   * With `packageApiAddr`: the manager is one of several replicas behind the Service
   * `bosun-packageserver` of the global namespace (deploy/ makes it, selecting every replica), and
   * this is that Service's port. Every replica serves one certificate kept in the Secret
   * `bosun-packageserver-cert`; the Lease holder writes it and the APIService; a stopping replica
   * removes nothing. Unset: the manager registers its own address and CA (one manager).
   */
  packageApiServicePort?: number;
  /** Host names the HTTP server answers to besides IP addresses and localhost (src/server/host-check.ts). */
  webHosts?: readonly string[];
  /** Extra GET routes on the HTTP server (e.g. a served catalog). */
  routes?: Record<string, () => Promise<{ contentType: string; body: string }>>;
  /** Which controllers to run (default: all of `controllers`); tests run a subset. */
  controllers?: readonly Controller[];
  /**
   * How registries are reached (extra CA certificates, registries allowed over plain HTTP);
   * default: what BOSUN_REGISTRY_CA_FILES and BOSUN_INSECURE_REGISTRIES say (registry-settings.ts).
   */
  registry?: TransportOptions;
  /** Concurrent reconciles per controller. */
  concurrency?: number;
  /**
   * Run the controllers only while holding a Lease (leader-election.ts), so several managers can
   * run: every one serves reads, one reconciles. Unset: this manager reconciles alone.
   */
  leaderElection?: LeaderElectionOptions;
  /**
   * At stop, how long running reconciles may finish before they are abandoned (their writes
   * refused from then on) and the Lease released; default 20 s, within Kubernetes' 30 s grace.
   */
  drainMs?: number;
  clock?: Clock;
  /**
   * Where ClusterCatalogs' catalogd API is reached (`status.urls.base` is this, `/catalogs/` and
   * the name), e.g. `http://bosun.olm.svc:8080` in a cluster; default: the HTTP server's own URL.
   */
  catalogdUrl?: string;
  /**
   * The pull Secret ClusterCatalog images are pulled with (catalogd's `--global-pull-secret`);
   * default: BOSUN_GLOBAL_PULL_SECRET (`namespace/name`), else none.
   */
  globalPullSecret?: SecretRef;
}

export interface RunningManager {
  ctx: ControllerContext;
  /** Every catalog's packages, as PackageManifests. */
  packages: PackageIndex;
  /** The PackageManifest API, when served. */
  packageApi?: RunningPackageApi;
  /** The HTTP server's base URL, when it serves one. */
  url?: string;
  /** Whether every informer has synced. */
  ready(): boolean;
  /** Resolves when every work queue has nothing ready or running. */
  idle(): Promise<void>;
  /** Whether this manager's controllers run: it holds the Lease, or runs without leader election. */
  isLeader(): boolean;
  /**
   * Resolves when leadership is lost (the renew deadline passed): the controllers are stopped and
   * their writes refused; the process should exit non-zero at once, to start again as a standby.
   */
  lost: Promise<void>;
  stop(): Promise<void>;
}

/** The CRDs shipped in deploy/crds, parsed. */
export async function readCrds(): Promise<KubeObject[]> {
  const files = (await readdir(crdDir)).filter((f) => f.endsWith('.yaml')).sort();
  const out: KubeObject[] = [];
  for (const f of files) {
    const parsed = parseYamlOne(await readFile(new URL(f, crdDir), 'utf8'), f);
    if (!parsed.ok) throw new Error(`deploy/crds is broken: ${formatProblem(parsed.problem)}`);
    out.push(parsed.value as KubeObject);
  }
  return out;
}

export async function startManager(opts: ManagerOptions = {}): Promise<RunningManager> {
  const log = opts.logger ?? pino({ level: opts.logLevel ?? 'info', base: { component: 'bosun-manager' } });
  const clock = opts.clock ?? systemClock;
  const conn = await connectToCluster({ path: opts.kubeconfig, env: opts.env });
  const { client } = conn;
  log.info({ server: conn.server, version: conn.version, kubeconfig: conn.source }, 'connected to cluster');
  const applier = new Applier(client);
  // Timers of the controller runtime are unref'd (a pending retry must not keep a CLI alive), so
  // while waiting on them alone (e.g. for CRDs to be Established) Node would exit: the running
  // manager holds the process open until it is stopped.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stopping: (() => Promise<void> | void)[] = [() => clearInterval(keepAlive), () => client.close()];
  const stop = async () => {
    for (const fn of stopping.splice(0).reverse()) await fn();
  };

  try {
    await ensureCrds(client, applier, opts.installCrds === true, log);
    await cleanUpAfterCrash(client, opts.globalNamespace ?? DefaultGlobalNamespace, log, {
      // Behind deploy/'s Service the registration is every replica's: one that died leaves it to
      // the others, and an unavailable moment (all restarting) is no reason to take it away.
      registration: opts.packageApiServicePort === undefined,
    });

    const onInformerError = (name: string) => (error: unknown, during: string) =>
      log.warn({ informer: name, during, err: error }, 'informer error, retrying');
    const informer = <T extends KubeObject>(
      resource: ResourceType,
      labelSelector?: string,
      transform: (obj: T) => T = withoutBookkeeping,
    ): Informer<T> =>
      createInformer<T>(client, resource, {
        clock,
        ...(labelSelector ? { labelSelector } : {}),
        transform,
        onError: onInformerError(resource.plural),
      });
    const informers: Informers = {
      catalogSources: informer<CatalogSource>(Resources.CatalogSource),
      subscriptions: informer<Subscription>(Resources.Subscription),
      installPlans: informer<InstallPlan>(Resources.InstallPlan, undefined, slimInstallPlan),
      csvs: informer<ClusterServiceVersion>(Resources.ClusterServiceVersion, undefined, slimCSV),
      operatorGroups: informer<OperatorGroup>(Resources.OperatorGroup),
      operatorConditions: informer<OperatorCondition>(Resources.OperatorCondition),
      deployments: informer<Deployment>(Builtin.Deployment, managedSelector),
      crds: informer<CustomResourceDefinition>(Builtin.CustomResourceDefinition, undefined, slimCRD),
      namespaces: informer<Namespace>(Builtin.Namespace),
      operators: informer<Operator>(Resources.Operator),
      clusterRoles: informer<ClusterRole>(Builtin.ClusterRole, managedSelector),
      apiServices: informer<ObjectMetadata>(ServingResources.APIService, managedSelector, metadataOnly),
      serviceAccounts: informer<ObjectMetadata>(Builtin.ServiceAccount, managedSelector, metadataOnly),
      secrets: informer<ObjectMetadata>(ServingResources.Secret, managedSelector, metadataOnly),
      configMaps: informer<ObjectMetadata>(Builtin.ConfigMap, managedSelector, metadataOnly),
      services: informer<ObjectMetadata>(ServingResources.Service, managedSelector, metadataOnly),
      roles: informer<ObjectMetadata>(Builtin.Role, managedSelector, metadataOnly),
      roleBindings: informer<ObjectMetadata>(Builtin.RoleBinding, managedSelector, metadataOnly),
      clusterRoleBindings: informer<ObjectMetadata>(
        Builtin.ClusterRoleBinding,
        managedSelector,
        metadataOnly,
      ),
      clusterCatalogs: informer<ClusterCatalog>(V1Resources.ClusterCatalog),
      clusterExtensions: informer<ClusterExtension>(V1Resources.ClusterExtension),
    };
    const all = Object.values(informers) as Informer<KubeObject>[];
    stopping.push(() => Promise.all(all.map((i) => i.stop())).then(() => undefined));

    const { registry, metrics, watchQueue, watchLeader } = createMetrics();
    const catalogSpool = await CatalogSpool.open();
    stopping.push(() => catalogSpool.close());
    const catalogs = new MemoryCatalogStore(opts.globalNamespace ?? DefaultGlobalNamespace, (file) =>
      catalogSpool.remove(file),
    );
    // Catalog and bundle images: pulled with the CatalogSource's pull Secrets, over the
    // transport the admin set (registry-settings.ts), unpacked bundles kept in the spool folder.
    const registries = registryAccess({
      readSecret: pullSecretReader(client),
      transport: opts.registry ?? (await registryTransport(opts.env)),
    });
    const bundleImages = imageBundleContent({
      access: registries,
      secretsOf: (ref) => informers.catalogSources.get(refKey(ref))?.spec.secrets ?? [],
      cache: await BundleImageCache.open(join(catalogSpool.dir, 'bundle-images'), bundleCacheBytes(opts.env)),
    });
    // One fetcher per kind of source (src/catalog/content/fetcher.ts); a kind without one is
    // reported as not supported.
    const catalogFetchers: CatalogFetchers = {
      configmap: configMapFetcher({ spool: catalogSpool, read: configMapReader(client) }),
      http: httpFetcher({ spool: catalogSpool }),
      grpc: grpcFetcher({ spool: catalogSpool }),
      image: imageFetcher({ spool: catalogSpool, access: registries }),
    };
    // OLM v1's ClusterCatalogs: the same image fetch, served over catalogd's HTTP API by the HTTP
    // server below (whose URL is known once it listens, before any reconcile runs).
    let serverUrl: string | undefined;
    const served = servedCatalogs({ remove: (file) => catalogSpool.remove(file) });
    const pullSecret = opts.globalPullSecret ?? globalPullSecretOf(opts.env ?? process.env);
    // The bundles of the ClusterCatalogs served, for ClusterExtensions' installs; the controllers
    // find them by the catalog's cluster-wide ref beside the CatalogSources' (with-cluster-catalogs.ts).
    const clusterCatalogBundles = new MemoryCatalogStore('', (file) => catalogSpool.remove(file));
    const installCatalogs = withClusterCatalogs(catalogs, clusterCatalogBundles);
    const clusterCatalogs = clusterCatalogContent({
      spool: catalogSpool,
      access: registries,
      served,
      bundles: clusterCatalogBundles,
      ...(pullSecret ? { globalPullSecret: pullSecret } : {}),
      baseUrl: (name) => {
        const root = opts.catalogdUrl ?? serverUrl;
        return root === undefined ? undefined : catalogBaseUrl(root, name);
      },
    });
    // Each reconcile runs with its own child logger; `ctx.log` reads it from here.
    const reconcileLog = new AsyncLocalStorage<Logger>();
    const schemas = new SchemaSource({ client, crds: () => informers.crds.list(), clock });
    const globalNamespace = opts.globalNamespace ?? DefaultGlobalNamespace;
    // Events are best effort: an install goes on without them. One the API server refuses (the
    // manager may not create Events there) is a missing permission worth a warning, once per
    // distinct refusal; other failures stay at debug.
    const refusedEvents = new Set<string>();
    const eventNotRecorded = (err: unknown) => {
      const refused = accessRefusal(err);
      if (refused === undefined || refusedEvents.has(refused) || refusedEvents.size >= 100) {
        log.debug({ err }, 'event not recorded');
        return;
      }
      refusedEvents.add(refused);
      log.warn(`event not recorded: ${refused}`);
    };
    /** The controllers' ports, writing through `writer`: everything else is shared. */
    const contextWriting = (writer: KubeClient): ControllerContext => {
      const ctx = {
        client: writer,
        applier: writer === client ? applier : new Applier(writer),
        schemas,
        events: new EventRecorder({
          client: writer,
          clock,
          onError: (err) => eventNotRecorded(err),
        }),
        clock,
        informers,
        catalogs: installCatalogs,
        catalogFetchers,
        clusterCatalogContent: clusterCatalogs,
        bundles: catalogBundleContent(installCatalogs, bundleImages),
        globalNamespace,
        metrics,
      } as Omit<ControllerContext, 'log'> as ControllerContext;
      Object.defineProperty(ctx, 'log', { get: () => reconcileLog.getStore() ?? log, enumerable: true });
      return ctx;
    };

    const running = opts.controllers ?? controllers;
    const election = opts.leaderElection
      ? managerElection({ client, clock, log, globalNamespace, ...opts.leaderElection })
      : undefined;
    // Without leader election this manager is the only one and writes freely; with it, every write
    // of the controllers passes the election's gate, which closes the moment leadership ends.
    const ctx = contextWriting(election ? client.guarded(election.writeGate) : client);
    const controllerSet = (set: readonly Controller[], c: ControllerContext, standby = false): WorkQueue[] =>
      set.map((controller) => {
        // Each controller is given only the informers and ports it declared.
        const scoped = scopedContext(c, controller);
        const reconcile = controller.reconcile(scoped);
        const queue = new WorkQueue({
          clock,
          concurrency: opts.concurrency ?? 4,
          reconcile: (key) =>
            reconcileLog.run(reconcileLogger(log, controller, key), async () => {
              const result = dropInTerminatingNamespace(reconcile, key, c.log);
              return standby ? standbyOutcome(result) : result;
            }),
          onOutcome: (o) => reportOutcome(log, metrics, controller, o),
        });
        // Watches are registered before the informers start: informers replay nothing to a
        // handler added later, and a queue not started yet keeps the keys it is given.
        const unwatch = controller.watch(scoped, (key) => queue.add(key));
        if (unwatch) stopping.push(unwatch);
        if (!standby) watchQueue(controller.name, () => queue.depth());
        return queue;
      });
    const queues = controllerSet(running, ctx);
    // A standby keeps its catalogs loaded, to serve the web catalog and the PackageManifest API and
    // to take over without fetching them first; its CatalogSource reconciles fetch but cannot
    // write (status, Events): those writes are the leader's.
    const standbyQueues = election
      ? controllerSet(
          running.filter((c) => c === catalogSourceController || c === clusterCatalogController),
          contextWriting(client.guarded(refuseWrites('a standby manager does not write to the cluster'))),
          true,
        )
      : [];
    stopping.push(() =>
      drainThenRelease({
        queues: [...queues, ...standbyQueues],
        election,
        drainMs: opts.drainMs ?? 20_000,
        clock,
        log,
      }),
    );

    const packages = new PackageIndex({
      catalogs,
      catalogSource: (ref) => informers.catalogSources.get(objectKey(ref.namespace, ref.name)),
      onCatalogSourceChange: (listener) => {
        const ref = (cs: CatalogSource) => ({
          namespace: cs.metadata?.namespace ?? '',
          name: cs.metadata?.name ?? '',
        });
        return informers.catalogSources.on({
          add: (cs) => listener(ref(cs)),
          update: (_, cs) => listener(ref(cs)),
          delete: (cs) => listener(ref(cs)),
        });
      },
      readPayloads: (docs) => withPayloadsAll(docs),
      globalNamespace,
      log,
    });
    packages.start();
    stopping.push(() => packages.stop());

    for (const i of all) i.start();
    let packageApi: RunningPackageApi | undefined;
    // A replica behind the packageserver Service is routed to once ready: it must serve the
    // PackageManifest API by then (a standby waits for the leader's certificate before it does).
    const notReady = () => {
      const unsynced = all.filter((i) => !i.hasSynced()).length;
      if (unsynced > 0) return `${unsynced} of ${all.length} informers not synced`;
      if (opts.packageApiAddr && packageApi === undefined)
        return opts.packageApiServicePort !== undefined
          ? `not serving the PackageManifest API yet: its certificate Secret is not there or not usable (the leader writes it)`
          : 'not serving the PackageManifest API yet';
      return undefined;
    };
    watchLeader(() => (election ? election.isLeader() : true));

    let server: RunningServer | undefined;
    // One cache and rate limit of reviews for the web catalog's viewers and the PackageManifest API.
    const reviewer = new Reviewer(client, () => clock.now());
    const address = opts.metricsAddr === undefined ? DefaultMetricsAddress : opts.metricsAddr;
    if (address !== null) {
      const web = managerWebSource({ catalogs, packages, informers, globalNamespace: ctx.globalNamespace });
      stopping.push(() => web.stop());
      server = await startHttpServer({
        address,
        registry,
        notReady,
        // With leader election, /readyz says which role this replica has (both serve reads).
        ...(election ? { role: () => (election.isLeader() ? 'leader' : 'standby') } : {}),
        ...(opts.routes ? { routes: opts.routes } : {}),
        web: webCatalog(web, undefined, webAccess({ reviewer, globalNamespace: ctx.globalNamespace, log })),
        catalogd: catalogdHandler({
          catalogs: served,
          gzipCopies: gzipCopies({
            catalogs: served,
            remove: (file) => catalogSpool.remove(file),
            onError: (err, file) =>
              log.warn({ err, file }, 'cannot write the compressed copy of a served catalog'),
          }),
        }),
        // Clients of the catalogd API name the host of its URL, which is answered too.
        hostnames: [...(opts.webHosts ?? []), ...catalogdHostNames(opts.catalogdUrl)],
        log,
      });
      stopping.push(() => server?.close());
      serverUrl = server.url;
      log.info({ url: server.url }, 'serving the web catalog at /, and /healthz, /readyz and /metrics');
    }

    await Promise.all(all.map((i) => i.synced()));
    // Queues start after the caches are full, so no reconcile acts on a partial view; with leader
    // election, the controllers' queues start only once this manager holds the Lease.
    if (election) {
      for (const q of standbyQueues) q.start();
      election.start({
        onStartedLeading: async () => {
          // The standby's fetches cannot write; they are stopped so that no two reconciles of one
          // CatalogSource update the store at once, without waiting long on a slow fetch.
          await Promise.race([Promise.all(standbyQueues.map((q) => q.shutdown())), sleep(clock, 2_000)]);
          // A stop that came meanwhile has shut the queues down: they stay so.
          if (election.isLeader()) for (const q of queues) q.start();
        },
        // The gate is closed already; queued keys are dropped, running reconciles refused their writes.
        onLost: () => void Promise.all(queues.map((q) => q.shutdown())),
      });
    } else {
      for (const q of queues) q.start();
    }

    if (opts.packageApiAddr) {
      packageApi = await startPackageApi({
        address: opts.packageApiAddr,
        namespace: ctx.globalNamespace,
        index: packages,
        client,
        applier,
        clock,
        log,
        reviewer,
        ...(opts.packageApiServicePort !== undefined
          ? {
              shared: {
                servicePort: opts.packageApiServicePort,
                writer: election ? client.guarded(election.writeGate) : client,
                canWrite: () => (election ? election.isLeader() : true),
              },
            }
          : {}),
      });
      stopping.push(() => packageApi?.stop());
    }
    log.info({ controllers: running.map((c) => c.name) }, 'manager started');
    return {
      ctx,
      packages,
      ...(packageApi ? { packageApi } : {}),
      ...(server ? { url: server.url } : {}),
      ready: () => notReady() === undefined,
      idle: () => Promise.all(queues.map((q) => q.idle())).then(() => undefined),
      isLeader: () => (election ? election.isLeader() : true),
      lost: election ? election.lost : new Promise<never>(() => {}),
      stop: async () => {
        await stop();
        log.info('manager stopped');
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function reconcileLogger(log: Logger, controller: Controller, key: string): Logger {
  const where =
    controller.keyScope === 'namespace'
      ? { namespace: key }
      : (({ namespace, name }) => ({ namespace, name }))(splitKey(key));
  return log.child({
    controller: controller.name,
    kind: controller.kind ?? controller.name,
    ...where,
    reconcileID: randomUUID(),
  });
}

/**
 * A reconcile refused because its namespace is being deleted is not retried: every retry would be
 * refused the same way until the namespace's deletion removes the object, which is an event of
 * its own.
 */
async function dropInTerminatingNamespace(
  reconcile: Reconcile,
  key: string,
  log: Logger,
): ReturnType<Reconcile> {
  try {
    return await reconcile(key);
  } catch (err) {
    if (!isNamespaceTerminating(err)) throw err;
    log.debug({ err: parseApiError(err)?.message }, 'namespace is being deleted, not retrying');
    return undefined;
  }
}

function reportOutcome(
  log: Logger,
  metrics: ControllerContext['metrics'],
  controller: Controller,
  o: Outcome,
): void {
  metrics.reconciled(controller.name, o.kind, o.durationMs / 1000);
  const fields = { controller: controller.name, key: o.key, outcome: o.kind, durationMs: o.durationMs };
  if (o.kind === 'retry')
    log.info(
      { ...fields, attempt: o.attempt, delayMs: o.delayMs, err: o.error },
      'reconcile failed, retrying',
    );
  else log.debug(fields, 'reconciled');
}

/**
 * What a manager that died without stopping (killed, out of memory, aborted) left behind, removed
 * before this one starts: its spooled catalogs in the temporary folder (about 0.5 GB with the
 * corpus, per crash), and a PackageManifest APIService nobody serves any more, which makes every
 * namespace deletion in the cluster hang until it answers again. Only what is provably stale is
 * removed (see sweepStaleSpools and staleRegistration); failing to look is logged, not fatal.
 */
async function cleanUpAfterCrash(
  client: ControllerContext['client'],
  namespace: string,
  log: Logger,
  what: { registration: boolean },
): Promise<void> {
  const spools = await sweepStaleSpools();
  if (spools.length > 0) log.info({ removed: spools }, 'removed catalog spools of managers that are gone');
  if (!what.registration) return;
  try {
    const why = await removeStaleRegistration(client, namespace);
    if (why) log.info({ why }, 'removed the PackageManifest APIService a stopped manager left registered');
  } catch (err) {
    log.warn({ err }, 'could not check for a stale PackageManifest APIService');
  }
}

async function ensureCrds(
  client: ControllerContext['client'],
  applier: Applier,
  install: boolean,
  log: Logger,
): Promise<void> {
  const crds = await readCrds();
  if (install) {
    await installCrds(applier, client, crds);
    log.info({ crds: crds.length }, 'CRDs installed');
    return;
  }
  const missing: string[] = [];
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    try {
      await client.request({ path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}` });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      missing.push(name);
    }
  }
  if (missing.length > 0) {
    throw new UserError(
      `the cluster lacks Bosun's CRDs (${missing.join(', ')}): run with --install-crds, or kubectl apply -f deploy/crds/`,
    );
  }
}
