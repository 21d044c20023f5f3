/**
 * What each ClusterCatalog serves of one package, read as any OLM v1 client reads it: catalogd's
 * HTTP API at the catalog's `status.urls.base`, `/api/v1/metas?schema=...&package=<pkg>`.
 *
 * The URL comes from an object's status, which whoever may write that status chooses: it is
 * followed only when it is http(s) and its path is catalogd's for that very catalog
 * (`.../catalogs/<name>`), with no redirect, a deadline and a cap on the answer's size, and what
 * comes back is only read as data (a name compared, properties listed).
 */
import { ClusterCatalogConditionType, type ClusterCatalog } from '../apis/olmv1.js';
import { parseJsonStream } from '../bundle/json-stream.js';
import { isConditionTrue } from '../kube/conditions.js';
import type { CatalogOffer } from './migrate-plan.js';

/** More than the largest package of the 2021 community catalog answers with, by far. */
export const MaxAnswerBytes = 32 * 2 ** 20;
const RequestTimeoutMs = 30_000;

type Fetch = typeof fetch;

/** The catalog's metas URL for `schema` of `pkg`, or why its `status.urls.base` is not followed. */
export function metasUrl(cc: ClusterCatalog, schema: string, pkg: string): { url: URL } | { error: string } {
  const name = cc.metadata.name ?? '';
  const base = cc.status?.urls?.base;
  if (!base) return { error: 'status.urls.base is not set' };
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return { error: `status.urls.base ${JSON.stringify(base)} is not a URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { error: `status.urls.base ${JSON.stringify(base)} is not an http(s) URL` };
  if (url.username || url.password || url.search || url.hash)
    return { error: `status.urls.base ${JSON.stringify(base)} has credentials, a query or a fragment` };
  if (!url.pathname.replace(/\/+$/, '').endsWith(`/catalogs/${name}`))
    return {
      error: `status.urls.base ${JSON.stringify(base)} is not catalogd's address for catalog ${name} (…/catalogs/${name})`,
    };
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/v1/metas`;
  url.search = new URLSearchParams({ schema, package: pkg }).toString();
  return { url };
}

/** The documents the catalogd API answers `url` with, or why not. */
async function readMetas(url: URL, fetchFn: Fetch): Promise<{ docs: unknown[] } | { error: string }> {
  let res: Response;
  try {
    res = await fetchFn(url, { redirect: 'error', signal: AbortSignal.timeout(RequestTimeoutMs) });
  } catch (err) {
    return { error: `GET ${url.href}: ${reason(err)}` };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { error: `GET ${url.href}: HTTP ${res.status}` };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  try {
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      size += next.value.byteLength;
      // Stop reading, and close the connection, as soon as the answer passes the cap.
      if (size > MaxAnswerBytes) {
        await reader!.cancel();
        return { error: `GET ${url.href}: the answer is larger than ${MaxAnswerBytes} bytes` };
      }
      chunks.push(next.value);
    }
  } catch (err) {
    return { error: `GET ${url.href}: ${err instanceof Error ? err.message : String(err)}` };
  }
  const parsed = parseJsonStream(Buffer.concat(chunks).toString('utf8'), url.href);
  if (!parsed.ok) return { error: `GET ${url.href}: ${parsed.problem.message}` };
  return { docs: parsed.docs };
}

/** An error's message with its cause's (fetch says only "fetch failed"; the cause says why: a redirect refused, a refused connection). */
function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** The package's bundles and channels in each ClusterCatalog; a catalog not serving is not read. */
export async function readCatalogOffers(
  catalogs: readonly ClusterCatalog[],
  pkg: string,
  fetchFn: Fetch = fetch,
): Promise<CatalogOffer[]> {
  return Promise.all(
    catalogs.map(async (cc): Promise<CatalogOffer> => {
      const offer: CatalogOffer = {
        name: cc.metadata.name ?? '',
        labels: { ...cc.metadata.labels },
        priority: cc.spec.priority ?? 0,
        serving:
          cc.spec.availabilityMode !== 'Unavailable' &&
          isConditionTrue(cc.status?.conditions, ClusterCatalogConditionType.Serving),
        bundles: [],
        channels: [],
      };
      if (!offer.serving) return offer;
      for (const schema of ['olm.bundle', 'olm.channel'] as const) {
        const where = metasUrl(cc, schema, pkg);
        const read = 'url' in where ? await readMetas(where.url, fetchFn) : where;
        if ('error' in read) return { ...offer, error: read.error };
        // Only documents of the package asked for count, whatever else an answer holds.
        const docs = read.docs.filter((d) => isRecord(d) && d.schema === schema && d.package === pkg);
        if (schema === 'olm.bundle')
          offer.bundles = docs.filter(isRecord).map((d) => ({
            name: str(d.name),
            properties: (Array.isArray(d.properties) ? d.properties : [])
              .filter(isRecord)
              .map((p) => ({ type: str(p.type), value: p.value })),
          }));
        else
          offer.channels = docs.filter(isRecord).map((d) => ({
            name: str(d.name),
            entries: (Array.isArray(d.entries) ? d.entries : [])
              .filter(isRecord)
              .map((e) => ({ name: str(e.name) })),
          }));
      }
      return offer;
    }),
  );
}
