/**
 * The manager's PackageManifests: every catalog's packages, projected (projection.ts) when its
 * content or its CatalogSource changes, and numbered so that lists carry a resourceVersion and
 * watches can resume. One change of one catalog is one resourceVersion; each package changed by
 * it is an event (ADDED, MODIFIED or DELETED) with that version. The last `historySize` events
 * are kept for watches that resume from a recent version; an older one is told it expired
 * (410 Gone), as the API server tells it, and lists again.
 *
 * Visibility is OLM's: a namespace sees its own catalogs' packages and the global namespace's;
 * seen from a namespace, a package's `metadata.namespace` is that namespace.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { CatalogSource } from '../apis/operators.js';
import type { PackageManifest } from '../apis/packages.js';
import type { CatalogRef, CatalogSnapshot } from '../catalog/content/store.js';
import { objectKey } from '../kube/cache.js';
import { type CatalogSourceInfo, type PayloadReader, packageManifests } from './projection.js';

export type PackageEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One package of one catalog as last projected. */
export interface IndexedPackage {
  manifest: PackageManifest;
  catalog: CatalogRef;
  /** The version of the change that last touched it. */
  resourceVersion: number;
}

export interface PackageEvent {
  type: PackageEventType;
  pkg: IndexedPackage;
}

/** What the index reads: the catalog store and the CatalogSources. */
export interface PackageIndexSources {
  catalogs: {
    list(): CatalogSnapshot[];
    get(ref: CatalogRef): CatalogSnapshot | undefined;
    onChange(listener: (ref: CatalogRef) => void): () => void;
  };
  catalogSource(ref: CatalogRef): CatalogSource | undefined;
  /** Called with a CatalogSource's ref when it changes (labels, display name, publisher). */
  onCatalogSourceChange(listener: (ref: CatalogRef) => void): () => void;
  readPayloads: PayloadReader;
  globalNamespace: string;
  log?: Logger;
}

const historySize = 1000;

