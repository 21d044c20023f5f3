/**
 * Search and filters over the package grid, run in the page on every keystroke: pure functions
 * over the summaries the server sent (no DOM), so they are tested in Node as they run in the page.
 *
 * - Text: every word typed must occur (case-insensitive substring) in the name, display name,
 *   description, keywords or provider. Results are ranked: a match in the name counts most, then
 *   the display name, keywords, provider, description; ties go by display name.
 * - Filters (facets) as on OperatorHub.io: values of one facet widen (OR), facets narrow each
 *   other (AND). Each value's count is what selecting it would show given the text and the
 *   other facets, so a count never promises what a click then does not deliver.
 * - Results that change: which of the cards shown can stay in place (`unmoved`).
 */
import type { PackageSummary } from './api.js';

export const Facet = {
  Category: 'category',
  Provider: 'provider',
  Capability: 'capability',
  InstallMode: 'installMode',
  Catalog: 'catalog',
} as const;
export type Facet = (typeof Facet)[keyof typeof Facet];
export const facets: readonly Facet[] = Object.values(Facet);

/** Operator capability levels, lowest first (the Operator Framework's maturity model). */
export const capabilityLevels = [
  'Basic Install',
  'Seamless Upgrades',
  'Full Lifecycle',
  'Deep Insights',
  'Auto Pilot',
] as const;

export interface Query {
  text: string;
  /** Selected values per facet; a facet without values does not filter. */
  filters: Partial<Record<Facet, readonly string[]>>;
}

export interface FacetValue {
  value: string;
  count: number;
}

export interface SearchResult {
  matches: PackageSummary[];
  /** Per facet, each value with the number of matches selecting it would give. */
  counts: Record<Facet, FacetValue[]>;
}

/** The values a package has for a facet. */
export function facetValues(p: PackageSummary, facet: Facet): readonly string[] {
  switch (facet) {
    case Facet.Category:
      return p.categories;
    case Facet.Provider:
      return p.provider ? [p.provider] : [];
    case Facet.Capability:
      return p.capability ? [p.capability] : [];
    case Facet.InstallMode:
      return p.installModes;
    case Facet.Catalog:
      return [p.catalog];
  }
}

/** Words of the query, lower case. */
export function queryTerms(text: string): string[] {
  return text.toLowerCase().split(/\s+/).filter(Boolean);
}

interface Indexed {
  p: PackageSummary;
  name: string;
  displayName: string;
  displayWords: string[];
  keywords: string[];
  provider: string;
  description: string;
  values: Record<Facet, ReadonlySet<string>>;
}

/** How much a term matching a field adds to a package's rank. */
function termScore(i: Indexed, term: string): number {
  if (i.name === term) return 100;
  if (i.name.startsWith(term)) return 60;
  if (i.name.includes(term)) return 40;
  if (i.displayWords.some((w) => w.startsWith(term))) return 30;
  if (i.displayName.includes(term)) return 25;
  if (i.keywords.includes(term)) return 20;
  if (i.keywords.some((k) => k.includes(term))) return 15;
  if (i.provider.includes(term)) return 10;
  if (i.description.includes(term)) return 2;
  return 0;
}

/** One collator for every comparison: `localeCompare` with options builds one per call, which made sorting the slowest part of a search. */
const collator = new Intl.Collator('en', { sensitivity: 'base' });
const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const byDisplayName = (a: PackageSummary, b: PackageSummary) =>
  collator.compare(a.displayName, b.displayName) || byCode(a.name, b.name) || byCode(a.catalog, b.catalog);

/** Facet values in the order a filter lists them: capability levels by level, the rest by name. */
export function sortFacetValues(facet: Facet, values: FacetValue[]): FacetValue[] {
  const rank = (v: string) => {
    const i = (capabilityLevels as readonly string[]).indexOf(v);
    return i < 0 ? capabilityLevels.length : i;
  };
  return [...values].sort((a, b) =>
    facet === Facet.Capability
      ? rank(a.value) - rank(b.value) || byCode(a.value, b.value)
      : collator.compare(a.value, b.value) || byCode(a.value, b.value),
  );
}

