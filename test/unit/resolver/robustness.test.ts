/**
 * Malformed catalog content is an expected failure, not a crash: whatever the property values,
 * channel entries, ranges and CEL rules, `resolve` returns a result, and a failure has a message.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChannelEntry, DeclarativeConfig, Property } from '../../../src/apis/fbc.js';
import { type Catalog, resolve } from '../../../src/resolver/index.js';
import { runs } from '../../support/properties.js';

const names = fc.constantFrom('a.v1', 'a.v2', 'b.v1', 'b.v2', '');
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('>=1.0.0', '1.0.0', '<2', 'x||y', ''));

const property: fc.Arbitrary<Property> = fc.record({
  type: fc.constantFrom(
    'olm.package',
    'olm.gvk',
    'olm.gvk.required',
    'olm.package.required',
    'olm.label',
    'olm.label.required',
    'olm.constraint',
    'olm.deprecated',
  ),
  value: fc.oneof(
    fc.anything({ maxDepth: 3 }),
    fc.record({ packageName: fc.constantFrom('a', 'b'), version: text, versionRange: text }),
    fc.record({
      group: fc.constantFrom('g', ''),
      version: fc.constantFrom('v1', 7),
      kind: fc.constantFrom('K', ''),
    }),
    fc.record({
      cel: fc.record({ rule: fc.oneof(text, fc.constantFrom('properties.exists(p, p.type == "x")', '1')) }),
    }),
    fc.record({ all: fc.record({ constraints: fc.anything({ maxDepth: 2 }) }) }),
    fc.string().map((s) => `{"group":"${s}"`),
  ),
});

const entry: fc.Arbitrary<ChannelEntry> = fc.record(
  { name: names, replaces: names, skips: fc.array(names, { maxLength: 2 }), skipRange: text },
  { requiredKeys: ['name'] },
);

const config: fc.Arbitrary<DeclarativeConfig> = fc.record({
  packages: fc.array(
    fc.record({
      schema: fc.constant('olm.package' as const),
      name: fc.constantFrom('a', 'b'),
      defaultChannel: fc.constantFrom('stable', 'missing'),
    }),
    { maxLength: 3 },
  ),
  channels: fc.array(
    fc.record({
      schema: fc.constant('olm.channel' as const),
      package: fc.constantFrom('a', 'b'),
      name: fc.constantFrom('stable', 'fast'),
      entries: fc.array(entry, { maxLength: 4 }),
    }),
    { maxLength: 4 },
  ),
  bundles: fc.array(
    fc.record({
      schema: fc.constant('olm.bundle' as const),
      package: fc.constantFrom('a', 'b'),
      name: names,
      image: fc.constant('img'),
      properties: fc.array(property, { maxLength: 5 }),
    }),
    { maxLength: 5 },
  ),
  deprecations: fc.constant([]),
  others: fc.constant([]),
});

describe('resolver robustness', () => {
  it('returns a result, never throws, whatever the catalog content', () => {
    fc.assert(
      fc.property(config, fc.constantFrom('', 'stable', 'fast'), fc.boolean(), (cfg, channel, explain) => {
        const catalog: Catalog = { name: 'c', namespace: 'ns', priority: 0, config: cfg };
        const r = resolve(
          {
            namespace: 'ns',
            catalogs: [catalog],
            installed: [],
            subscriptions: [
              { name: 's', namespace: 'ns', package: 'a', channel, source: 'c', sourceNamespace: 'ns' },
              { name: 't', namespace: 'ns', package: 'b', channel: '', source: 'c', sourceNamespace: 'ns' },
            ],
          },
          { explain },
        );
        if (r.ok) expect(r.subscriptions.map((s) => s.subscription)).toEqual(['s', 't']);
        else expect(r.message).not.toBe('');
      }),
      runs(500),
    );
  });
});
