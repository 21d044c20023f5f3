/**
 * ClusterCatalog controller (OLM v1): pulls `spec.source.image.ref` in-process with the catalog
 * image fetcher CatalogSources use, serves the content over catalogd's HTTP API
 * (src/server/catalogd.ts) and reports it in the status as operator-controller v1.2.0's catalogd
 * does (clustercatalog-status.ts).
 *
 * Steps per reconcile: gone or `availabilityMode: Unavailable` → stop serving → fetch (nothing is
 * pulled while the digest is the one served) → serve new content → status → poll again after
 * `pollIntervalMinutes` (a digest reference has none: the CRD refuses one). A fetch that fails
 * never replaces the content served; `Progressing` says why and it is retried.
 *
 * No finalizer: the content lives in this process (memory and its spool), so a deletion the
 * manager sees frees it, and one it does not see (it was not running) left nothing behind.
 */
import { AvailabilityMode, type ClusterCatalog, V1Resources } from '../apis/olmv1.js';
import { FetchFailureReason } from '../catalog/content/fetcher.js';
import type { ServedCatalog } from '../catalog/content/served.js';
import { writeStatus } from '../kube/status.js';
import type { ReconcileResult } from '../kube/workqueue.js';
import {
  type ClusterCatalogOutcome,
  clusterCatalogRequeue,
  clusterCatalogStatus,
  type ServingState,
} from './clustercatalog-status.js';
import type { Controller, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';

/** No fetch holds a reconcile longer than this. */
const fetchDeadlineMs = 10 * 60_000;

const uses = {
  informers: ['clusterCatalogs'] as const,
  ports: ['applier', 'clusterCatalogContent', 'clock'] as const,
};

export type ClusterCatalogContext = ScopedContext<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
>;

const clusterCatalogControllerOwn: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> =
  {
    ...uses,
    name: 'clustercatalog',
    kind: 'ClusterCatalog',
    watch(ctx, enqueue) {
      const key = (cc: ClusterCatalog) => cc.metadata.name ?? '';
      ctx.informers.clusterCatalogs.on({
        add: (cc) => enqueue(key(cc)),
        // Status writes (ours) leave the generation alone; a new spec, or a deletion begun, is work.
        update: (old, cc) => {
          if (old.metadata.generation !== cc.metadata.generation || cc.metadata.deletionTimestamp)
            enqueue(key(cc));
        },
        delete: (cc) => enqueue(key(cc)),
      });
    },
    reconcile(ctx) {
      return async (key) => reconcileClusterCatalog(ctx, key);
    },
  };

async function reconcileClusterCatalog(
  ctx: ClusterCatalogContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  const cc = ctx.informers.clusterCatalogs.get(name);
  if (!cc || cc.metadata.deletionTimestamp) {
    stopServing(ctx, name);
    return undefined;
  }
  if (cc.spec.availabilityMode === AvailabilityMode.Unavailable) {
    stopServing(ctx, name);
    await report(ctx, cc, { kind: 'unavailable' });
    return undefined;
  }
  const outcome = await unpack(ctx, cc, name);
  await report(ctx, cc, outcome);
  return clusterCatalogRequeue(cc, outcome);
}

/**
 * Fetch and serve: the image's digest is compared with the one served, and only new content is
 * pulled, written out and put in place of the old. What fails leaves the old in place.
 */
async function unpack(
  ctx: ClusterCatalogContext,
  cc: ClusterCatalog,
  name: string,
): Promise<ClusterCatalogOutcome> {
  const content = ctx.clusterCatalogContent;
  const held = content.served.get(name);
  const baseUrl = content.baseUrl(name);
  const servingOf = (c: ServedCatalog | undefined): ServingState | undefined =>
    c && baseUrl !== undefined ? { image: c.image, lastModified: c.lastModified, baseUrl } : undefined;
  if (baseUrl === undefined)
    return {
      kind: 'failed',
      terminal: true,
      message: 'catalog content is not served: this manager runs without its HTTP server (--metrics-addr)',
    };
  const image = cc.spec.source.image?.ref ?? '';
  const got = await content.fetch(name, image, held?.digest, AbortSignal.timeout(fetchDeadlineMs));
  if (!got.ok) {
    const serving = servingOf(held);
    return {
      kind: 'failed',
      // Retrying cannot make a reference that does not parse readable: v1 blocks on it too.
      terminal: got.reason === FetchFailureReason.SpecInvalidError,
      message: `source catalog content: ${got.message}`,
      ...(serving ? { serving } : {}),
    };
  }
  if (got.unchanged && held) return { kind: 'serving', serving: servingOf(held)! };
  if (got.unchanged)
    throw new Error(`ClusterCatalog ${name}: the fetch found the digest served, but nothing is served`);
  let prepared: Awaited<ReturnType<typeof content.prepare>>;
  try {
    prepared = await content.prepare(name, got.content, got.files);
  } catch (err) {
    const serving = servingOf(held);
    return {
      kind: 'failed',
      terminal: false,
      message: `error storing fbc: ${(err as Error).message}`,
      ...(serving ? { serving } : {}),
    };
  }
  const served: ServedCatalog = {
    ...prepared,
    image: got.image,
    lastModified: lastUnpacked(cc, got.image, ctx.clock.now()),
  };
  content.served.set(name, served);
  content.bundles.set({
    ref: { namespace: '', name },
    priority: cc.spec.priority ?? 0,
    config: got.content.config,
    digest: got.content.digest,
    fetchedAt: ctx.clock.now(),
    ...(got.content.payloadFile ? { payloadFile: got.content.payloadFile } : {}),
  });
  ctx.log.info({ image: got.image, bytes: served.size }, 'catalog content served');
  return { kind: 'serving', serving: servingOf(served)! };
}

function stopServing(ctx: ClusterCatalogContext, name: string) {
  ctx.clusterCatalogContent.served.delete(name);
  ctx.clusterCatalogContent.bundles.delete({ namespace: '', name });
}

/**
 * When the content last changed: now, unless the status already names this very digest (a
 * manager that started again reads the same content: it did not change).
 */
function lastUnpacked(cc: ClusterCatalog, image: string, now: number): number {
  const status = cc.status;
  const then = status?.lastUnpacked ? Date.parse(status.lastUnpacked) : NaN;
  if (status?.resolvedSource?.image?.ref === image && Number.isFinite(then)) return then;
  return Math.floor(now / 1000) * 1000;
}

async function report(ctx: ClusterCatalogContext, cc: ClusterCatalog, outcome: ClusterCatalogOutcome) {
  await writeStatus(ctx.applier, {
    resource: V1Resources.ClusterCatalog,
    object: cc,
    next: clusterCatalogStatus(cc, outcome, ctx.clock.now()),
  });
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const clusterCatalogController = reportingForbidden(clusterCatalogControllerOwn, (ctx, key) =>
  [ctx.informers.clusterCatalogs.get(key)].filter((o) => o !== undefined),
);