export class PackageIndex {
  private readonly byCatalog = new Map<string, { digest: string; source: string; pkgs: IndexedPackage[] }>();
  private readonly history: PackageEvent[] = [];
  private readonly listeners = new Set<(e: PackageEvent) => void>();
  private readonly pending = new Map<string, CatalogRef>();
  private running: Promise<void> | undefined;
  private version = 1;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly sources: PackageIndexSources) {}

  /** Projects every catalog held now, and each one again whenever it changes. */
  start(): void {
    const refresh = (ref: CatalogRef) => this.refresh(ref);
    this.unsubscribe.push(this.sources.catalogs.onChange(refresh));
    this.unsubscribe.push(this.sources.onCatalogSourceChange(refresh));
    for (const s of this.sources.catalogs.list()) this.refresh(s.ref);
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.listeners.clear();
  }

  /** The current resourceVersion: that of the last change. */
  resourceVersion(): number {
    return this.version;
  }

  /**
   * The packages seen from `namespace` (every catalog's, in its own namespace, for `''`), sorted
   * by name then catalog.
   */
  visible(namespace: string): IndexedPackage[] {
    const out: IndexedPackage[] = [];
    for (const { pkgs } of this.byCatalog.values()) {
      for (const p of pkgs) if (this.isVisible(p, namespace)) out.push(p);
    }
    return out.sort(
      (a, b) =>
        cmp(a.manifest.metadata.name, b.manifest.metadata.name) ||
        cmp(objectKey(a.catalog.namespace, a.catalog.name), objectKey(b.catalog.namespace, b.catalog.name)),
    );
  }

  /** The package a namespace sees by this name: its own catalogs' first, then the global ones'. */
  get(namespace: string, name: string): IndexedPackage | undefined {
    const found = this.visible(namespace).filter((p) => p.manifest.metadata.name === name);
    return found.find((p) => p.catalog.namespace === namespace) ?? found[0];
  }

  isVisible(p: IndexedPackage, namespace: string): boolean {
    return (
      namespace === '' ||
      p.catalog.namespace === namespace ||
      p.catalog.namespace === this.sources.globalNamespace
    );
  }

  /**
   * Events after `resourceVersion`, or undefined when they are no longer kept (the caller must
   * list again).
   */
  eventsSince(resourceVersion: number): PackageEvent[] | undefined {
    if (resourceVersion >= this.version) return [];
    const first = this.history[0];
    // Versions are consecutive: the events kept must start right after the one asked for.
    if (!first || first.pkg.resourceVersion > resourceVersion + 1) return undefined;
    return this.history.filter((e) => e.pkg.resourceVersion > resourceVersion);
  }

  onEvent(listener: (e: PackageEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once every change asked for so far has been projected. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private refresh(ref: CatalogRef): void {
    this.pending.set(objectKey(ref.namespace, ref.name), ref);
    // One catalog is projected at a time: projections read spooled manifests, and a burst of
    // changes (a manager starting with many catalogs) should not read them all at once.
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      if (this.pending.size > 0) this.refresh([...this.pending.values()][0]!);
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const next = this.pending.entries().next();
      if (next.done) return;
      const [key, ref] = next.value;
      this.pending.delete(key);
      try {
        await this.project(key, ref);
      } catch (err) {
        this.sources.log?.warn({ catalog: key, err }, 'packages of catalog not projected');
      }
    }
  }

  private async project(key: string, ref: CatalogRef): Promise<void> {
    const snapshot = this.sources.catalogs.get(ref);
    const previous = this.byCatalog.get(key);
    if (!snapshot) {
      if (previous) {
        this.byCatalog.delete(key);
        this.publish(previous.pkgs.map((p) => ({ type: 'DELETED', pkg: p })));
      }
      return;
    }
    const info = sourceInfo(ref, this.sources.catalogSource(ref));
    const sourceKey = JSON.stringify(info);
    if (previous && previous.digest === snapshot.digest && previous.source === sourceKey) return;

    const manifests = await packageManifests(snapshot.config, info, this.sources.readPayloads);
    // The catalog may have changed or gone while it was projected; then the newer content is
    // queued already (the same content fetched again is a new snapshot, but no change).
    if (this.sources.catalogs.get(ref)?.digest !== snapshot.digest) return;

    const rv = this.version + 1;
    const before = new Map((previous?.pkgs ?? []).map((p) => [p.manifest.metadata.name, p]));
    const events: PackageEvent[] = [];
    const pkgs: IndexedPackage[] = manifests.map((manifest) => {
      const old = before.get(manifest.metadata.name);
      before.delete(manifest.metadata.name);
      if (old && isDeepStrictEqual(old.manifest, manifest)) return old;
      const pkg = { manifest, catalog: { namespace: ref.namespace, name: ref.name }, resourceVersion: rv };
      events.push({ type: old ? 'MODIFIED' : 'ADDED', pkg });
      return pkg;
    });
    for (const gone of before.values())
      events.push({ type: 'DELETED', pkg: { ...gone, resourceVersion: rv } });
    this.byCatalog.set(key, { digest: snapshot.digest, source: sourceKey, pkgs });
    this.publish(events);
  }

  private publish(events: PackageEvent[]): void {
    if (events.length === 0) return;
    this.version += 1;
    for (const e of events) {
      if (e.type === 'DELETED') e.pkg = { ...e.pkg, resourceVersion: this.version };
      this.history.push(e);
    }
    if (this.history.length > historySize) this.history.splice(0, this.history.length - historySize);
    for (const e of events) for (const l of [...this.listeners]) l(e);
  }
}

function sourceInfo(ref: CatalogRef, cs: CatalogSource | undefined): CatalogSourceInfo {
  const spec = (cs?.spec ?? {}) as { displayName?: string; publisher?: string };
  return {
    name: ref.name,
    namespace: ref.namespace,
    ...(spec.displayName ? { displayName: spec.displayName } : {}),
    ...(spec.publisher ? { publisher: spec.publisher } : {}),
    ...(cs?.metadata?.labels ? { labels: cs.metadata.labels } : {}),
    ...(cs?.metadata?.creationTimestamp ? { creationTimestamp: cs.metadata.creationTimestamp } : {}),
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
