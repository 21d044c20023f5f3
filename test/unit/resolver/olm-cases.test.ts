/**
 * Cases from OLM's own resolver test suite (pkg/controller/registry/resolver), restated as data:
 * the same catalogs, installed operators and Subscriptions, and the plan OLM arrives at.
 */
import { describe, expect, it } from 'vitest';
import { type ResolutionResult, resolve } from '../../../src/resolver/index.js';
import { type BundleSpec, catalog, installed, sub } from './build.js';

/** A plan as one line per step: `bundle reason catalog/channel [replaces x]`. */
function plan(r: ResolutionResult): string[] {
  if (!r.ok) throw new Error(`expected a plan, got: ${r.message}`);
  return r.steps.map(
    (s) => `${s.bundle} ${s.reason} ${s.catalog}/${s.channel}${s.replaces ? ` replaces ${s.replaces}` : ''}`,
  );
}

function failure(r: ResolutionResult) {
  if (r.ok) throw new Error(`expected no plan, got: ${JSON.stringify(r.steps)}`);
  return r;
}

describe('OLM resolver cases', () => {
  // TestSolveOperators_FindLatestVersionWithDependencies
  const depCatalog = catalog('community', [
    {
      name: 'packageA',
      channels: { alpha: [{ name: 'packageA.v1.0.1', version: '1.0.1', replaces: 'packageA.v1' }] },
    },
    {
      name: 'packageB',
      channels: {
        alpha: [
          { name: 'packageB.v0.9.0', version: '0.9.0' },
          { name: 'packageB.v1.0.0', version: '1.0.0', replaces: 'packageB.v0.9.0' },
          {
            name: 'packageB.v1.0.1',
            version: '1.0.1',
            replaces: 'packageB.v1.0.0',
            needs: { packageC: '1.0.1', packageD: '1.0.1' },
          },
        ],
      },
    },
    {
      name: 'packageC',
      channels: {
        alpha: [
          { name: 'packageC.v1.0.0', version: '1.0.0' },
          { name: 'packageC.v1.0.1', version: '1.0.1', replaces: 'packageC.v1.0.0' },
        ],
      },
    },
    {
      name: 'packageD',
      channels: {
        alpha: [
          { name: 'packageD.v1.0.0', version: '1.0.0' },
          { name: 'packageD.v1.0.1', version: '1.0.1', replaces: 'packageD.v1.0.0' },
          { name: 'packageD.v1.0.2', version: '1.0.2', replaces: 'packageD.v1.0.1' },
        ],
      },
    },
  ]);
  const packageAv1 = installed(
    'packageA',
    { name: 'packageA.v1', version: '0.0.1', provides: ['g/v/k'] },
    { name: 'community' },
  );

  it('1. a head that needs exact versions of two packages pulls in exactly those, and an installed operator with a Subscription is upgraded', () => {
    const r = resolve({
      namespace: 'olm',
      catalogs: [depCatalog],
      installed: [packageAv1],
      subscriptions: [
        sub('sub-a', 'packageA', 'alpha', 'community'),
        sub('sub-b', 'packageB', 'alpha', 'community'),
      ],
    });
    expect(plan(r)).toEqual([
      'packageA.v1.0.1 subscription community/alpha replaces packageA.v1',
      'packageC.v1.0.1 dependency community/alpha',
      'packageD.v1.0.1 dependency community/alpha',
      'packageB.v1.0.1 subscription community/alpha',
    ]);
  });

  it('1b. the same installed operator without a Subscription is left as it is', () => {
    const r = resolve({
      namespace: 'olm',
      catalogs: [depCatalog],
      installed: [packageAv1],
      subscriptions: [sub('sub-b', 'packageB', 'alpha', 'community')],
    });
    expect(plan(r)).toEqual([
      'packageC.v1.0.1 dependency community/alpha',
      'packageD.v1.0.1 dependency community/alpha',
      'packageB.v1.0.1 subscription community/alpha',
    ]);
  });

  it('2. startingCSV installs exactly that bundle, with the newest provider from a six-version chain with skips', () => {
    // TestSolveOperators_WithSkipsAndStartingCSV
    const r = resolve({
      namespace: 'olm',
      catalogs: [
        catalog('community', [
          {
            name: 'packageB',
            channels: {
              alpha: [
                { name: 'packageB.v1', version: '1.0.0', requires: ['g/v/k'] },
                { name: 'packageB.v2', version: '2.0.0', skips: ['packageB.v1'], requires: ['g/v/k'] },
              ],
            },
          },
          {
            name: 'packageA',
            channels: {
              alpha: [
                { name: 'packageA.v1', version: '1.0.0', provides: ['g/v/k'] },
                { name: 'packageA.v2', version: '2.0.0', replaces: 'packageA.v1', provides: ['g/v/k'] },
                { name: 'packageA.v3', version: '3.0.0', replaces: 'packageA.v2', provides: ['g/v/k'] },
                {
                  name: 'packageA.v4',
                  version: '4.0.0',
                  replaces: 'packageA.v3',
                  skips: ['packageA.v3'],
                  provides: ['g/v/k'],
                },
                {
                  name: 'packageA.v5',
                  version: '5.0.0',
                  replaces: 'packageA.v4',
                  skips: ['packageA.v2', 'packageA.v3', 'packageA.v4'],
                  provides: ['g/v/k'],
                },
                { name: 'packageA.v6', version: '6.0.0', replaces: 'packageA.v5', provides: ['g/v/k'] },
              ],
            },
          },
        ]),
      ],
      installed: [],
      subscriptions: [sub('sub-b', 'packageB', 'alpha', 'community', { startingCSV: 'packageB.v1' })],
    });
    expect(plan(r)).toEqual([
      'packageA.v6 dependency community/alpha',
      'packageB.v1 subscription community/alpha',
    ]);
  });

  it('3. a requirement only a skipped bundle satisfies is unsatisfiable', () => {
    // TestSolveOperatorsWithSkipsPreventingSelection
    const r = failure(
      resolve({
        namespace: 'test-namespace',
        catalogs: [
          catalog(
            'test-catalog',
            [
              { name: 'a', channels: { channel: [{ name: 'a-1', version: '1.0.0', requires: ['g/v/k'] }] } },
              {
                name: 'b',
                channels: {
                  channel: [
                    { name: 'b-3', version: '3.0.0', replaces: 'b-2', skips: ['b-1'] },
                    { name: 'b-2', version: '2.0.0', replaces: 'b-1' },
                    { name: 'b-1', version: '1.0.0', provides: ['g/v/k'] },
                  ],
                },
              },
            ],
            { namespace: 'test-namespace' },
          ),
        ],
        installed: [],
        subscriptions: [
          sub('sub-a', 'a', 'channel', 'test-catalog', {
            namespace: 'test-namespace',
            sourceNamespace: 'test-namespace',
          }),
        ],
      }),
    );
    expect(r.reason).toBe('ConstraintsNotSatisfiable');
    expect(r.message).toBe(
      'subscription sub-a: a-1 requires a provider of g/v k; none of 1 catalog has one in a channel the namespace can use ' +
        '(b-1 in catalog test-catalog would, but b-3 skips it in channel channel)',
    );
    expect(r.explanation.conflict).toEqual([
      {
        kind: 'subscription',
        text: 'subscription sub-a wants package a from channel channel of catalog test-catalog',
      },
      { kind: 'requirement', text: 'a-1 requires a provider of g/v k' },
    ]);
  });

  it('4. a package does not satisfy its own requirements; providers come by default channel and catalog preference', () => {
    // TestSolveOperators_PackageCannotSelfSatisfy
    const r = resolve({
      namespace: 'olm',
      catalogs: [
        catalog('community', [
          {
            name: 'packageA',
            channels: {
              stable: [{ name: 'opA.v1.0.0', version: '1.0.0', requires: ['g/v/k', 'g2/v/k'] }],
              // Provides both, but it is the same package as opA.
              alpha: [{ name: 'opABC.v1.0.0', version: '1.0.0', provides: ['g/v/k', 'g2/v/k'] }],
            },
          },
          {
            name: 'packageB',
            defaultChannel: 'stable',
            channels: {
              stable: [{ name: 'opB.v1.0.0', version: '1.0.0', provides: ['g/v/k'] }],
              alpha: [{ name: 'opD.v1.0.0', version: '1.0.0', provides: ['g/v/k'] }],
            },
          },
        ]),
        catalog('secondary', [
          {
            name: 'packageB',
            defaultChannel: 'stable',
            channels: { stable: [{ name: 'opC.v1.0.0', version: '1.0.0', provides: ['g2/v/k'] }] },
          },
          {
            name: 'packageC',
            channels: { stable: [{ name: 'opE.v1.0.0', version: '1.0.0', provides: ['g2/v/k'] }] },
          },
        ]),
      ],
      installed: [],
      subscriptions: [sub('sub-a', 'packageA', 'stable', 'community')],
    });
    expect(plan(r)).toEqual([
      'opB.v1.0.0 dependency community/stable',
      'opE.v1.0.0 dependency secondary/stable',
      'opA.v1.0.0 subscription community/stable',
    ]);
  });

  it('5. skipRange on a non-head entry: the installed version upgrades to the newest entry whose range has it, not the head', () => {
    const r = resolve({
      namespace: 'olm',
      catalogs: [
        catalog('community', [
          {
            name: 'a',
            channels: {
              stable: [
                { name: 'a.v1.0.0', version: '1.0.0' },
                { name: 'a.v1.1.0', version: '1.1.0', replaces: 'a.v1.0.0' },
                { name: 'a.v1.2.0', version: '1.2.0', replaces: 'a.v1.1.0', skipRange: '>=1.0.0 <1.2.0' },
                { name: 'a.v2.0.0', version: '2.0.0', replaces: 'a.v1.2.0', skipRange: '>=1.2.0 <2.0.0' },
              ],
            },
          },
        ]),
      ],
      installed: [installed('a', { name: 'a.v1.0.0', version: '1.0.0' }, { name: 'community' })],
      subscriptions: [sub('sub-a', 'a', 'stable', 'community')],
    });
    expect(plan(r)).toEqual(['a.v1.2.0 subscription community/stable replaces a.v1.0.0']);
  });

  it('6. two Subscriptions to one package in different channels cannot both be met, and the explanation says why', () => {
    const r = failure(
      resolve({
        namespace: 'olm',
        catalogs: [
          catalog('community', [
            {
              name: 'packageA',
              defaultChannel: 'alpha',
              channels: {
                alpha: [{ name: 'packageA.v1', version: '1.0.0' }],
                beta: [{ name: 'packageA.v2', version: '2.0.0' }],
              },
            },
          ]),
        ],
        installed: [],
        subscriptions: [
          sub('sub-alpha', 'packageA', 'alpha', 'community'),
          sub('sub-beta', 'packageA', 'beta', 'community'),
        ],
      }),
    );
    expect(r.message).toBe(
      'subscription sub-beta: packageA.v2 (channel beta of catalog community) conflicts with packageA.v1 ' +
        '(channel alpha of catalog community, for subscription sub-alpha): a namespace can have only one bundle of package packageA',
    );
    expect(r.explanation.conflict).toEqual([
      {
        kind: 'subscription',
        text: 'subscription sub-alpha wants package packageA from channel alpha of catalog community',
      },
      {
        kind: 'subscription',
        text: 'subscription sub-beta wants package packageA from channel beta of catalog community',
      },
      { kind: 'one-bundle-per-package', text: 'at most one bundle of package packageA' },
    ]);
    expect(r.explanation.subscriptions.map((s) => [s.subscription, s.inConflict])).toEqual([
      ['sub-alpha', true],
      ['sub-beta', true],
    ]);
  });
});

