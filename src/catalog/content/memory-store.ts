/**
 * The in-memory CatalogStore (see store.ts): catalog content lives in the manager's memory,
 * written by the CatalogSource controller and read by the Subscription and InstallPlan
 * controllers. Listeners hear about a catalog whenever its content (a new digest) or its health
 * changes; writing the same content or health again is silent, so a poll that finds nothing new
 * does not make every Subscription in the cluster resolve again.
 */
import {
  type CatalogHealth,
  type CatalogRef,
  type CatalogSnapshot,
  type CatalogStore,
  refKey,
} from './store.js';

export class MemoryCatalogStore implements CatalogStore {
  private readonly snapshots = new Map<string, CatalogSnapshot>();
  private readonly healths = new Map<string, CatalogHealth>();
  /** Per catalog: bundle name → bundle, built on first lookup (the InstallPlan controller asks by name). */
  private readonly bundleIndex = new Map<string, Map<string, CatalogSnapshot['config']['bundles'][number]>>();
  private readonly listeners = new Set<(ref: CatalogRef) => void>();

  /**
   * @param globalNamespace catalogs here are visible from every namespace.
   * @param release called with a replaced or deleted snapshot's `payloadFile`.
   */
  constructor(
    private readonly globalNamespace: string,
    private readonly release: (payloadFile: string) => unknown = () => undefined,
  ) {}

  get(ref: CatalogRef): CatalogSnapshot | undefined {
    return this.snapshots.get(refKey(ref));
  }

  health(ref: CatalogRef): CatalogHealth | undefined {
    return this.healths.get(refKey(ref));
  }

  visibleFrom(namespace: string): CatalogSnapshot[] {
    const out: CatalogSnapshot[] = [];
    for (const s of this.snapshots.values()) {
      if (s.ref.namespace === namespace || s.ref.namespace === this.globalNamespace) out.push(s);
    }
    // A stable order keeps resolution inputs (and so their results) independent of insertion order.
    return out.sort((a, b) => refKey(a.ref).localeCompare(refKey(b.ref)));
  }

  findBundle(ref: CatalogRef, bundleName: string): CatalogSnapshot['config']['bundles'][number] | undefined {
    const key = refKey(ref);
    const snapshot = this.snapshots.get(key);
    if (!snapshot) return undefined;
    let index = this.bundleIndex.get(key);
    if (!index) {
      index = new Map(snapshot.config.bundles.map((b) => [b.name, b]));
      this.bundleIndex.set(key, index);
    }
    return index.get(bundleName);
  }

  /** All catalogs held, for metrics and debugging. */
  list(): CatalogSnapshot[] {
    return [...this.snapshots.values()];
  }

  set(snapshot: CatalogSnapshot): void {
    const key = refKey(snapshot.ref);
    const previous = this.snapshots.get(key);
    this.snapshots.set(key, snapshot);
    this.bundleIndex.delete(key);
    if (previous?.payloadFile && previous.payloadFile !== snapshot.payloadFile)
      this.release(previous.payloadFile);
    if (previous?.digest !== snapshot.digest || previous.priority !== snapshot.priority)
      this.notify(snapshot.ref);
  }

  setHealth(health: CatalogHealth): void {
    const key = refKey(health.ref);
    const previous = this.healths.get(key);
    this.healths.set(key, health);
    if (previous?.healthy !== health.healthy || previous.message !== health.message) this.notify(health.ref);
  }

  delete(ref: CatalogRef): void {
    const key = refKey(ref);
    const payloadFile = this.snapshots.get(key)?.payloadFile;
    const had = this.snapshots.delete(key) || this.healths.has(key);
    if (payloadFile) this.release(payloadFile);
    this.healths.delete(key);
    this.bundleIndex.delete(key);
    if (had) this.notify(ref);
  }

  onChange(listener: (ref: CatalogRef) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(ref: CatalogRef): void {
    for (const l of [...this.listeners]) l({ namespace: ref.namespace, name: ref.name });
  }
}
