/**
 * Table tests for each resolution rule: input (catalogs, installed, Subscriptions) and the
 * expected plan, or the expected failure message.
 */
import { describe, expect, it } from 'vitest';
import type { Property } from '../../../src/apis/fbc.js';
import {
  type Catalog,
  type InstalledOperator,
  type ResolutionResult,
  resolve,
  type SubscriptionInput,
} from '../../../src/resolver/index.js';
import { catalog, installed, sub } from './build.js';

function plan(r: ResolutionResult): string[] {
  if (!r.ok) throw new Error(`expected a plan, got: ${r.message}`);
  return r.steps.map(
    (s) => `${s.bundle} ${s.reason} ${s.catalog}/${s.channel}${s.replaces ? ` replaces ${s.replaces}` : ''}`,
  );
}

interface Case {
  name: string;
  catalogs: Catalog[];
  installed?: InstalledOperator[];
  subscriptions: SubscriptionInput[];
  /** The plan, one line per step; or */
  plan?: string[];
  /** the failure message. */
  fails?: string;
}

const run = (c: Case) =>
  resolve({
    namespace: 'olm',
    catalogs: c.catalogs,
    installed: c.installed ?? [],
    subscriptions: c.subscriptions,
  });

function check(c: Case) {
  const r = run(c);
  if (c.fails !== undefined) {
    expect(r.ok ? r.steps : r.message).toBe(c.fails);
  } else {
    expect(plan(r)).toEqual(c.plan);
  }
}

const constraint = (value: unknown): Property => ({ type: 'olm.constraint', value });

