import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PackageSummary } from '../../../src/web/client/api.js';
import {
  Facet,
  facets,
  packageSearch,
  type Query,
  queryFromParams,
  queryTerms,
  queryToParams,
  unmoved,
} from '../../../src/web/client/search.js';

function pkg(name: string, fields: Partial<PackageSummary> = {}): PackageSummary {
  return {
    id: `olm/cat/${name}`,
    catalog: 'olm/cat',
    name,
    displayName: name,
    description: '',
    provider: '',
    keywords: [],
    categories: [],
    installModes: [],
    defaultChannel: 'stable',
    installs: [],
    ...fields,
  };
}

const packages: PackageSummary[] = [
  pkg('etcd', {
    displayName: 'etcd',
    description: 'A message about distributed key value stores.',
    provider: 'CNCF',
    keywords: ['etcd', 'key value', 'database'],
    categories: ['Database'],
    capability: 'Full Lifecycle',
    installModes: ['OwnNamespace', 'SingleNamespace'],
  }),
  pkg('prometheus', {
    displayName: 'Prometheus Operator',
    description: 'Manages Prometheus clusters atop Kubernetes.',
    provider: 'Red Hat',
    keywords: ['prometheus', 'monitoring', 'alerting'],
    categories: ['Monitoring'],
    capability: 'Deep Insights',
    installModes: ['OwnNamespace', 'AllNamespaces'],
  }),
  pkg('grafana-operator', {
    displayName: 'Grafana Operator',
    description: 'Deploys Grafana, which reads Prometheus and etcd metrics.',
    provider: 'Community',
    keywords: ['grafana', 'monitoring'],
    categories: ['Monitoring', 'Logging & Tracing'],
    capability: 'Basic Install',
    installModes: ['AllNamespaces'],
  }),
  pkg('mongodb', {
    displayName: 'MongoDB',
    provider: 'MongoDB, Inc',
    keywords: ['database'],
    categories: ['Database'],
    capability: 'Seamless Upgrades',
    installModes: ['OwnNamespace'],
    catalog: 'olm/other',
    id: 'olm/other/mongodb',
  }),
  pkg('no-metadata'),
];

const search = packageSearch(packages);
const names = (q: Query) => search.search(q).matches.map((p) => p.name);
const text = (t: string) => names({ text: t, filters: {} });

describe('text search', () => {
  it.each([
    [
      'every package without a query, by display name',
      '',
      ['etcd', 'grafana-operator', 'mongodb', 'no-metadata', 'prometheus'],
    ],
    ['a name', 'mongodb', ['mongodb']],
    ['case and surrounding spaces ignored', '  MONGODB ', ['mongodb']],
    ['a display name word', 'operator', ['grafana-operator', 'prometheus']],
    ['a keyword', 'alerting', ['prometheus']],
    ['a provider', 'red hat', ['prometheus']],
    ['a description word', 'atop', ['prometheus']],
    ['every word must match somewhere', 'grafana metrics', ['grafana-operator']],
    ['nothing', 'cassandra', []],
  ])('%s', (_, query, expected) => {
    const got = text(query);
    if (query === '') expect(got).toEqual(expected);
    else expect([...got].sort()).toEqual([...expected].sort());
  });

  it('ranks a name match above a keyword match above a description match', () => {
    // etcd: name; grafana-operator: description ("etcd metrics").
    expect(text('etcd')).toEqual(['etcd', 'grafana-operator']);
    // prometheus: name; grafana-operator: description ("reads Prometheus").
    expect(text('prometheus')).toEqual(['prometheus', 'grafana-operator']);
    // etcd and mongodb: keyword "database"; neither name has it.
    expect(text('database')).toEqual(['etcd', 'mongodb']);
  });

  it('splits the query into lower-case words', () => {
    expect(queryTerms('  Key  VALUE\t')).toEqual(['key', 'value']);
  });
});