/**
 * Cases where Bosun once answered differently from OLM v0.46.0's resolver, each reduced to its
 * smallest form and answered by that resolver (the olm-oracle beside the repository).
 */
describe("OLM's answers where Bosun used to differ", () => {
  const d = (name: string, version: string, more: Partial<BundleSpec> = {}): BundleSpec => ({
    name,
    version,
    ...more,
  });
  const deprecated = { properties: [{ type: 'olm.deprecated', value: {} }] };

  it('a fresh install falls back below the channel head when the head requires an API nobody provides', () => {
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          {
            name: 'd',
            channels: {
              stable: [
                d('d.v1.2.0', '1.2.0'),
                d('d.v2.1.0', '2.1.0', { replaces: 'd.v1.2.0', requires: ['example.com/v1/Gizmo'] }),
              ],
            },
          },
        ]),
      ],
      installed: [],
      subscriptions: [sub('sub-d', 'd', 'stable', 'main', { namespace: 'ops' })],
    });
    expect(plan(r)).toEqual(['d.v1.2.0 subscription main/stable']);
  });

  it('a fresh install falls back below a deprecated head, and past a skipped entry', () => {
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          {
            name: 'd',
            channels: {
              stable: [
                d('d.v1.0.0', '1.0.0'),
                d('d.v1.1.0', '1.1.0', { replaces: 'd.v1.0.0' }),
                d('d.v1.2.0', '1.2.0', { replaces: 'd.v1.0.0', skips: ['d.v1.1.0'] }),
                d('d.v2.0.0', '2.0.0', { replaces: 'd.v1.2.0', ...deprecated }),
              ],
            },
          },
        ]),
      ],
      installed: [],
      subscriptions: [sub('sub-d', 'd', 'stable', 'main', { namespace: 'ops' })],
    });
    expect(plan(r)).toEqual(['d.v1.2.0 subscription main/stable']);
  });

  it('a fresh install falls back below the head when the head conflicts with what another Subscription chose', () => {
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          {
            name: 'a',
            channels: { stable: [d('a.v1.0.0', '1.0.0', { provides: ['example.com/v1/Widget'] })] },
          },
          {
            name: 'b',
            channels: {
              stable: [
                d('b.v1.0.0', '1.0.0'),
                d('b.v2.0.0', '2.0.0', { replaces: 'b.v1.0.0', provides: ['example.com/v1/Widget'] }),
              ],
            },
          },
        ]),
      ],
      installed: [],
      subscriptions: [
        sub('sub-a', 'a', 'stable', 'main', { namespace: 'ops' }),
        sub('sub-b', 'b', 'stable', 'main', { namespace: 'ops' }),
      ],
    });
    expect(plan(r)).toEqual(['a.v1.0.0 subscription main/stable', 'b.v1.0.0 subscription main/stable']);
  });

  it('without spec.channel, any channel will do, the default first', () => {
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          {
            name: 'd',
            defaultChannel: 'stable',
            channels: {
              stable: [d('d.v2.0.0', '2.0.0', { requires: ['example.com/v1/Gizmo'] })],
              fast: [d('d.v1.0.0', '1.0.0')],
            },
          },
        ]),
      ],
      installed: [],
      subscriptions: [sub('sub-d', 'd', '', 'main', { namespace: 'ops' })],
    });
    expect(plan(r)).toEqual(['d.v1.0.0 subscription main/fast']);
  });

  it('among providers of an API in one catalog: the default channel, then package name, whatever the versions', () => {
    const widget = ['example.com/v1/Widget'];
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          { name: 'app', channels: { stable: [d('app.v1.0.0', '1.0.0', { requires: widget })] } },
          { name: 'zeta', channels: { stable: [d('zeta.v9.0.0', '9.0.0', { provides: widget })] } },
          { name: 'beta', channels: { stable: [d('beta.v0.1.0', '0.1.0', { provides: widget })] } },
        ]),
      ],
      installed: [],
      subscriptions: [sub('sub-app', 'app', 'stable', 'main', { namespace: 'ops' })],
    });
    expect(plan(r)).toEqual(['beta.v0.1.0 dependency main/stable', 'app.v1.0.0 subscription main/stable']);
  });

  it('within one channel, a dependency follows the channel from its head, not the newest version', () => {
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          { name: 'app', channels: { stable: [d('app.v1.0.0', '1.0.0', { needs: { lib: '>=1.0.0' } })] } },
          {
            name: 'lib',
            channels: {
              // The head has the lower version: it replaces lib.v2.0.0.
              stable: [d('lib.v2.0.0', '2.0.0'), d('lib.v1.5.0', '1.5.0', { replaces: 'lib.v2.0.0' })],
            },
          },
        ]),
      ],
      installed: [],
      subscriptions: [sub('sub-app', 'app', 'stable', 'main', { namespace: 'ops' })],
    });
    expect(plan(r)).toEqual(['lib.v1.5.0 dependency main/stable', 'app.v1.0.0 subscription main/stable']);
  });

  it('an upgrade takes the successor nearest the head, not the newest version', () => {
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          {
            name: 'd',
            channels: {
              stable: [
                d('d.v1.0.0', '1.0.0'),
                d('d.v3.0.0', '3.0.0', { replaces: 'd.v1.0.0' }),
                d('d.v2.0.0', '2.0.0', { replaces: 'd.v3.0.0', skipRange: '<2.0.0' }),
              ],
            },
          },
        ]),
      ],
      installed: [installed('d', d('d.v1.0.0', '1.0.0'), { name: 'main' })],
      subscriptions: [sub('sub-d', 'd', 'stable', 'main', { namespace: 'ops' })],
    });
    expect(plan(r)).toEqual(['d.v2.0.0 subscription main/stable replaces d.v1.0.0']);
  });

  it("a startingCSV its channel skips is installed, but meets no other bundle's requirement", () => {
    const widget = ['example.com/v1/Widget'];
    const r = failure(
      resolve({
        namespace: 'ops',
        catalogs: [
          catalog('main', [
            { name: 'app', channels: { stable: [d('app.v1.0.0', '1.0.0', { requires: widget })] } },
            {
              name: 'lib',
              channels: {
                stable: [
                  d('lib.v1.0.0', '1.0.0', { provides: widget }),
                  d('lib.v2.0.0', '2.0.0', { skips: ['lib.v1.0.0'] }),
                ],
              },
            },
          ]),
        ],
        installed: [],
        subscriptions: [
          sub('sub-app', 'app', 'stable', 'main', { namespace: 'ops' }),
          sub('sub-lib', 'lib', 'stable', 'main', { namespace: 'ops', startingCSV: 'lib.v1.0.0' }),
        ],
      }),
    );
    expect(r.reason).toBe('ConstraintsNotSatisfiable');
    // Alone, it installs.
    const alone = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          {
            name: 'lib',
            channels: {
              stable: [
                d('lib.v1.0.0', '1.0.0', { provides: widget }),
                d('lib.v2.0.0', '2.0.0', { skips: ['lib.v1.0.0'] }),
              ],
            },
          },
        ]),
      ],
      installed: [],
      subscriptions: [
        sub('sub-lib', 'lib', 'stable', 'main', { namespace: 'ops', startingCSV: 'lib.v1.0.0' }),
      ],
    });
    expect(plan(alone)).toEqual(['lib.v1.0.0 subscription main/stable']);
  });

  it("an installed operator's requirement goes by catalog priority, not the catalog it came from", () => {
    const widget = ['example.com/v1/Widget'];
    const r = resolve({
      namespace: 'ops',
      catalogs: [
        catalog('main', [
          { name: 'app', channels: { stable: [d('app.v1.0.0', '1.0.0', { requires: widget })] } },
          { name: 'lib', channels: { stable: [d('lib.v1.0.0', '1.0.0', { provides: widget })] } },
        ]),
        catalog(
          'alt',
          [{ name: 'lib', channels: { stable: [d('lib.v1.0.0', '1.0.0', { provides: widget })] } }],
          {
            priority: 10,
          },
        ),
      ],
      installed: [installed('app', d('app.v1.0.0', '1.0.0', { requires: widget }), { name: 'main' })],
      subscriptions: [],
    });
    expect(r.ok && r.steps.map((s) => `${s.bundle} ${s.catalog}`)).toEqual(['lib.v1.0.0 alt']);
  });
});