describe('channels and upgrades', () => {
  const chain = [
    { name: 'a.v1', version: '1.0.0' },
    { name: 'a.v2', version: '2.0.0', replaces: 'a.v1' },
    { name: 'a.v3', version: '3.0.0', replaces: 'a.v2' },
  ];
  const cases: Case[] = [
    {
      name: 'a fresh install gets the channel head',
      catalogs: [catalog('c', [{ name: 'a', channels: { stable: chain } }])],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: ['a.v3 subscription c/stable'],
    },
    {
      name: 'an empty channel without a default channel means every channel, by name',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              stable: [{ name: 'a.v2', version: '2.0.0' }],
              alpha: [{ name: 'a.v1', version: '1.0.0' }],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'a', '', 'c')],
      plan: ['a.v1 subscription c/alpha'],
    },
    {
      name: 'an empty channel means any channel, the default first',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            defaultChannel: 'stable',
            channels: {
              alpha: [{ name: 'a.v9', version: '9.0.0' }],
              stable: [{ name: 'a.v1', version: '1.0.0' }],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'a', '', 'c')],
      plan: ['a.v1 subscription c/stable'],
    },
    {
      name: 'an installed bundle upgrades one replaces step at a time',
      catalogs: [catalog('c', [{ name: 'a', channels: { stable: chain } }])],
      installed: [installed('a', chain[0]!)],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: ['a.v2 subscription c/stable replaces a.v1'],
    },
    {
      name: 'an entry that skips the installed bundle is a successor',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              stable: [
                { name: 'a.v1', version: '1.0.0' },
                { name: 'a.v2', version: '2.0.0', replaces: 'a.v1' },
                { name: 'a.v3', version: '3.0.0', replaces: 'a.v2', skips: ['a.v1'] },
              ],
            },
          },
        ]),
      ],
      installed: [installed('a', { name: 'a.v1', version: '1.0.0' })],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: ['a.v3 subscription c/stable replaces a.v1'],
    },
    {
      name: 'an installed head stays: nothing to do',
      catalogs: [catalog('c', [{ name: 'a', channels: { stable: chain } }])],
      installed: [installed('a', chain[2]!)],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: [],
    },
    {
      name: 'never a downgrade, even when an older entry claims to replace the installed one',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              stable: [
                { name: 'a.v2', version: '2.0.0' },
                { name: 'a.v1', version: '1.0.0', replaces: 'a.v2' },
              ],
            },
          },
        ]),
      ],
      installed: [installed('a', { name: 'a.v2', version: '2.0.0' })],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: [],
    },
    {
      name: 'an installed bundle stays when its only successor cannot be installed',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              stable: [
                { name: 'a.v1', version: '1.0.0' },
                { name: 'a.v2', version: '2.0.0', replaces: 'a.v1', requires: ['nobody.io/v1/Thing'] },
              ],
            },
          },
        ]),
      ],
      installed: [installed('a', { name: 'a.v1', version: '1.0.0' })],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: [],
    },
    {
      // OLM's TestSolveOperatorsWithDeprecatedInnerChannelEntry
      name: 'a deprecated bundle (olm.deprecated) is never chosen, but its channel still passes through it',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              c: [
                { name: 'a-1', version: '1.0.0' },
                {
                  name: 'a-2',
                  version: '2.0.0',
                  replaces: 'a-1',
                  properties: [{ type: 'olm.deprecated', value: {} }],
                },
                { name: 'a-3', version: '3.0.0', replaces: 'a-2' },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'a', 'c', 'c')],
      plan: ['a-3 subscription c/c'],
    },
    {
      // OLM's TestSolveOperators_WithoutDeprecated
      name: 'a deprecated head cannot be installed',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              alpha: [
                { name: 'a.v1', version: '0.0.1', properties: [{ type: 'olm.deprecated', value: {} }] },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'a', 'alpha', 'c')],
      fails:
        'subscription s: a.v1 is invalid: properties[1] olm.deprecated: the bundle is deprecated and cannot be installed',
    },
    {
      name: 'an installed bundle that became deprecated stays',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              alpha: [
                { name: 'a.v1', version: '1.0.0', properties: [{ type: 'olm.deprecated', value: {} }] },
              ],
            },
          },
        ]),
      ],
      installed: [
        installed('a', {
          name: 'a.v1',
          version: '1.0.0',
          properties: [{ type: 'olm.deprecated', value: {} }],
        }),
      ],
      subscriptions: [sub('s', 'a', 'alpha', 'c')],
      plan: [],
    },
    {
      name: 'startingCSV that is not in the channel is explained',
      catalogs: [catalog('c', [{ name: 'a', channels: { stable: chain } }])],
      subscriptions: [sub('s', 'a', 'stable', 'c', { startingCSV: 'a.v7' })],
      fails:
        'subscription s: spec.startingCSV a.v7 is not an entry of channel stable of package a in catalog c',
    },
    {
      name: 'a channel with two heads is an error naming the channel',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              stable: [
                { name: 'a.side1', version: '1.0.0' },
                { name: 'a.side2', version: '2.0.0' },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      fails:
        'subscription s: channel stable of package a has 2 heads (a.side1, a.side2): its entries must form one replaces chain (catalog c)',
    },
    {
      name: 'a channel whose entries all replace each other has no head',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              stable: [
                { name: 'a.v1', version: '1.0.0', replaces: 'a.v2' },
                { name: 'a.v2', version: '2.0.0', replaces: 'a.v1' },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      fails:
        'subscription s: channel stable of package a has no head: every entry is replaced or skipped by another, so the upgrade graph has a cycle (catalog c)',
    },
    {
      name: 'a replaces cycle below the head is an error naming the channel',
      catalogs: [
        catalog('c', [
          {
            name: 'a',
            channels: {
              stable: [
                { name: 'a.v3', version: '3.0.0', replaces: 'a.v2' },
                { name: 'a.v2', version: '2.0.0', replaces: 'a.v1' },
                { name: 'a.v1', version: '1.0.0', replaces: 'a.v2' },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      fails:
        'subscription s: channel stable of package a has a replaces cycle: a.v3 -> a.v2 -> a.v1 -> a.v2 (catalog c)',
    },
    {
      name: 'a missing catalog, package or channel is named',
      catalogs: [catalog('c', [{ name: 'a', channels: { stable: chain } }])],
      subscriptions: [sub('s', 'a', 'fast', 'c')],
      fails: 'subscription s: package a in catalog c has no channel fast (it has: stable)',
    },
    {
      name: 'a Subscription to a catalog the namespace cannot use is named',
      catalogs: [catalog('c', [{ name: 'a', channels: { stable: chain } }])],
      subscriptions: [sub('s', 'a', 'stable', 'elsewhere')],
      fails:
        'subscription s: catalog olm/elsewhere (spec.source, spec.sourceNamespace) is not one the namespace can use (it can use: olm/c)',
    },
  ];
  for (const c of cases) it(c.name, () => check(c));
});

describe('requirements', () => {
  const provider = (name: string, version: string, provides: string[], extra = {}) => ({
    name,
    version,
    provides,
    ...extra,
  });
  const cases: Case[] = [
    {
      name: 'a required API pulls in its provider',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: { stable: [{ name: 'app.v1', version: '1.0.0', requires: ['db.io/v1/DB'] }] },
          },
          { name: 'db', channels: { stable: [provider('db.v1', '1.0.0', ['db.io/v1/DB'])] } },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['db.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'nobody provides a required API: the message names bundle, API and how many catalogs were searched',
      catalogs: [
        catalog('c', [
          {
            name: 'etcd',
            channels: {
              alpha: [
                {
                  name: 'etcd.v0.9.4',
                  version: '0.9.4',
                  requires: ['etcd.database.coreos.com/v1beta2/EtcdBackup'],
                },
              ],
            },
          },
        ]),
        catalog('d', []),
        catalog('e', []),
      ],
      subscriptions: [sub('s', 'etcd', 'alpha', 'c')],
      fails:
        'subscription s: etcd.v0.9.4 requires a provider of etcd.database.coreos.com/v1beta2 EtcdBackup; none of 3 catalogs has one in a channel the namespace can use',
    },
    {
      name: 'a package range picks the newest version in range, not the head',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: { stable: [{ name: 'app.v1', version: '1.0.0', needs: { lib: '>=1.0.0 <2.0.0' } }] },
          },
          {
            name: 'lib',
            channels: {
              stable: [
                { name: 'lib.v1.0', version: '1.0.0' },
                { name: 'lib.v1.5', version: '1.5.0', replaces: 'lib.v1.0' },
                { name: 'lib.v2.0', version: '2.0.0', replaces: 'lib.v1.5' },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['lib.v1.5 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'a malformed version range makes the bundle invalid, named with its field',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: { stable: [{ name: 'app.v1', version: '1.0.0', needs: { lib: 'not a range' } }] },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      fails:
        'subscription s: app.v1 is invalid: properties[1] olm.package.required: versionRange "not a range" is not a semver range',
    },
    {
      name: 'olm.label.required is met by a bundle with that olm.label',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                {
                  name: 'app.v1',
                  version: '1.0.0',
                  properties: [{ type: 'olm.label.required', value: { label: 'lts' } }],
                },
              ],
            },
          },
          { name: 'x', channels: { stable: [{ name: 'x.v1', version: '1.0.0' }] } },
          { name: 'y', channels: { stable: [{ name: 'y.v1', version: '1.0.0', labels: ['lts'] }] } },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['y.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'olm.constraint all: one bundle must satisfy every part',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                {
                  name: 'app.v1',
                  version: '1.0.0',
                  properties: [
                    constraint({
                      all: {
                        constraints: [
                          { gvk: { group: 'g', version: 'v1', kind: 'K' } },
                          { package: { packageName: 'good', versionRange: '>=1.0.0' } },
                        ],
                      },
                    }),
                  ],
                },
              ],
            },
          },
          // Provides the API but is the wrong package; preferred by name otherwise.
          { name: 'aaa', channels: { stable: [provider('aaa.v1', '1.0.0', ['g/v1/K'])] } },
          { name: 'good', channels: { stable: [provider('good.v1', '1.0.0', ['g/v1/K'])] } },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['good.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'olm.constraint any: either part will do, preferred order decides',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                {
                  name: 'app.v1',
                  version: '1.0.0',
                  properties: [
                    constraint({
                      any: {
                        constraints: [
                          { package: { packageName: 'b', versionRange: '>=2.0.0' } },
                          { package: { packageName: 'a', versionRange: '>=1.0.0' } },
                        ],
                      },
                    }),
                  ],
                },
              ],
            },
          },
          { name: 'a', channels: { stable: [{ name: 'a.v1', version: '1.0.0' }] } },
          { name: 'b', channels: { stable: [{ name: 'b.v1', version: '1.0.0' }] } },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['a.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'olm.constraint not inside all: rules out the named package',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                {
                  name: 'app.v1',
                  version: '1.0.0',
                  properties: [
                    constraint({
                      failureMessage: 'needs a K provider other than aaa',
                      all: {
                        constraints: [
                          { gvk: { group: 'g', version: 'v1', kind: 'K' } },
                          {
                            not: {
                              constraints: [{ package: { packageName: 'aaa', versionRange: '>=0.0.0' } }],
                            },
                          },
                        ],
                      },
                    }),
                  ],
                },
              ],
            },
          },
          { name: 'aaa', channels: { stable: [provider('aaa.v1', '1.0.0', ['g/v1/K'])] } },
          { name: 'bbb', channels: { stable: [provider('bbb.v1', '1.0.0', ['g/v1/K'])] } },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['bbb.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'olm.constraint cel: properties and semver_compare as OLM defines them',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                {
                  name: 'app.v1',
                  version: '1.0.0',
                  properties: [
                    constraint({
                      cel: {
                        rule: "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'lib' && semver_compare(p.value.version, 'v1.2') >= 0) && properties.exists(p, p.type == 'certified')",
                      },
                    }),
                  ],
                },
              ],
            },
          },
          {
            name: 'lib',
            channels: {
              stable: [
                { name: 'lib.v1.1', version: '1.1.0', properties: [{ type: 'certified', value: true }] },
                { name: 'lib.v1.3', version: '1.3.0', replaces: 'lib.v1.1' },
                {
                  name: 'lib.v1.2',
                  version: '1.2.0',
                  replaces: 'lib.v1.3',
                  properties: [{ type: 'certified', value: true }],
                },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['lib.v1.2 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'olm.constraint cel that is not boolean makes the bundle invalid',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                { name: 'app.v1', version: '1.0.0', properties: [constraint({ cel: { rule: '1 + 2' } })] },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      fails:
        'subscription s: app.v1 is invalid: properties[1] olm.constraint: cel rule "1 + 2" must be boolean, not int',
    },
    {
      name: "a constraint's failureMessage is shown when nobody meets it",
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                {
                  name: 'app.v1',
                  version: '1.0.0',
                  properties: [
                    constraint({
                      failureMessage: 'install a lib first',
                      package: { packageName: 'lib', versionRange: '>=1.0.0' },
                    }),
                  ],
                },
              ],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      fails:
        'subscription s: app.v1 requires package lib in range >=1.0.0 (install a lib first); none of 1 catalog has one in a channel the namespace can use',
    },
    {
      name: 'a bundle that provides what it requires satisfies itself',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [{ name: 'app.v1', version: '1.0.0', provides: ['g/v1/K'], requires: ['g/v1/K'] }],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['app.v1 subscription c/stable'],
    },
    {
      name: 'transitive requirements are followed',
      catalogs: [
        catalog('c', [
          { name: 'a', channels: { stable: [{ name: 'a.v1', version: '1.0.0', needs: { b: '>=1.0.0' } }] } },
          { name: 'b', channels: { stable: [{ name: 'b.v1', version: '1.0.0', needs: { c: '>=1.0.0' } }] } },
          { name: 'c', channels: { stable: [{ name: 'c.v1', version: '1.0.0' }] } },
        ]),
      ],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: ['c.v1 dependency c/stable', 'b.v1 dependency c/stable', 'a.v1 subscription c/stable'],
    },
    {
      name: 'mutual requirements resolve',
      catalogs: [
        catalog('c', [
          { name: 'a', channels: { stable: [{ name: 'a.v1', version: '1.0.0', needs: { b: '>=1.0.0' } }] } },
          { name: 'b', channels: { stable: [{ name: 'b.v1', version: '1.0.0', needs: { a: '>=1.0.0' } }] } },
        ]),
      ],
      subscriptions: [sub('s', 'a', 'stable', 'c')],
      plan: ['b.v1 dependency c/stable', 'a.v1 subscription c/stable'],
    },
  ];
  for (const c of cases) it(c.name, () => check(c));
});

