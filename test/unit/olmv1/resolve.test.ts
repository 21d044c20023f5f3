import { describe, expect, it } from 'vitest';
import type { CatalogFilter } from '../../../src/apis/olmv1.js';
import { packageContent } from '../../../src/olmv1/package-content.js';
import { resolveV1, type V1Catalog } from '../../../src/olmv1/resolve.js';

type Entry = { name: string; replaces?: string; skips?: readonly string[]; skipRange?: string };

/** A catalog of package `pkg`: bundles by version, channels of entries, bundles deprecated. */
function catalog(
  name: string,
  opts: {
    versions: string[];
    channels?: Record<string, Entry[]>;
    deprecated?: string[];
    priority?: number;
    labels?: Record<string, string>;
    availabilityMode?: string;
    serving?: boolean;
  },
): V1Catalog {
  const docs: unknown[] = [{ schema: 'olm.package', name: 'pkg' }];
  const channels = opts.channels ?? { stable: opts.versions.map((v) => ({ name: `pkg.v${v}` })) };
  for (const [ch, entries] of Object.entries(channels))
    docs.push({ schema: 'olm.channel', package: 'pkg', name: ch, entries });
  for (const v of opts.versions)
    docs.push({
      schema: 'olm.bundle',
      package: 'pkg',
      name: `pkg.v${v}`,
      image: `registry.test/pkg:v${v}`,
      properties: [{ type: 'olm.package', value: { packageName: 'pkg', version: v } }],
    });
  if (opts.deprecated)
    docs.push({
      schema: 'olm.deprecations',
      package: 'pkg',
      entries: opts.deprecated.map((v) => ({
        reference: { schema: 'olm.bundle', name: `pkg.v${v}` },
        message: 'old',
      })),
    });
  return {
    name,
    priority: opts.priority ?? 0,
    labels: opts.labels ?? {},
    availabilityMode: opts.availabilityMode ?? 'Available',
    serving: opts.serving ?? true,
    content: packageContent(docs),
  };
}

const chain = (...versions: string[]): Entry[] =>
  versions.map((v, i) => ({ name: `pkg.v${v}`, ...(i > 0 ? { replaces: `pkg.v${versions[i - 1]}` } : {}) }));
const installed = (v: string) => ({ name: `pkg.v${v}`, version: v });
const spec = (s: Partial<CatalogFilter> = {}): CatalogFilter => ({ packageName: 'pkg', ...s });
const chosen = (r: ReturnType<typeof resolveV1>) =>
  r.ok ? `${r.value.catalog}/${r.value.bundle.name}` : r.errors;