describe('filters', () => {
  it('narrow across facets and widen within one', () => {
    expect(names({ text: '', filters: { category: ['Monitoring'] } })).toEqual([
      'grafana-operator',
      'prometheus',
    ]);
    expect(names({ text: '', filters: { category: ['Monitoring', 'Database'] } }).sort()).toEqual(
      ['etcd', 'grafana-operator', 'mongodb', 'prometheus'].sort(),
    );
    expect(names({ text: '', filters: { category: ['Monitoring'], installMode: ['OwnNamespace'] } })).toEqual(
      ['prometheus'],
    );
    expect(names({ text: 'operator', filters: { capability: ['Basic Install'] } })).toEqual([
      'grafana-operator',
    ]);
    expect(names({ text: '', filters: { catalog: ['olm/other'] } })).toEqual(['mongodb']);
    expect(names({ text: '', filters: { provider: ['CNCF'] } })).toEqual(['etcd']);
  });

  it('count each value as selecting it would, given the text and the other facets', () => {
    const { counts } = search.search({ text: '', filters: { category: ['Monitoring'] } });
    // Category counts ignore the category selection itself (it widens), but not the text.
    expect(counts.category).toEqual([
      { value: 'Database', count: 2 },
      { value: 'Logging & Tracing', count: 1 },
      { value: 'Monitoring', count: 2 },
    ]);
    // Other facets count only what the category selection leaves.
    expect(counts.installMode).toEqual([
      { value: 'AllNamespaces', count: 2 },
      { value: 'OwnNamespace', count: 1 },
    ]);
  });

  it('lists capability levels in their order, and keeps a selected value that matches nothing', () => {
    const { counts, matches } = search.search({ text: 'mongodb', filters: { capability: ['Auto Pilot'] } });
    expect(matches).toEqual([]);
    expect(counts.capability).toEqual([
      { value: 'Seamless Upgrades', count: 1 },
      { value: 'Auto Pilot', count: 0 },
    ]);
    const all = search.search({ text: '', filters: {} }).counts.capability.map((c) => c.value);
    expect(all).toEqual(['Basic Install', 'Seamless Upgrades', 'Full Lifecycle', 'Deep Insights']);
  });

  it('a value`s count is the number of matches selecting it alone gives (property)', () => {
    const value = (f: Facet) => fc.constantFrom(...[...new Set(packages.flatMap((p) => facetOf(p, f)))]);
    const facetOf = (p: PackageSummary, f: Facet): string[] =>
      f === Facet.Category
        ? p.categories
        : f === Facet.Provider
          ? [p.provider].filter(Boolean)
          : f === Facet.Capability
            ? [p.capability ?? ''].filter(Boolean)
            : f === Facet.InstallMode
              ? p.installModes
              : [p.catalog];
    const query = fc.record({
      text: fc.constantFrom('', 'operator', 'database', 'e', 'monitoring prometheus'),
      filters: fc.record(
        Object.fromEntries(facets.map((f) => [f, fc.uniqueArray(value(f), { maxLength: 2 })])) as Record<
          Facet,
          fc.Arbitrary<string[]>
        >,
        { requiredKeys: [] },
      ),
    });
    fc.assert(
      fc.property(query, fc.constantFrom(...facets), (q, f) => {
        const { counts } = search.search(q);
        for (const { value: v, count } of counts[f]) {
          const alone = search.search({ ...q, filters: { ...q.filters, [f]: [v] } }).matches.length;
          expect(count).toBe(alone);
        }
      }),
    );
  });
});

describe('the query in the address', () => {
  it('round-trips text and filters', () => {
    const q: Query = {
      text: 'key value',
      filters: { category: ['Database', 'A & B'], catalog: ['olm/cat'] },
    };
    const params = queryToParams(q);
    expect(params.toString()).toBe('q=key+value&category=Database&category=A+%26+B&catalog=olm%2Fcat');
    expect(queryFromParams(new URLSearchParams(params.toString()))).toEqual(q);
  });

  it('ignores unknown and empty parameters and repeated values', () => {
    expect(queryFromParams(new URLSearchParams('x=1&category=&provider=A&provider=A'))).toEqual({
      text: '',
      filters: { provider: ['A'] },
    });
  });
});

describe('cards that stay in place when the results change', () => {
  it('keeps the longest run already in order, and nothing that leaves or is new', () => {
    expect(unmoved(['a', 'b', 'c', 'd'], ['b', 'c', 'd', 'a'])).toEqual(new Set(['b', 'c', 'd']));
    expect(unmoved(['a', 'b', 'c', 'd'], ['d', 'x', 'a', 'c'])).toEqual(new Set(['a', 'c']));
    expect(unmoved(['a', 'b'], ['a', 'b'])).toEqual(new Set(['a', 'b']));
    expect(unmoved([], ['a']).size).toBe(0);
    expect(unmoved(['a'], []).size).toBe(0);
  });

  it('is a longest common subsequence of the two orders (property)', () => {
    // The oracle: the textbook quadratic longest common subsequence, on lists without repeats.
    const lcs = (a: readonly number[], b: readonly number[]) => {
      const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
      for (let i = 1; i <= a.length; i++)
        for (let j = 1; j <= b.length; j++)
          t[i]![j] = a[i - 1] === b[j - 1] ? t[i - 1]![j - 1]! + 1 : Math.max(t[i - 1]![j]!, t[i]![j - 1]!);
      return t[a.length]![b.length]!;
    };
    const list = fc.uniqueArray(fc.integer({ min: 0, max: 30 }), { maxLength: 25 });
    fc.assert(
      fc.property(list, list, (shown, next) => {
        const kept = unmoved(shown, next);
        expect(kept.size).toBe(lcs(shown, next));
        expect(shown.filter((x) => kept.has(x))).toEqual(next.filter((x) => kept.has(x)));
      }),
    );
  });
});
