/**
 * CatalogSource controller: fetches a catalog's FBC content, validates it, keeps it in the
 * CatalogStore (no registry pods) and reports how that went in the CatalogSource's status.
 *
 * Steps per reconcile (reconcileCatalogSource): fetch (configmap | http) →
 * parse + validate → store content and health → write status if it changed → requeue after the
 * poll interval. A failed fetch keeps the last good content in the store (Subscriptions keep
 * resolving against it) but marks the catalog unhealthy, which Subscriptions show as
 * CatalogSourcesUnhealthy; the next good fetch clears it.
 */
import { type CatalogSource, DefaultRegistryPollInterval, Resources, SourceType } from '../apis/operators.js';
import { objectPath } from '../kube/client.js';
import { objectKey, splitKey } from '../kube/cache.js';
import { formatTime } from '../kube/conditions.js';
import { writeStatus } from '../kube/status.js';
import { formatApiError, isNotFound, parseApiError } from '../kube/errors.js';
import { Builtin } from '../kube/resources.js';
import { ConfigMapWatches } from './catalogsource-configmaps.js';
import type { ReconcileResult } from '../kube/workqueue.js';
import {
  CatalogSourceConditionReason,
  catalogSourceHeartbeats,
  catalogSourceStatus,
  checkCatalog,
  type ParsedCatalog,
  parseGoDuration,
  type SyncOutcome,
} from './catalogsource-content.js';
import { emptyConfig } from '../apis/fbc.js';
import { parseFileParts } from '../catalog/load.js';
import { catalogFileTooLarge } from '../catalog/limits.js';
import type { Problem } from '../util/result.js';
import type { Spooled } from './catalog-spool.js';
import type { CatalogRef, Controller, ScopedContext } from './context.js';

/** A failing source is retried this often (or at its poll interval, if that is sooner). */
const failureRetryMs = 10_000;
/** How long one HTTP fetch may take. */
const httpTimeoutMs = 30_000;
const defaultPollMs = parseGoDuration(DefaultRegistryPollInterval)!;

