/**
 * CatalogSource controller: fetches a catalog's FBC content, keeps it in the CatalogStore (no
 * registry pods) and reports how that went in the CatalogSource's status.
 *
 * Steps per reconcile (reconcileCatalogSource): fetch with the fetcher of the source's kind
 * (src/catalog/content: configmap, http, a registry server's grpc address, a catalog image; each parses and checks
 * what it fetched) → store content and health → write status if it changed → requeue after the
 * poll interval. A failed fetch keeps the last good content in the store (Subscriptions keep
 * resolving against it) but marks the catalog unhealthy, which Subscriptions show as
 * CatalogSourcesUnhealthy; the next good fetch clears it.
 */
import { type CatalogSource, DefaultRegistryPollInterval, Resources } from '../apis/operators.js';
import { type FetchOutcome, SourceKind } from '../catalog/content/fetcher.js';
import type { CatalogRef } from '../catalog/content/store.js';
import { objectKey, splitKey } from '../kube/cache.js';
import { formatTime } from '../kube/conditions.js';
import { writeStatus } from '../kube/status.js';
import type { ReconcileResult } from '../kube/workqueue.js';
import { ConfigMapWatches } from './catalogsource-configmaps.js';
import {
  CatalogSourceConditionReason,
  catalogSourceHeartbeats,
  catalogSourceStatus,
  parseGoDuration,
  sourceKindOf,
  type SyncOutcome,
} from './catalogsource-content.js';
import type { Controller, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';

/** A failing source is retried this often (or at its poll interval, if that is sooner). */
const failureRetryMs = 10_000;
/**
 * No fetch holds a reconcile longer than this, whatever its fetcher's own limits (an HTTP fetch
 * has 30 s, a registry server's 5 minutes).
 */
const fetchDeadlineMs = 10 * 60_000;
const defaultPollMs = parseGoDuration(DefaultRegistryPollInterval)!;

const uses = {
  informers: ['catalogSources'] as const,
  ports: ['applier', 'catalogFetchers', 'catalogs', 'client', 'clock', 'events'] as const,
};

/** What this controller reads and writes through; the manager gives it nothing else. */
export type CatalogSourceContext = ScopedContext<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
>;

const catalogSourceControllerOwn: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> = {
  ...uses,
  name: 'catalogsource',
  kind: 'CatalogSource',
  watch(ctx, enqueue) {
    const configMaps = new ConfigMapWatches(ctx.client, enqueue);
    ctx.informers.catalogSources.on({
      add: (cs) => {
        configMaps.follow(objectKey(cs), cs);
        enqueue(objectKey(cs));
      },
      // Status writes (our own) do not change the generation; only spec changes need a new fetch.
      update: (old, cs) => {
        configMaps.follow(objectKey(cs), cs);
        if (old.metadata.generation !== cs.metadata.generation) enqueue(objectKey(cs));
      },
      delete: (cs) => {
        configMaps.follow(objectKey(cs), undefined);
        enqueue(objectKey(cs));
      },
    });
    return () => configMaps.stop();
  },
  reconcile(ctx) {
    return async (key) => reconcileCatalogSource(ctx, key);
  },
};

/**
 * One reconcile, as named steps: fetch the content (the fetcher parses and checks it), record
 * what came of it in the catalog store, report it in the status, and say when to poll again.
 */
async function reconcileCatalogSource(
  ctx: CatalogSourceContext,
  key: string,
): Promise<ReconcileResult | undefined> {
  const { namespace = '', name } = splitKey(key);
  const ref: CatalogRef = { namespace, name };
  const cs = ctx.informers.catalogSources.get(key);
  if (!cs || cs.metadata.deletionTimestamp) {
    ctx.catalogs.delete(ref);
    return undefined;
  }
  const fetched = await fetchCatalog(ctx, cs, ref);
  const at = ctx.clock.now();
  const synced = fetched.ok
    ? storeContent(ctx, cs, ref, fetched, at)
    : recordFailure(ctx, cs, ref, fetched, at);
  const interval = pollInterval(cs);
  await reportStatus(ctx, cs, synced, interval);
  return nextPoll(synced.outcome, interval);
}

interface Synced {
  outcome: SyncOutcome;
  /** The store took new content: the status is written even if only heartbeats moved. */
  contentChanged: boolean;
}

type Failure = Extract<FetchOutcome, { ok: false }>;

/**
 * Step 1: the fetcher of the source's kind reads it, given the content the store holds (the
 * same content is given back unparsed). A kind no fetcher reads is not supported.
 */
async function fetchCatalog(
  ctx: CatalogSourceContext,
  cs: CatalogSource,
  ref: CatalogRef,
): Promise<FetchOutcome> {
  const kind = sourceKindOf(cs);
  if (kind === undefined) {
    return {
      ok: false,
      reason: CatalogSourceConditionReason.SpecInvalidError,
      message: `spec.sourceType: "${String(cs.spec.sourceType)}" is not one of configmap, http, grpc`,
    };
  }
  const fetcher = ctx.catalogFetchers[kind];
  if (!fetcher) return notSupported(cs, kind);
  return fetcher.fetch(cs, ctx.catalogs.get(ref), AbortSignal.timeout(fetchDeadlineMs));
}

function notSupported(cs: CatalogSource, kind: SourceKind): Failure {
  const { namespace, name } = cs.metadata;
  const address = kind === SourceKind.Image ? cs.spec.image : cs.spec.address;
  return {
    ok: false,
    reason: CatalogSourceConditionReason.SourceTypeNotSupported,
    message: `CatalogSource ${namespace}/${name}: sourceType ${cs.spec.sourceType} is not read by this manager`,
    ...(address !== undefined ? { address } : {}),
  };
}

/**
 * Step 2, content: the store takes it when its digest or the priority changed (otherwise the
 * old snapshot and its fetchedAt stay, so listeners stay quiet), and the catalog is healthy.
 */
function storeContent(
  ctx: CatalogSourceContext,
  cs: CatalogSource,
  ref: CatalogRef,
  fetched: Extract<FetchOutcome, { ok: true }>,
  at: number,
): Synced {
  const { config, digest, payloadFile } = fetched.content;
  const previous = ctx.catalogs.get(ref);
  const priority = cs.spec.priority ?? 0;
  const contentChanged = previous?.digest !== digest || previous.priority !== priority;
  if (contentChanged) {
    ctx.catalogs.set({
      ref,
      priority,
      config,
      digest,
      fetchedAt: at,
      ...(payloadFile ? { payloadFile } : {}),
    });
    ctx.log.info({ digest, bundles: config.bundles.length, image: fetched.image }, 'catalog content loaded');
    // A catalog image names the digest it was read at: the tag alone does not say which content.
    const from = fetched.image ? ` from ${fetched.image}` : '';
    void ctx.events.normal(
      cs,
      'CatalogSynced',
      `loaded ${config.packages.length} packages, ${config.bundles.length} bundles${from}`,
    );
  }
  ctx.catalogs.setHealth({ ref, healthy: true, checkedAt: at });
  const cm = fetched.configMap;
  const outcome: SyncOutcome = {
    ok: true,
    at,
    address: fetched.address,
    ...(fetched.image ? { image: fetched.image } : {}),
    packages: config.packages.length,
    bundles: config.bundles.length,
    ...(cm ? { configMap: { ...cm, lastUpdateTime: formatTime(at) } } : {}),
  };
  return { outcome, contentChanged };
}

/** Step 2, failure: the last good content stays in the store, but the catalog is unhealthy. */
function recordFailure(
  ctx: CatalogSourceContext,
  cs: CatalogSource,
  ref: CatalogRef,
  failure: Failure,
  at: number,
): Synced {
  const { reason, message, address } = failure;
  ctx.catalogs.setHealth({ ref, healthy: false, message, checkedAt: at });
  ctx.log.info({ reason, message }, 'catalog source unhealthy');
  void ctx.events.warning(cs, reason, message);
  return { outcome: { ok: false, at, address, reason, message }, contentChanged: false };
}

/** Step 3: the status, written when it changed (or when new content came). */
async function reportStatus(
  ctx: CatalogSourceContext,
  cs: CatalogSource,
  synced: Synced,
  interval: ReturnType<typeof pollInterval>,
) {
  const status = catalogSourceStatus(cs, synced.outcome);
  if (!interval.ok) status.message = interval.message;
  await writeStatus(ctx.applier, {
    resource: Resources.CatalogSource,
    object: cs,
    next: status,
    ignore: catalogSourceHeartbeats,
    force: synced.contentChanged,
  });
}

/** Step 4: poll again at the interval, or sooner while the source fails; a kind no fetcher reads, never. */
function nextPoll(
  outcome: SyncOutcome,
  interval: ReturnType<typeof pollInterval>,
): ReconcileResult | undefined {
  if (!outcome.ok && outcome.reason === CatalogSourceConditionReason.SourceTypeNotSupported) return undefined;
  return { requeueAfter: outcome.ok ? interval.ms : Math.min(interval.ms, failureRetryMs) };
}

/** `spec.updateStrategy.registryPoll.interval`, or OLM's default when it is missing or does not parse. */
function pollInterval(
  cs: CatalogSource,
): { ok: true; ms: number } | { ok: false; ms: number; message: string } {
  const text = cs.spec.updateStrategy?.registryPoll?.interval;
  if (text === undefined) return { ok: true, ms: defaultPollMs };
  const ms = parseGoDuration(text);
  if (ms === undefined || ms <= 0) {
    return {
      ok: false,
      ms: defaultPollMs,
      message: `spec.updateStrategy.registryPoll.interval: "${text}" is not a Go duration like 30s, 10m or 1h30m; polling every ${DefaultRegistryPollInterval}`,
    };
  }
  return { ok: true, ms };
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const catalogSourceController = reportingForbidden(catalogSourceControllerOwn, (ctx, key) =>
  [ctx.informers.catalogSources.get(key)].filter((o) => o !== undefined),
);
