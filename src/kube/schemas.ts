/**
 * The live schema of a kind, for pruning what Bosun applies (src/install/prune.ts):
 * - a custom resource's: its CustomResourceDefinition's schema for the version, read from the
 *   manager's CRD informer (a cache the API server keeps current), so it is there as soon as the
 *   CRD is;
 * - a built-in kind's: the OpenAPI v3 document the API server publishes for the group/version.
 *   The index (`/openapi/v3`) names each document with a hash of its content; a document is
 *   fetched once, kept (compacted to what pruning reads) and fetched again only when a newer index
 *   names it with another hash. The index itself is trusted for `indexMaxAgeMs`, and read again
 *   at once when it lacks the group/version or the document lacks the kind (a kind served only
 *   since then).
 * Concurrent requests for the same document share one fetch.
 */
import {
  crdKindSchema,
  documentKindSchema,
  type KindSchema,
  type OpenAPIDocument,
  type Pruned,
  pruneObject,
  readOpenAPIDocument,
} from '../install/prune.js';
import type { KubeClient } from './client.js';
import type { Clock } from './clock.js';
import { isNotFound } from './errors.js';

/** How long the OpenAPI v3 index is trusted before it is read again. */
export const defaultIndexMaxAgeMs = 30_000;
/** A miss reads the index again, but not more often than this. */
const missRefreshMs = 1_000;

export interface SchemaSourceOptions {
  client: Pick<KubeClient, 'request'>;
  /** The CustomResourceDefinitions the manager's informer holds. */
  crds: () => readonly unknown[];
  clock: Clock;
  indexMaxAgeMs?: number;
}

/** What fetching has cost so far, for logs and benchmarks. */
export interface SchemaSourceStats {
  indexFetches: number;
  documentFetches: number;
  /** Milliseconds spent fetching and reading documents and the index. */
  fetchMs: number;
}

interface IndexSnapshot {
  /** `apis/apps/v1` (or `api/v1`) → its document's server-relative URL, hash included. */
  paths: Map<string, string>;
  fetchedAt: number;
}

interface CachedDocument {
  url: string;
  doc: OpenAPIDocument;
}

export class SchemaSource {
  private index: IndexSnapshot | undefined;
  private indexFetch: Promise<IndexSnapshot> | undefined;
  private readonly documents = new Map<string, CachedDocument>();
  private readonly documentFetches = new Map<string, Promise<CachedDocument>>();
  /** Each CRD's schemas by version, for the resourceVersion they were read at. */
  private readonly crdSchemas = new Map<
    string,
    { resourceVersion: string; byVersion: Map<string, KindSchema | undefined> }
  >();
  private readonly crdFetches = new Map<string, Promise<Map<string, KindSchema | undefined>>>();
  private readonly counters: SchemaSourceStats = {
    indexFetches: 0,
    documentFetches: 0,
    fetchMs: 0,
  };

  constructor(private readonly opts: SchemaSourceOptions) {}

  /**
   * The schema of `kind` in `apiVersion`, or undefined when the server publishes none (the
   * object is then applied as it is, and the server says what it thinks of it).
   */
  async schemaFor(apiVersion: string, kind: string): Promise<KindSchema | undefined> {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    const crd = this.findCrd(group, kind);
    if (crd !== undefined) return (await this.schemasOfCrd(crd)).get(version);
    return this.builtinSchema(group, version, kind);
  }

  /**
   * `obj` without the fields its kind's live schema does not declare, and their paths; `obj`
   * itself when there is no schema to prune by.
   */
  async prune<T extends { apiVersion?: string; kind?: string }>(obj: T): Promise<Pruned<T>> {
    if (!obj.apiVersion || !obj.kind) return { value: obj, fields: [] };
    const schema = await this.schemaFor(obj.apiVersion, obj.kind);
    return schema === undefined ? { value: obj, fields: [] } : pruneObject(obj, schema);
  }

  stats(): SchemaSourceStats {
    return { ...this.counters };
  }

  private findCrd(group: string, kind: string): object | undefined {
    if (group === '') return undefined;
    for (const crd of this.opts.crds()) {
      const spec = (crd as { spec?: { group?: string; names?: { kind?: string } } }).spec;
      if (spec?.group === group && spec.names?.kind === kind) return crd as object;
    }
    return undefined;
  }