interface ConfigMap {
  metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

type Fetched =
  | {
      ok: true;
      spooled: Spooled;
      where: string;
      address?: string;
      configMap?: ConfigMap;
      /** The server said 304 Not Modified: the stored content is current, nothing was spooled. */
      notModified?: boolean;
    }
  | { ok: false; reason: CatalogSourceConditionReason; message: string; address?: string };

const uses = {
  informers: ['catalogSources'] as const,
  ports: ['applier', 'catalogSpool', 'catalogs', 'client', 'clock', 'events'] as const,
};

/** What this controller reads and writes through; the manager gives it nothing else. */
export type CatalogSourceContext = ScopedContext<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
>;

export const catalogSourceController: Controller<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
> = {
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
 * One reconcile, as named steps: fetch the content (configmap | http) to the spool, parse and
 * check it, record what came of it in the catalog store, report it in the status, and say when
 * to poll again.
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
  const fetched = await fetchCatalog(ctx, cs);
  const synced = fetched.ok
    ? await syncContent(ctx, cs, ref, fetched)
    : recordFailure(ctx, cs, ref, fetched, ctx.clock.now());
  const interval = pollInterval(cs);
  await reportStatus(ctx, cs, synced, interval);
  return nextPoll(cs, synced.outcome, interval);
}

interface Synced {
  outcome: SyncOutcome;
  /** The store took new content: the status is written even if only heartbeats moved. */
  contentChanged: boolean;
}

type Failure = { reason: CatalogSourceConditionReason; message: string; address?: string };

/** Steps 2 and 3: fetched content is parsed and checked, then stored, or refused as invalid. */
async function syncContent(
  ctx: CatalogSourceContext,
  cs: CatalogSource,
  ref: CatalogRef,
  fetched: Extract<Fetched, { ok: true }>,
): Promise<Synced> {
  const parsed = await parseFetched(ctx, ref, fetched);
  const at = ctx.clock.now();
  if (parsed.ok) return storeContent(ctx, cs, ref, fetched, parsed, at);
  const reason = CatalogSourceConditionReason.InvalidCatalog;
  return recordFailure(ctx, cs, ref, { reason, message: parsed.message, address: fetched.address }, at);
}

/**
 * Step 3, content: the store takes it when its digest or the priority changed (otherwise the
 * old snapshot and its fetchedAt stay, so listeners stay quiet), and the catalog is healthy.
 */
function storeContent(
  ctx: CatalogSourceContext,
  cs: CatalogSource,
  ref: CatalogRef,
  fetched: Extract<Fetched, { ok: true }>,
  parsed: Extract<ParsedCatalog, { ok: true }> & { payloadFile?: string },
  at: number,
): Synced {
  const { config, digest } = parsed;
  const previous = ctx.catalogs.get(ref);
  const priority = cs.spec.priority ?? 0;
  const contentChanged = previous?.digest !== digest || previous.priority !== priority;
  if (contentChanged) {
    const payloadFile =
      parsed.payloadFile ?? (previous?.digest === digest ? previous.payloadFile : undefined);
    ctx.catalogs.set({
      ref,
      priority,
      config,
      digest,
      fetchedAt: at,
      ...(payloadFile ? { payloadFile } : {}),
    });
    ctx.log.info({ digest, bundles: config.bundles.length }, 'catalog content loaded');
    void ctx.events.normal(
      cs,
      'CatalogSynced',
      `loaded ${config.packages.length} packages, ${config.bundles.length} bundles`,
    );
  }
  ctx.catalogs.setHealth({ ref, healthy: true, checkedAt: at });
  const cm = fetched.configMap;
  const outcome: SyncOutcome = {
    ok: true,
    at,
    address: fetched.address,
    packages: config.packages.length,
    bundles: config.bundles.length,
    ...(cm
      ? {
          configMap: {
            name: cm.metadata.name,
            namespace: cm.metadata.namespace,
            uid: cm.metadata.uid,
            resourceVersion: cm.metadata.resourceVersion,
            lastUpdateTime: formatTime(at),
          },
        }
      : {}),
  };
  return { outcome, contentChanged };
}

/** Step 3, failure: the last good content stays in the store, but the catalog is unhealthy. */
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

/** Step 4: the status, written when it changed (or when new content came). */
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

/** Step 5: poll again at the interval, or sooner while the source fails. */
function nextPoll(
  cs: CatalogSource,
  outcome: SyncOutcome,
  interval: ReturnType<typeof pollInterval>,
): ReconcileResult | undefined {
  if (cs.spec.sourceType === SourceType.Grpc) return undefined; // nothing to poll until grpc lands
  return { requeueAfter: outcome.ok ? interval.ms : Math.min(interval.ms, failureRetryMs) };
}

/**
 * Spooled content → a validated catalog. Content the store already holds (the same digest: most
 * polls) is not parsed again and its new copy is dropped. New content is parsed with its inline
 * manifests left in the spooled file, to be read from there when a bundle is installed.
 */
async function parseFetched(
  ctx: CatalogSourceContext,
  ref: CatalogRef,
  fetched: Extract<Fetched, { ok: true }>,
): Promise<ParsedCatalog & { payloadFile?: string }> {
  const { path, digest, parts } = fetched.spooled;
  const previous = ctx.catalogs.get(ref);
  if (previous?.digest === digest) {
    if (!fetched.notModified) await ctx.catalogSpool.remove(path);
    return { ok: true, config: previous.config, digest, warnings: [] };
  }
  const config = emptyConfig();
  const problems: Problem[] = [];
  let parsed: ParsedCatalog | undefined;
  try {
    await parseFileParts(path, parts, config, problems);
    parsed = checkCatalog(config, problems, digest, fetched.where);
    return parsed.ok ? { ...parsed, payloadFile: path } : parsed;
  } finally {
    // Only valid content is kept: its snapshot's payloads are read from the file.
    if (!parsed?.ok) await ctx.catalogSpool.remove(path);
  }
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

async function fetchCatalog(ctx: CatalogSourceContext, cs: CatalogSource): Promise<Fetched> {
  const { namespace, name } = cs.metadata;
  const ref: CatalogRef = { namespace: namespace ?? '', name: name ?? '' };
  switch (cs.spec.sourceType) {
    case SourceType.ConfigMap:
    case SourceType.Internal:
      return fetchConfigMap(ctx, ref, cs.spec.configMap);
    case SourceType.Http:
      return fetchHttp(ctx, ref, cs.spec.address);
    case SourceType.Grpc:
      return {
        ok: false,
        reason: CatalogSourceConditionReason.SourceTypeNotSupported,
        message:
          `CatalogSource ${namespace}/${name}: sourceType grpc (catalog images and registry addresses) is not supported yet; ` +
          'render the catalog to one file (`bosun catalog render <dir> -o json`), serve that file over HTTP and use sourceType http, or put it in a ConfigMap (sourceType configmap)',
        address: cs.spec.image ?? cs.spec.address,
      };
    default:
      return {
        ok: false,
        reason: CatalogSourceConditionReason.SpecInvalidError,
        message: `spec.sourceType: "${String(cs.spec.sourceType)}" is not one of configmap, http, grpc`,
      };
  }
}

async function fetchConfigMap(
  ctx: CatalogSourceContext,
  ref: CatalogRef,
  name: string | undefined,
): Promise<Fetched> {
  const { namespace } = ref;
  if (!name) {
    return {
      ok: false,
      reason: CatalogSourceConditionReason.SpecInvalidError,
      message: 'spec.configMap: sourceType configmap needs the name of a ConfigMap in the same namespace',
    };
  }
  const where = `ConfigMap ${namespace}/${name}`;
  let cm: ConfigMap;
  try {
    cm = await ctx.client.request<ConfigMap>({ path: objectPath(Builtin.ConfigMap, name, namespace) });
  } catch (err) {
    const apiError = parseApiError(err);
    if (!apiError) throw err;
    const message = isNotFound(err)
      ? `${where} (spec.configMap) does not exist: create it with FBC documents in its data, or fix spec.configMap`
      : `${where}: ${formatApiError(apiError)}`;
    return { ok: false, reason: CatalogSourceConditionReason.ConfigMapError, message };
  }
  const files = Object.entries(cm.data ?? {}).map(([key, text]) => ({
    name: `${where} data.${key}`,
    bytes: Buffer.from(text),
  }));
  if (files.length === 0) {
    return {
      ok: false,
      reason: CatalogSourceConditionReason.ConfigMapError,
      message: `${where} has no data: put the catalog's FBC documents under any key`,
    };
  }
  return { ok: true, spooled: await ctx.catalogSpool.writeFiles(ref, files), where, configMap: cm };
}

async function fetchHttp(
  ctx: CatalogSourceContext,
  ref: CatalogRef,
  address: string | undefined,
): Promise<Fetched> {
  if (!address || !/^https?:\/\//.test(address)) {
    return {
      ok: false,
      reason: CatalogSourceConditionReason.SpecInvalidError,
      message: `spec.address: sourceType http needs an http:// or https:// URL serving FBC, found ${JSON.stringify(address ?? '')}`,
      address,
    };
  }
  // A poll of unchanged content costs nothing when the server gives ETags: it answers 304.
  const tags = etagsOf(ctx);
  const key = `${ref.namespace}/${ref.name} ${address}`;
  const known = tags.get(key);
  const conditional = known !== undefined && ctx.catalogs.get(ref)?.digest === known.digest;
  let spooled: Spooled;
  try {
    const res = await fetch(address, {
      signal: AbortSignal.timeout(httpTimeoutMs),
      ...(conditional ? { headers: { 'If-None-Match': known.etag } } : {}),
    });
    if (res.status === 304 && conditional) {
      await res.body?.cancel();
      const unchanged = { path: '', digest: known.digest, parts: [] };
      return { ok: true, spooled: unchanged, where: address, address, notModified: true };
    }
    if (!res.ok) {
      await res.body?.cancel();
      return {
        ok: false,
        reason: CatalogSourceConditionReason.RegistryServerError,
        message: `GET ${address}: HTTP ${res.status} ${res.statusText}`.trim(),
        address,
      };
    }
    // A body that says it is too large is refused unread; one that does not say is cut off at
    // the limit while it streams to disk (writeStream).
    const declared = catalogFileTooLarge(Number(res.headers.get('content-length') ?? 0));
    if (declared) {
      await res.body?.cancel();
      return {
        ok: false,
        reason: CatalogSourceConditionReason.RegistryServerError,
        message: `GET ${address}: the body ${declared}`,
        address,
      };
    }
    spooled = await ctx.catalogSpool.writeStream(ref, address, res.body ?? emptyBody());
    const etag = res.headers.get('etag');
    if (etag) tags.set(key, { etag, digest: spooled.digest });
    else tags.delete(key);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    return {
      ok: false,
      reason: CatalogSourceConditionReason.RegistryServerError,
      message: `GET ${address}: ${why}`,
      address,
    };
  }
  return { ok: true, spooled, where: address, address };
}

async function* emptyBody(): AsyncIterable<Uint8Array> {}

/** The ETag each http catalog last came with, and the digest of that content; per manager (its store). */
const etagsByStore = new WeakMap<object, Map<string, { etag: string; digest: string }>>();
function etagsOf(ctx: CatalogSourceContext) {
  let tags = etagsByStore.get(ctx.catalogs);
  if (!tags) etagsByStore.set(ctx.catalogs, (tags = new Map()));
  return tags;
}