describe('preferences among providers', () => {
  const needsDB = { name: 'app.v1', version: '1.0.0', requires: ['db.io/v1/DB'] };
  const db = (name: string, version = '1.0.0') => ({ name, version, provides: ['db.io/v1/DB'] });
  const cases: Case[] = [
    {
      name: 'an installed provider is used before any catalog bundle',
      catalogs: [
        catalog('c', [
          { name: 'app', channels: { stable: [needsDB] } },
          { name: 'db', channels: { stable: [db('db.v2', '2.0.0')] } },
        ]),
      ],
      installed: [installed('olddb', db('olddb.v1'))],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['app.v1 subscription c/stable'],
    },
    {
      name: "the dependent's own catalog comes before a higher-priority one",
      catalogs: [
        catalog('own', [
          { name: 'app', channels: { stable: [needsDB] } },
          { name: 'db', channels: { stable: [db('db.own')] } },
        ]),
        catalog('high', [{ name: 'db', channels: { stable: [db('db.high')] } }], { priority: 100 }),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'own')],
      plan: ['db.own dependency own/stable', 'app.v1 subscription own/stable'],
    },
    {
      name: 'then higher catalog priority',
      catalogs: [
        catalog('own', [{ name: 'app', channels: { stable: [needsDB] } }]),
        catalog('aaa', [{ name: 'db', channels: { stable: [db('db.aaa')] } }]),
        catalog('zzz', [{ name: 'db', channels: { stable: [db('db.zzz')] } }], { priority: 10 }),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'own')],
      plan: ['db.zzz dependency zzz/stable', 'app.v1 subscription own/stable'],
    },
    {
      name: "then catalogs in the Subscription's namespace before global ones",
      catalogs: [
        catalog('own', [{ name: 'app', channels: { stable: [needsDB] } }]),
        catalog('aaa', [{ name: 'db', channels: { stable: [db('db.global')] } }], {
          namespace: 'olm-global',
        }),
        catalog('zzz', [{ name: 'db', channels: { stable: [db('db.local')] } }]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'own')],
      plan: ['db.local dependency zzz/stable', 'app.v1 subscription own/stable'],
    },
    {
      name: 'then catalog name',
      catalogs: [
        catalog('own', [{ name: 'app', channels: { stable: [needsDB] } }]),
        catalog('zzz', [{ name: 'db', channels: { stable: [db('db.zzz', '9.0.0')] } }]),
        catalog('aaa', [{ name: 'db', channels: { stable: [db('db.aaa')] } }]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'own')],
      plan: ['db.aaa dependency aaa/stable', 'app.v1 subscription own/stable'],
    },
    {
      name: 'then the default channel before others, even with an older version',
      catalogs: [
        catalog('c', [
          { name: 'app', channels: { stable: [needsDB] } },
          {
            name: 'db',
            defaultChannel: 'stable',
            channels: { stable: [db('db.v1', '1.0.0')], fast: [db('db.v2', '2.0.0')] },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['db.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'then package name, whatever the versions: versions of different packages mean nothing against each other',
      catalogs: [
        catalog('c', [
          { name: 'app', channels: { stable: [needsDB] } },
          { name: 'mysql', channels: { stable: [db('mysql.v9', '9.0.0')] } },
          { name: 'mariadb', channels: { stable: [db('mariadb.v1', '1.0.0')] } },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['mariadb.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'then channel name, among channels that are not the default',
      catalogs: [
        catalog('c', [
          { name: 'app', channels: { stable: [needsDB] } },
          {
            name: 'db',
            defaultChannel: 'stable',
            channels: {
              stable: [{ name: 'db.v0', version: '0.1.0' }],
              fast: [db('db.v2', '2.0.0')],
              candidate: [db('db.v1', '1.0.0')],
            },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['db.v1 dependency c/candidate', 'app.v1 subscription c/stable'],
    },
    {
      name: 'then the order of the channel from its head',
      catalogs: [
        catalog('c', [
          { name: 'app', channels: { stable: [needsDB] } },
          {
            name: 'db',
            channels: { stable: [db('db.v1', '1.0.0'), { ...db('db.v2', '2.0.0'), replaces: 'db.v1' }] },
          },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['db.v2 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: "an installed operator's requirement goes by catalog priority, not the catalog it was installed from",
      catalogs: [
        catalog('own', [
          { name: 'app', channels: { stable: [needsDB] } },
          { name: 'db', channels: { stable: [db('db.own')] } },
        ]),
        catalog('high', [{ name: 'db', channels: { stable: [db('db.high')] } }], { priority: 100 }),
      ],
      installed: [installed('app', needsDB, { name: 'own' })],
      subscriptions: [],
      plan: ['db.high dependency high/stable'],
    },
  ];
  for (const c of cases) it(c.name, () => check(c));
});

describe('invariants and backtracking', () => {
  const cases: Case[] = [
    {
      name: 'an installed operator without a Subscription keeps its API: a new provider of it conflicts',
      catalogs: [
        catalog('c', [
          { name: 'b', channels: { stable: [{ name: 'b.v1', version: '1.0.0', provides: ['g/v/k'] }] } },
        ]),
      ],
      installed: [installed('a', { name: 'a.v1', version: '1.0.0', provides: ['g/v/k'] })],
      subscriptions: [sub('s', 'b', 'stable', 'c')],
      fails:
        'subscription s: b.v1 provides g/v k, which a.v1 (installed) already provides: a namespace can have only one provider of an API',
    },
    {
      // Where Bosun departs from OLM on purpose: OLM fails the whole resolution.
      name: 'installed operators without Subscriptions that already provide the same API stay as they are',
      catalogs: [
        catalog('c', [
          { name: 'b', channels: { stable: [{ name: 'b.v1', version: '1.0.0', provides: ['g/v/other'] }] } },
        ]),
      ],
      installed: [
        installed('a', { name: 'a.v1', version: '1.0.0', provides: ['g/v/k'] }),
        installed('z', { name: 'z.v1', version: '1.0.0', provides: ['g/v/k'] }),
      ],
      subscriptions: [sub('s', 'b', 'stable', 'c')],
      plan: ['b.v1 subscription c/stable'],
    },
    {
      name: 'a preferred provider that leads to a conflict is undone and the next one taken',
      // p1 is preferred (own catalog), but it needs package r, whose only bundle provides an API
      // the installed operator already provides.
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: { stable: [{ name: 'app.v1', version: '1.0.0', requires: ['x.io/v1/X'] }] },
          },
          {
            name: 'p1',
            channels: {
              stable: [{ name: 'p1.v1', version: '1.0.0', provides: ['x.io/v1/X'], needs: { r: '>=1.0.0' } }],
            },
          },
          { name: 'r', channels: { stable: [{ name: 'r.v1', version: '1.0.0', provides: ['y.io/v1/Y'] }] } },
        ]),
        catalog('d', [
          {
            name: 'p2',
            channels: { stable: [{ name: 'p2.v1', version: '1.0.0', provides: ['x.io/v1/X'] }] },
          },
        ]),
      ],
      installed: [installed('fixed', { name: 'fixed.v1', version: '1.0.0', provides: ['y.io/v1/Y'] })],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['p2.v1 dependency d/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: 'a choice made for one requirement is undone when a later requirement cannot live with it',
      // app needs X (gvk, looked at first) and package z. The preferred X provider, p1, also
      // provides W; z provides W too. Only p2 leaves room for z.
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: {
              stable: [
                { name: 'app.v1', version: '1.0.0', requires: ['x.io/v1/X'], needs: { z: '>=1.0.0' } },
              ],
            },
          },
          {
            name: 'p1',
            channels: { stable: [{ name: 'p1.v1', version: '1.0.0', provides: ['x.io/v1/X', 'w.io/v1/W'] }] },
          },
          {
            name: 'p2',
            channels: { stable: [{ name: 'p2.v1', version: '1.0.0', provides: ['x.io/v1/X'] }] },
          },
          { name: 'z', channels: { stable: [{ name: 'z.v1', version: '1.0.0', provides: ['w.io/v1/W'] }] } },
        ]),
      ],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['p2.v1 dependency c/stable', 'z.v1 dependency c/stable', 'app.v1 subscription c/stable'],
    },
    {
      name: "a Subscription's upgrade is held back when it would break an installed operator's requirement",
      catalogs: [
        catalog('c', [
          {
            name: 'lib',
            channels: {
              stable: [
                { name: 'lib.v1', version: '1.0.0' },
                { name: 'lib.v2', version: '2.0.0', replaces: 'lib.v1' },
              ],
            },
          },
        ]),
      ],
      installed: [
        installed('lib', { name: 'lib.v1', version: '1.0.0' }),
        installed('app', { name: 'app.v1', version: '1.0.0', needs: { lib: '<2.0.0' } }),
      ],
      subscriptions: [sub('s', 'lib', 'stable', 'c')],
      plan: [],
    },
    {
      name: 'an upgrade of one Subscription that a new one needs is taken together',
      catalogs: [
        catalog('c', [
          {
            name: 'lib',
            channels: {
              stable: [
                { name: 'lib.v1', version: '1.0.0' },
                { name: 'lib.v2', version: '2.0.0', replaces: 'lib.v1' },
              ],
            },
          },
          {
            name: 'app',
            channels: { stable: [{ name: 'app.v1', version: '1.0.0', needs: { lib: '>=2.0.0' } }] },
          },
        ]),
      ],
      installed: [installed('lib', { name: 'lib.v1', version: '1.0.0' })],
      subscriptions: [sub('s-app', 'app', 'stable', 'c'), sub('s-lib', 'lib', 'stable', 'c')],
      plan: ['lib.v2 subscription c/stable replaces lib.v1', 'app.v1 subscription c/stable'],
    },
    {
      name: 'an installed operator without a Subscription is not upgraded for a dependent; the message says how to allow it',
      catalogs: [
        catalog('c', [
          {
            name: 'lib',
            channels: {
              stable: [
                { name: 'lib.v1', version: '1.0.0' },
                { name: 'lib.v2', version: '2.0.0', replaces: 'lib.v1' },
              ],
            },
          },
          {
            name: 'app',
            channels: { stable: [{ name: 'app.v1', version: '1.0.0', needs: { lib: '>=2.0.0' } }] },
          },
        ]),
      ],
      installed: [installed('lib', { name: 'lib.v1', version: '1.0.0' })],
      subscriptions: [sub('s-app', 'app', 'stable', 'c')],
      fails:
        'subscription s-app: app.v1 requires package lib in range >=2.0.0; the only candidate cannot be used: ' +
        'lib.v2 (channel stable of catalog c) conflicts with lib.v1 (installed): a namespace can have only one bundle of package lib ' +
        '(a Subscription to lib would let it upgrade)',
    },
    {
      name: 'nothing is added or upgraded that the Subscriptions do not need',
      catalogs: [
        catalog('c', [
          {
            name: 'app',
            channels: { stable: [{ name: 'app.v1', version: '1.0.0', needs: { lib: '>=1.0.0' } }] },
          },
          {
            name: 'lib',
            channels: {
              stable: [
                { name: 'lib.v1', version: '1.0.0' },
                { name: 'lib.v2', version: '2.0.0', replaces: 'lib.v1' },
              ],
            },
          },
          { name: 'unrelated', channels: { stable: [{ name: 'unrelated.v1', version: '1.0.0' }] } },
        ]),
      ],
      installed: [installed('lib', { name: 'lib.v1', version: '1.0.0' })],
      subscriptions: [sub('s', 'app', 'stable', 'c')],
      plan: ['app.v1 subscription c/stable'],
    },
  ];
  for (const c of cases) it(c.name, () => check(c));
});

describe('results', () => {
  it('reports each Subscription as install, upgrade or at-latest', () => {
    const chain = [
      { name: 'a.v1', version: '1.0.0' },
      { name: 'a.v2', version: '2.0.0', replaces: 'a.v1' },
    ];
    const r = resolve({
      namespace: 'olm',
      catalogs: [
        catalog('c', [
          { name: 'a', channels: { stable: chain } },
          { name: 'b', channels: { stable: [{ name: 'b.v1', version: '1.0.0' }] } },
          { name: 'n', channels: { stable: [{ name: 'n.v1', version: '1.0.0' }] } },
        ]),
      ],
      installed: [installed('a', chain[0]!), installed('b', { name: 'b.v1', version: '1.0.0' })],
      subscriptions: [
        sub('sa', 'a', 'stable', 'c'),
        sub('sb', 'b', 'stable', 'c'),
        sub('sn', 'n', 'stable', 'c'),
      ],
    });
    if (!r.ok) throw new Error(r.message);
    expect(r.subscriptions.map((s) => [s.subscription, s.bundle, s.state])).toEqual([
      ['sa', 'a.v2', 'upgrade'],
      ['sb', 'b.v1', 'at-latest'],
      ['sn', 'n.v1', 'install'],
    ]);
    expect(r.steps.map((s) => [s.bundle, s.subscription, s.image])).toEqual([
      ['a.v2', 'sa', 'example.com/a:2.0.0'],
      ['n.v1', 'sn', 'example.com/n:1.0.0'],
    ]);
  });

  it('keeps an installed operator whose Subscription names a missing catalog, and says so', () => {
    const r = resolve({
      namespace: 'olm',
      catalogs: [catalog('c', [])],
      installed: [installed('a', { name: 'a.v1', version: '1.0.0' })],
      subscriptions: [sub('s', 'a', 'stable', 'gone')],
    });
    if (!r.ok) throw new Error(r.message);
    expect(r.steps).toEqual([]);
    expect(r.subscriptions).toEqual([
      {
        subscription: 's',
        package: 'a',
        channel: 'stable',
        catalog: 'gone',
        catalogNamespace: 'olm',
        bundle: 'a.v1',
        version: '1.0.0',
        state: 'at-latest',
        note: 'catalog olm/gone (spec.source, spec.sourceNamespace) is not one the namespace can use (it can use: olm/c)',
      },
    ]);
  });

  it('explains a success on request: why this bundle and not the newer ones', () => {
    const r = resolve(
      {
        namespace: 'olm',
        catalogs: [
          catalog('c', [
            {
              name: 'a',
              channels: {
                stable: [
                  { name: 'a.v1', version: '1.0.0' },
                  { name: 'a.v2', version: '2.0.0', replaces: 'a.v1' },
                  {
                    name: 'a.v3',
                    version: '3.0.0',
                    replaces: 'a.v2',
                    skipRange: '>=1.0.0 <3.0.0',
                    requires: ['nobody.io/v1/N'],
                  },
                  { name: 'a.v4', version: '4.0.0', replaces: 'a.v3' },
                ],
              },
            },
          ]),
        ],
        installed: [installed('a', { name: 'a.v1', version: '1.0.0' })],
        subscriptions: [sub('s', 'a', 'stable', 'c')],
      },
      { explain: true },
    );
    if (!r.ok) throw new Error(r.message);
    expect(r.steps.map((s) => s.bundle)).toEqual(['a.v2']);
    expect(r.explanation?.subscriptions[0]?.passedOver.map((p) => [p.candidate.bundle, p.why])).toEqual([
      [
        'a.v3',
        'a.v3 requires a provider of nobody.io/v1 N; none of 1 catalog has one in a channel the namespace can use',
      ],
      [
        'a.v4',
        'it does not upgrade from a.v1: it neither replaces nor skips it, and its skipRange does not include 1.0.0',
      ],
    ]);
  });

  it('lists the dependencies with what required them', () => {
    const r = resolve(
      {
        namespace: 'olm',
        catalogs: [
          catalog('c', [
            {
              name: 'app',
              channels: { stable: [{ name: 'app.v1', version: '1.0.0', requires: ['db.io/v1/DB'] }] },
            },
            {
              name: 'db',
              channels: { stable: [{ name: 'db.v1', version: '1.0.0', provides: ['db.io/v1/DB'] }] },
            },
          ]),
        ],
        installed: [],
        subscriptions: [sub('s', 'app', 'stable', 'c')],
      },
      { explain: true },
    );
    if (!r.ok) throw new Error(r.message);
    expect(r.explanation?.dependencies?.map((d) => [d.requiredBy.bundle, d.wants, d.chosen.bundle])).toEqual([
      ['app.v1', 'a provider of db.io/v1 DB', 'db.v1'],
    ]);
  });

  it('rejects input that is itself wrong, naming object and field', () => {
    const r = resolve({
      namespace: 'olm',
      catalogs: [],
      installed: [
        installed('a', { name: 'a.v1', version: '1.0.0' }),
        installed('a', { name: 'a.v2', version: '2.0.0' }),
      ],
      subscriptions: [sub('s', 'a', 'stable', 'c', { namespace: 'other' })],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe('InvalidInput');
    expect(r.problems).toEqual([
      {
        object: 'Subscription/s',
        field: 'metadata.namespace',
        message: 'is other, but the resolution is for namespace olm',
      },
      {
        object: 'ClusterServiceVersion/a.v2',
        message: 'is in package a, like a.v1: a namespace has at most one bundle per package',
      },
    ]);
  });

  it('gives up with a reason, not a hang, when the search limit is reached', () => {
    const r = resolve(
      {
        namespace: 'olm',
        catalogs: [
          catalog('c', [
            {
              name: 'app',
              channels: { stable: [{ name: 'app.v1', version: '1.0.0', needs: { lib: '>=1.0.0' } }] },
            },
            { name: 'lib', channels: { stable: [{ name: 'lib.v1', version: '1.0.0' }] } },
          ]),
        ],
        installed: [],
        subscriptions: [sub('s', 'app', 'stable', 'c')],
      },
      { maxSteps: 1 },
    );
    expect(r.ok ? 'ok' : r.reason).toBe('SearchLimitExceeded');
  });
});