describe('ClusterExtension resolution, as operator-controller v1.2.0 resolves', () => {
  it('installs the highest version of the package when nothing is installed', () => {
    expect(chosen(resolveV1(spec(), [catalog('c', { versions: ['1.0.0', '1.2.0', '1.1.0'] })]))).toBe(
      'c/pkg.v1.2.0',
    );
  });

  it("leaves out the bundles held back (Bosun's rollback), as if the catalog had none of them", () => {
    const c = catalog('c', {
      versions: ['1.0.0', '1.1.0', '1.2.0'],
      channels: { stable: chain('1.0.0', '1.1.0', '1.2.0') },
    });
    const held = new Set(['pkg.v1.2.0']);
    expect(chosen(resolveV1(spec(), [c], undefined, held))).toBe('c/pkg.v1.1.0');
    // Upgrading from 1.1.0, the held 1.2.0 is its only successor: 1.1.0 itself stays the answer.
    expect(chosen(resolveV1(spec(), [c], installed('1.1.0'), held))).toBe('c/pkg.v1.1.0');
    expect(chosen(resolveV1(spec({ version: '1.2.0' }), [c], undefined, held))).toBe(
      'no bundles found for package "pkg" matching version "1.2.0"',
    );
  });

  it('keeps to the channels asked for', () => {
    const c = catalog('c', {
      versions: ['1.0.0', '2.0.0'],
      channels: { stable: chain('1.0.0'), fast: chain('1.0.0', '2.0.0') },
    });
    expect(chosen(resolveV1(spec({ channels: ['stable'] }), [c]))).toBe('c/pkg.v1.0.0');
    expect(chosen(resolveV1(spec({ channels: ['fast'] }), [c]))).toBe('c/pkg.v2.0.0');
  });

  it('keeps to the version range, read as Masterminds constraints', () => {
    const c = catalog('c', { versions: ['1.0.0', '1.4.0', '2.0.0', '2.1.0-rc.1'] });
    expect(chosen(resolveV1(spec({ version: '^1' }), [c]))).toBe('c/pkg.v1.4.0');
    expect(chosen(resolveV1(spec({ version: '~1.0' }), [c]))).toBe('c/pkg.v1.0.0');
    expect(chosen(resolveV1(spec({ version: '>=1.0.0 <2 || 2.x' }), [c]))).toBe('c/pkg.v2.0.0');
    expect(chosen(resolveV1(spec({ version: '>=2.1.0-0' }), [c]))).toBe('c/pkg.v2.1.0-rc.1');
  });

  it('upgrades to the highest direct successor by replaces, skips or skipRange, never along the chain', () => {
    const c = catalog('c', {
      versions: ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0'],
      channels: {
        stable: [
          { name: 'pkg.v1.0.0' },
          { name: 'pkg.v1.1.0', replaces: 'pkg.v1.0.0' },
          { name: 'pkg.v1.2.0', skips: ['pkg.v1.0.0'] },
          { name: 'pkg.v1.3.0', skipRange: '>=1.0.0 <1.1.0' },
          // A successor of a successor only: v1 does not walk to it.
          { name: 'pkg.v1.4.0', replaces: 'pkg.v1.3.0' },
        ],
      },
    });
    expect(chosen(resolveV1(spec(), [c], installed('1.0.0')))).toBe('c/pkg.v1.3.0');
    // Each edge alone is enough.
    for (const [edge, want] of [
      [{ replaces: 'pkg.v1.0.0' }, 'c/pkg.v1.1.0'],
      [{ skips: ['pkg.v1.0.0'] }, 'c/pkg.v1.1.0'],
      [{ skipRange: '<1.0.1' }, 'c/pkg.v1.1.0'],
      [{ skipRange: 'not a range' }, 'c/pkg.v1.0.0'],
    ] as const) {
      const one = catalog('c', {
        versions: ['1.0.0', '1.1.0'],
        channels: { stable: [{ name: 'pkg.v1.0.0' }, { name: 'pkg.v1.1.0', ...edge }] },
      });
      expect(chosen(resolveV1(spec(), [one], installed('1.0.0'))), JSON.stringify(edge)).toBe(want);
    }
  });

  it('stays on the installed version when it has no successor, and never downgrades unless SelfCertified', () => {
    const c = catalog('c', {
      versions: ['1.0.0', '1.1.0'],
      channels: { stable: [{ name: 'pkg.v1.0.0' }, { name: 'pkg.v1.1.0' }] },
    });
    expect(chosen(resolveV1(spec(), [c], installed('1.1.0')))).toBe('c/pkg.v1.1.0');
    expect(chosen(resolveV1(spec({ version: '1.0.0' }), [c], installed('1.1.0')))).toBe(
      'error upgrading from currently installed version "1.1.0": no bundles found for package "pkg" matching version "1.0.0"',
    );
    expect(
      chosen(
        resolveV1(
          spec({ version: '1.0.0', upgradeConstraintPolicy: 'SelfCertified' }),
          [c],
          installed('1.1.0'),
        ),
      ),
    ).toBe('c/pkg.v1.0.0');
    // SelfCertified also jumps to a version no edge leads to.
    expect(
      chosen(resolveV1(spec({ upgradeConstraintPolicy: 'SelfCertified' }), [c], installed('1.0.0'))),
    ).toBe('c/pkg.v1.1.0');
  });

  it('never upgrades a pinned version, even along an edge', () => {
    const c = catalog('c', { versions: ['1.0.0', '1.1.0'], channels: { stable: chain('1.0.0', '1.1.0') } });
    expect(chosen(resolveV1(spec({ version: '1.0.0' }), [c], installed('1.0.0')))).toBe('c/pkg.v1.0.0');
  });

  it('reads successors from the asked channels only', () => {
    // v1 deletes the other channels from the package before it looks for upgrade edges.
    const c = catalog('c', {
      versions: ['1.0.0', '1.1.0'],
      channels: { stable: [{ name: 'pkg.v1.0.0' }, { name: 'pkg.v1.1.0' }], fast: chain('1.0.0', '1.1.0') },
    });
    expect(chosen(resolveV1(spec(), [c], installed('1.0.0')))).toBe('c/pkg.v1.1.0');
    expect(chosen(resolveV1(spec({ channels: ['stable'] }), [c], installed('1.0.0')))).toBe('c/pkg.v1.0.0');
  });

  it('prefers a bundle that is not deprecated, in a catalog and across catalogs', () => {
    const c = catalog('c', { versions: ['1.0.0', '1.1.0'], deprecated: ['1.1.0'] });
    const r = resolveV1(spec(), [c]);
    expect(chosen(r)).toBe('c/pkg.v1.0.0');
    expect(r.ok && r.value.deprecation?.entries.map((e) => e.reference.name)).toEqual(['pkg.v1.1.0']);
    // A deprecated newest bundle loses to another catalog's older one, whatever the priorities.
    const a = catalog('a', { versions: ['2.0.0'], deprecated: ['2.0.0'], priority: 10 });
    const b = catalog('b', { versions: ['1.0.0'] });
    expect(chosen(resolveV1(spec(), [a, b]))).toBe('b/pkg.v1.0.0');
  });

  it('lets the higher priority win, and reports two catalogs of the same priority as ambiguous', () => {
    const a = catalog('a', { versions: ['1.0.0'], priority: 5 });
    const b = catalog('b', { versions: ['2.0.0'] });
    const c = catalog('c', { versions: ['3.0.0'], priority: 5 });
    expect(chosen(resolveV1(spec(), [a, b]))).toBe('a/pkg.v1.0.0');
    // The message names every catalog that had a candidate, the lower-priority one too, as v1's does.
    expect(chosen(resolveV1(spec({ channels: ['stable'] }), [c, b, a]))).toBe(
      'found bundles for package "pkg" in channels [stable] in multiple catalogs with the same priority [a b c]',
    );
  });

  it('resolves from the catalogs the selector picks, never an Unavailable one, and stops at one not served', () => {
    const a = catalog('a', { versions: ['2.0.0'], labels: { tier: 'a' } });
    const b = catalog('b', { versions: ['1.0.0'], labels: { tier: 'b' } });
    expect(chosen(resolveV1(spec({ selector: { matchLabels: { tier: 'b' } } }), [a, b]))).toBe(
      'b/pkg.v1.0.0',
    );
    expect(
      chosen(
        resolveV1(
          spec({ selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['b'] }] } }),
          [a, b],
        ),
      ),
    ).toBe('a/pkg.v2.0.0');
    expect(chosen(resolveV1(spec(), [{ ...a, availabilityMode: 'Unavailable' }, b]))).toBe('b/pkg.v1.0.0');
    expect(chosen(resolveV1(spec(), [a, { ...b, serving: false }]))).toBe(
      'error walking catalogs: error getting package "pkg" from catalog "b": catalog "b" is not being served',
    );
  });

  it('words its errors as v1 does', () => {
    const c = catalog('c', { versions: ['1.0.0'] });
    expect(chosen(resolveV1(spec({ version: '>>1' }), [c]))).toBe(
      'desired version range ">>1" is invalid: improper constraint: >>1',
    );
    expect(chosen(resolveV1(spec({ version: '01.0' }), [c]))).toBe(
      'desired version range "01.0" is invalid: constraint Parser Error',
    );
    expect(
      chosen(resolveV1(spec({ version: '2.x', channels: ['stable', 'fast'] }), [c], installed('1.0.0'))),
    ).toBe(
      'error upgrading from currently installed version "1.0.0": no bundles found for package "pkg" matching version "2.x" in channels [stable fast]',
    );
    // A catalog without the package (its content, read for that package, is empty).
    expect(chosen(resolveV1(spec({ packageName: 'nothing' }), [{ ...c, content: packageContent([]) }]))).toBe(
      'no bundles found for package "nothing"',
    );
    expect(chosen(resolveV1(spec({ version: 'x\n"' }), [c]))).toBe(
      'desired version range "x\\n\\"" is invalid: improper constraint: x\n"',
    );
  });

  it('breaks a tie between equal versions by bundle name, where v1’s concurrent load leaves it open', () => {
    const docs = ['b', 'a'].map((n) => ({
      schema: 'olm.bundle',
      package: 'pkg',
      name: `pkg-${n}`,
      image: 'i',
      properties: [{ type: 'olm.package', value: { packageName: 'pkg', version: '1.0.0+build' } }],
    }));
    const c: V1Catalog = { name: 'c', serving: true, content: packageContent(docs) };
    expect(chosen(resolveV1(spec(), [c]))).toBe('c/pkg-a');
  });
});

describe('a package’s documents as v1’s catalog cache keeps them', () => {
  it('keeps the last document of a name, one deprecations document, and bundles in name order', () => {
    const bundle = (name: string, image: string) => ({
      schema: 'olm.bundle',
      package: 'pkg',
      name,
      image,
      properties: [],
    });
    const content = packageContent([
      bundle('pkg.v2', 'first'),
      bundle('pkg.v1', 'x'),
      bundle('pkg.v2', 'second'),
      {
        schema: 'olm.deprecations',
        package: 'pkg',
        entries: [{ reference: { schema: 'olm.package' }, message: '1' }],
      },
      {
        schema: 'olm.deprecations',
        package: 'pkg',
        entries: [{ reference: { schema: 'olm.package' }, message: '2' }],
      },
    ]);
    expect(content.bundles.map((b) => `${b.name}:${b.image}`)).toEqual(['pkg.v1:x', 'pkg.v2:second']);
    expect(content.deprecation?.entries[0]?.message).toBe('2');
    expect(packageContent([]).found).toBe(false);
  });
});
