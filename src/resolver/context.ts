/**
 * What one resolution knows: the namespace's catalogs (indexed), its installed bundles, and the
 * candidate lists it has computed so far. Candidates for a requirement come in OLM's preference
 * order: already installed, the dependent's own catalog (none for an installed dependent: OLM sees
 * it in its catalog of installed operators), higher catalog priority, the namespace's own
 * catalogs, catalog name; then within a catalog the default channel, package name, channel name
 * and the channel's order from its head. Versions of different packages are never compared. Fixed
 * tie-breakers follow, so that the order never depends on the order of the input.
 */
import { PropertyType } from '../apis/fbc.js';
import { readBundle } from './bundle.js';
import { type CatalogIndex, indexCatalog } from './catalog-index.js';
import type { CatalogInfo, Entry, LookupHint, Requirement } from './model.js';
import type { Catalog, CatalogKey, InstalledOperator } from './types.js';

/** Why a candidate can never be chosen, whatever else is chosen. */
export type DeadCause = InvalidCause | UnsatisfiableCause;
interface InvalidCause {
  kind: 'invalid';
  field: string;
  message: string;
}
interface UnsatisfiableCause {
  kind: 'unsatisfiable';
  requirement: Requirement;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const sameCatalog = (a: CatalogKey, b: CatalogKey): boolean =>
  a.name === b.name && a.namespace === b.namespace;

export class ResolveContext {
  readonly catalogs: CatalogIndex[];
  /** Installed bundles by package, as candidates (`installed/<name>`). */
  readonly installed = new Map<string, Entry>();
  private readonly installedNames = new Set<string>();
  private readonly candidateCache = new Map<string, Entry[]>();
  private readonly dead = new Map<string, DeadCause | null>();
  private readonly inProgress = new Set<string>();

  constructor(
    readonly namespace: string,
    catalogs: readonly Catalog[],
    installed: readonly InstalledOperator[],
  ) {
    this.catalogs = catalogs
      .map(indexCatalog)
      .sort(
        (a, b) => cmp(a.info.key.namespace, b.info.key.namespace) || cmp(a.info.key.name, b.info.key.name),
      );
    for (const op of [...installed].sort((a, b) => cmp(a.name, b.name))) {
      if (this.installed.has(op.package)) continue;
      this.installed.set(op.package, this.installedEntry(op));
      this.installedNames.add(op.name);
    }
  }

  findCatalog(key: CatalogKey): CatalogIndex | undefined {
    return this.catalogs.find((c) => sameCatalog(c.info.key, key));
  }

  private installedEntry(op: InstalledOperator): Entry {
    const hasPackage = op.properties.some((p) => p.type === PropertyType.Package);
    const properties = hasPackage
      ? op.properties
      : [
          { type: PropertyType.Package, value: { packageName: op.package, version: op.version } },
          ...op.properties,
        ];
    const from = op.catalog ? this.findCatalog(op.catalog) : undefined;
    const catalog: CatalogInfo = from?.info ?? {
      key: op.catalog ?? { name: '', namespace: '' },
      priority: 0,
    };
    return {
      id: `installed/${op.name}`,
      bundle: readBundle({ name: op.name, package: op.package, properties }),
      catalog,
      channel: '',
      isDefaultChannel: false,
      rank: 0,
      replaces: null,
      skips: [],
      skipRange: null,
      installed: true,
    };
  }

  isInstalledBundle(e: Entry): boolean {
    return e.installed || this.installedNames.has(e.bundle.name);
  }

  /**
   * Bundles that satisfy `req`, in preference order for a requirement of `dependent`. Installed
   * bundles are listed too: one is normally already in the plan when a requirement is looked at,
   * but when a Subscription upgraded it away, the conflict must name that choice so that the
   * search knows to revisit it.
   */
  requirementCandidates(req: Requirement, dependent: Entry): Entry[] {
    const own = dependent.installed ? null : dependent.catalog.key;
    const k = `${req.key}\u0000${own ? `${own.namespace}/${own.name}` : '@installed'}`;
    const hit = this.candidateCache.get(k);
    if (hit) return hit;
    const seen = new Set<string>();
    const found: Entry[] = [];
    const offer = (e: Entry) => {
      if (seen.has(e.id) || !req.test(e.bundle)) return;
      seen.add(e.id);
      found.push(e);
    };
    for (const e of this.installed.values()) offer(e);
    for (const cat of this.catalogs) for (const e of lookup(cat, req.hint)) offer(e);
    found.sort(this.preference(own));
    this.candidateCache.set(k, found);
    return found;
  }

  /**
   * The preference order among bundles that satisfy a requirement of a bundle from catalog `own`
   * (null for an installed bundle).
   */
  preference(own: CatalogKey | null): (a: Entry, b: Entry) => number {
    const rankInstalled = (e: Entry) => (this.isInstalledBundle(e) ? 0 : 1);
    const rankOwn = (e: Entry) => (own && sameCatalog(e.catalog.key, own) ? 0 : 1);
    const rankNamespace = (e: Entry) => (e.catalog.key.namespace === this.namespace ? 0 : 1);
    return (a, b) =>
      rankInstalled(a) - rankInstalled(b) ||
      rankOwn(a) - rankOwn(b) ||
      b.catalog.priority - a.catalog.priority ||
      rankNamespace(a) - rankNamespace(b) ||
      cmp(a.catalog.key.name, b.catalog.key.name) ||
      cmp(a.catalog.key.namespace, b.catalog.key.namespace) ||
      Number(b.isDefaultChannel) - Number(a.isDefaultChannel) ||
      cmp(a.bundle.package, b.bundle.package) ||
      cmp(a.channel, b.channel) ||
      a.rank - b.rank ||
      cmp(a.bundle.name, b.bundle.name);
  }

  /**
   * Why `e` can never be chosen, or null if it might be. A bundle is dead when its data is
   * invalid or when one of its requirements has no live provider outside its own package.
   * Requirement cycles are assumed satisfiable, so this only ever rules out what truly cannot be.
   */
  deadCause(e: Entry): DeadCause | null {
    const known = this.dead.get(e.id);
    if (known !== undefined) return known;
    if (this.inProgress.has(e.id)) return null;
    this.inProgress.add(e.id);
    let cause: DeadCause | null = null;
    const problem = e.bundle.problems[0] ?? (e.installed ? undefined : (e.bundle.deprecated ?? undefined));
    if (problem) cause = { kind: 'invalid', field: problem.field, message: problem.message };
    for (const req of cause ? [] : e.bundle.requirements) {
      if (req.problem) {
        cause = { kind: 'invalid', field: req.field, message: req.problem };
        break;
      }
      if (!e.offChain && req.test(e.bundle)) continue;
      const live = (c: Entry) => c.bundle.package !== e.bundle.package && this.deadCause(c) === null;
      if (this.requirementCandidates(req, e).some(live)) continue;
      cause = { kind: 'unsatisfiable', requirement: req };
      break;
    }
    this.inProgress.delete(e.id);
    this.dead.set(e.id, cause);
    return cause;
  }
}

function lookup(cat: CatalogIndex, hint: LookupHint): Iterable<Entry> {
  switch (hint.kind) {
    case 'gvk':
      return cat.byGVK.get(hint.key) ?? [];
    case 'package':
      return cat.byPackage.get(hint.name) ?? [];
    case 'label':
      return cat.byLabel.get(hint.label) ?? [];
    case 'union':
      return hint.hints.flatMap((h) => [...lookup(cat, h)]);
    case 'all':
      return cat.entries;
  }
}