export interface PackageSearch {
  search(query: Query): SearchResult;
}

/** Indexes the packages once (lower-cased fields, facet values) for searches as the user types. */
export function packageSearch(packages: readonly PackageSummary[]): PackageSearch {
  const indexed: Indexed[] = packages.map((p) => ({
    p,
    name: p.name.toLowerCase(),
    displayName: p.displayName.toLowerCase(),
    displayWords: p.displayName.toLowerCase().split(/\s+/),
    keywords: p.keywords.map((k) => k.toLowerCase()),
    provider: p.provider.toLowerCase(),
    description: p.description.toLowerCase(),
    values: Object.fromEntries(facets.map((f) => [f, new Set(facetValues(p, f))])) as unknown as Record<
      Facet,
      ReadonlySet<string>
    >,
  }));

  return {
    search(query) {
      const terms = queryTerms(query.text);
      const selected = facets
        .map((f) => [f, query.filters[f] ?? []] as const)
        .filter(([, values]) => values.length > 0);
      const passes = (i: Indexed, f: Facet, values: readonly string[]) =>
        values.some((v) => i.values[f].has(v));

      // Text first: its score ranks, and facet counts are over what the text matched.
      const scored: { i: Indexed; score: number }[] = [];
      for (const i of indexed) {
        let score = 0;
        let all = true;
        for (const t of terms) {
          const s = termScore(i, t);
          if (s === 0) {
            all = false;
            break;
          }
          score += s;
        }
        if (all) scored.push({ i, score });
      }

      const counts = {} as Record<Facet, FacetValue[]>;
      for (const f of facets) {
        const tally = new Map<string, number>();
        for (const { i } of scored) {
          if (!selected.every(([g, values]) => g === f || passes(i, g, values))) continue;
          for (const v of i.values[f]) tally.set(v, (tally.get(v) ?? 0) + 1);
        }
        // A selected value stays listed (with 0) so it can be unselected.
        for (const v of query.filters[f] ?? []) if (!tally.has(v)) tally.set(v, 0);
        counts[f] = sortFacetValues(
          f,
          [...tally].map(([value, count]) => ({ value, count })),
        );
      }

      const matches = scored
        .filter(({ i }) => selected.every(([f, values]) => passes(i, f, values)))
        .sort((a, b) => b.score - a.score || byDisplayName(a.i.p, b.i.p))
        .map(({ i }) => i.p);
      return { matches, counts };
    },
  };
}

/**
 * Of the items to show (`next`, in order), those that can stay where they are among the items
 * shown now (`shown`): a longest run of them already in the right order, found by patience
 * sorting in O(n log n). The page moves only the others: the browser lays out again every card
 * it inserts or moves.
 */
export function unmoved<T>(shown: readonly T[], next: readonly T[]): Set<T> {
  const position = new Map(shown.map((item, i) => [item, i]));
  const items = next.filter((item) => position.has(item));
  const at = items.map((item) => position.get(item)!);
  // ends[k]: the index (in items) ending the lowest-ending increasing run of length k + 1 so far;
  // before[i]: the index before i in the run that i ends.
  const ends: number[] = [];
  const before: number[] = [];
  at.forEach((p, i) => {
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (at[ends[mid]!]! < p) lo = mid + 1;
      else hi = mid;
    }
    before[i] = lo > 0 ? ends[lo - 1]! : -1;
    ends[lo] = i;
  });
  const run = new Set<T>();
  for (let i = ends.at(-1) ?? -1; i >= 0; i = before[i]!) run.add(items[i]!);
  return run;
}

/** The query as URL search parameters (the page keeps it in its address, so a search can be shared). */
export function queryToParams(query: Query): URLSearchParams {
  const params = new URLSearchParams();
  if (query.text) params.set('q', query.text);
  for (const f of facets) for (const v of query.filters[f] ?? []) params.append(f, v);
  return params;
}

export function queryFromParams(params: URLSearchParams): Query {
  const filters: Query['filters'] = {};
  for (const f of facets) {
    const values = params.getAll(f).filter(Boolean);
    if (values.length) filters[f] = [...new Set(values)];
  }
  return { text: params.get('q') ?? '', filters };
}