  /**
   * A CRD's schemas by version, read once per resourceVersion of the CRD. The manager's informer
   * keeps CRDs without their schemas (they are most of a CRD's size, and only pruning reads
   * them), so the schemas come from the CRD itself, read from the API server when the informer's
   * object has none.
   */
  private async schemasOfCrd(crd: object): Promise<Map<string, KindSchema | undefined>> {
    const meta = (crd as { metadata?: { name?: string; resourceVersion?: string } }).metadata;
    const name = meta?.name ?? '';
    const resourceVersion = meta?.resourceVersion ?? '';
    const cached = this.crdSchemas.get(name);
    if (cached !== undefined && cached.resourceVersion === resourceVersion) return cached.byVersion;
    const key = `${name}@${resourceVersion}`;
    let pending = this.crdFetches.get(key);
    if (pending === undefined) {
      pending = (async () => {
        const full = hasSchemas(crd)
          ? crd
          : await this.opts.client.request<object>({
              path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`,
            });
        const byVersion = new Map<string, KindSchema | undefined>();
        for (const v of versionNames(full)) byVersion.set(v, crdKindSchema(full, v));
        this.crdSchemas.set(name, { resourceVersion, byVersion });
        return byVersion;
      })().finally(() => this.crdFetches.delete(key));
      this.crdFetches.set(key, pending);
    }
    return pending;
  }

  private async builtinSchema(group: string, version: string, kind: string): Promise<KindSchema | undefined> {
    const path = group === '' ? `api/${version}` : `apis/${group}/${version}`;
    const now = this.opts.clock.now();
    const maxAge = this.opts.indexMaxAgeMs ?? defaultIndexMaxAgeMs;
    let index = this.index;
    if (index === undefined || now - index.fetchedAt >= maxAge) index = await this.readIndex();
    let found = await this.lookup(index, path, group, version, kind);
    if (found === undefined && this.opts.clock.now() - index.fetchedAt >= missRefreshMs) {
      index = await this.readIndex();
      found = await this.lookup(index, path, group, version, kind);
    }
    return found;
  }

  private async lookup(
    index: IndexSnapshot,
    path: string,
    group: string,
    version: string,
    kind: string,
  ): Promise<KindSchema | undefined> {
    const url = index.paths.get(path);
    if (url === undefined) return undefined;
    const doc = await this.document(path, url);
    return documentKindSchema(doc.doc, group, version, kind);
  }

  private readIndex(): Promise<IndexSnapshot> {
    this.indexFetch ??= this.fetchIndex().finally(() => (this.indexFetch = undefined));
    return this.indexFetch;
  }

  private async fetchIndex(): Promise<IndexSnapshot> {
    const started = performance.now();
    let body: { paths?: Record<string, { serverRelativeURL?: string }> } | undefined;
    try {
      body = await this.opts.client.request({ path: '/openapi/v3' });
    } catch (err) {
      // A server without OpenAPI v3 has no schemas to give: objects are applied as they are.
      if (!isNotFound(err)) throw err;
    }
    this.counters.indexFetches++;
    this.counters.fetchMs += performance.now() - started;
    const paths = new Map<string, string>();
    for (const [p, entry] of Object.entries(body?.paths ?? {})) {
      if (typeof entry?.serverRelativeURL === 'string') paths.set(p, entry.serverRelativeURL);
    }
    // Documents the index no longer names, or names with another hash, are dropped.
    for (const [p, cached] of this.documents) if (paths.get(p) !== cached.url) this.documents.delete(p);
    this.index = { paths, fetchedAt: this.opts.clock.now() };
    return this.index;
  }

  private async document(path: string, url: string): Promise<CachedDocument> {
    const cached = this.documents.get(path);
    if (cached?.url === url) return cached;
    const key = `${path} ${url}`;
    let pending = this.documentFetches.get(key);
    if (pending === undefined) {
      pending = this.fetchDocument(path, url).finally(() => this.documentFetches.delete(key));
      this.documentFetches.set(key, pending);
    }
    return pending;
  }

  private async fetchDocument(path: string, url: string): Promise<CachedDocument> {
    const started = performance.now();
    const parsed = new URL(url, 'http://server.invalid');
    const query = Object.fromEntries(parsed.searchParams);
    const body = await this.opts.client.request<unknown>({ path: parsed.pathname, query });
    const fetched: CachedDocument = { url, doc: readOpenAPIDocument(body) };
    this.counters.documentFetches++;
    this.counters.fetchMs += performance.now() - started;
    this.documents.set(path, fetched);
    return fetched;
  }
}

function versionNames(crd: object): string[] {
  const versions = (crd as { spec?: { versions?: { name?: unknown }[] } }).spec?.versions ?? [];
  return versions.map((v) => v.name).filter((n): n is string => typeof n === 'string');
}

/** Whether a CRD object carries its versions' schemas (the manager's informer strips them). */
function hasSchemas(crd: object): boolean {
  const versions = (crd as { spec?: { versions?: { schema?: unknown }[] } }).spec?.versions ?? [];
  return versions.some((v) => v.schema !== undefined);
}
