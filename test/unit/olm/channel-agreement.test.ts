/**
 * Validation and the resolver read a channel's graph the same way (the kernel's, with opm's
 * rules): a channel validation accepts is usable by the resolver, which offers exactly the
 * kernel's candidates in the kernel's order; a channel without one head or with a cycle on its
 * chain is refused by both.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ChannelEntry, type DeclarativeConfig, emptyConfig } from '../../../src/apis/fbc.js';
import { validateCatalog } from '../../../src/catalog/validate.js';
import { channelGraph } from '../../../src/olm/channel-graph.js';
import { indexCatalog } from '../../../src/resolver/catalog-index.js';
import { runs } from '../../support/properties.js';
import { bundleDoc, channelDoc, pkgDoc } from '../catalog/docs.js';

const VERSIONS = ['1.0.0', '1.1.0', '1.2.0', '2.0.0', '2.1.0'];
const nameOf = (v: string) => `app.v${v}`;

function catalogWith(entries: ChannelEntry[]): DeclarativeConfig {
  const cfg = emptyConfig();
  cfg.packages.push(pkgDoc('app', 'stable'));
  cfg.channels.push(channelDoc('app', 'stable', entries));
  for (const e of entries) cfg.bundles.push(bundleDoc('app', e.name.slice('app.v'.length)));
  return cfg;
}

function readings(entries: ChannelEntry[]) {
  const cfg = catalogWith(entries);
  const graphErrors = validateCatalog(cfg).errors.filter((e) => e.field === 'entries');
  const index = indexCatalog({ name: 'c', namespace: 'ns', priority: 0, config: cfg });
  const resolverChannel = index.packages.get('app')!.channels.get('stable')!;
  const offered = index.channelEntries
    .get('app')!
    .get('stable')!
    .map((e) => e.bundle.name);
  return { valid: graphErrors.length === 0, usable: resolverChannel.problem === null, offered };
}

const e = (v: string, replaces?: string, skips?: string[]): ChannelEntry => ({
  name: nameOf(v),
  ...(replaces ? { replaces: nameOf(replaces) } : {}),
  ...(skips ? { skips: skips.map(nameOf) } : {}),
});

describe('validation and the resolver agree on channel graphs', () => {
  it.each<[string, ChannelEntry[], { valid: boolean; usable: boolean; offered: string[] }]>([
    [
      'a chain with a skipped entry',
      [e('1.0.0'), e('1.1.0', '1.0.0'), e('1.2.0', '1.0.0', ['1.1.0'])],
      { valid: true, usable: true, offered: [nameOf('1.2.0'), nameOf('1.0.0')] },
    ],
    // opm stops the chain at the skipped 1.1.0, so 1.0.0 is stranded: validation refuses the
    // channel, and the resolver does not offer 1.0.0 (it used to, walking on past 1.1.0).
    [
      'behind a skipped replaces edge',
      [e('1.0.0'), e('1.1.0', '1.0.0'), e('1.2.0', '1.1.0', ['1.1.0'])],
      { valid: false, usable: true, offered: [nameOf('1.2.0')] },
    ],
    // An entry that skips itself is no head (opm counts the edge; the resolver used to ignore it
    // and offer the entry).
    [
      'an entry that skips itself',
      [e('1.0.0', undefined, ['1.0.0'])],
      { valid: false, usable: false, offered: [] },
    ],
    ['an entry that replaces itself', [e('1.0.0', '1.0.0')], { valid: false, usable: false, offered: [] }],
    [
      'a replaces cycle below the head',
      [e('2.0.0', '1.0.0'), e('1.0.0', '1.1.0'), e('1.1.0', '1.0.0')],
      { valid: false, usable: false, offered: [] },
    ],
  ])('%s', (_, entries, want) => {
    expect(readings(entries)).toEqual(want);
  });

  const entriesArb = fc.subarray(VERSIONS, { minLength: 1 }).chain((names) =>
    fc
      .tuple(
        ...names.map(() =>
          fc.record({
            replaces: fc.option(fc.constantFrom(...VERSIONS, '0.1.0'), { nil: undefined }),
            skips: fc.subarray([...VERSIONS, '0.1.0'], { maxLength: 2 }),
          }),
        ),
      )
      .map((edges) => names.map((v, i) => e(v, edges[i]!.replaces, edges[i]!.skips))),
  );

  it('holds for generated channels', () => {
    fc.assert(
      fc.property(entriesArb, (entries) => {
        const r = readings(entries);
        const g = channelGraph(entries);
        expect(r.usable).toBe(g.head !== null && g.chainCycle === null);
        if (r.valid) expect(r.usable).toBe(true);
        expect(r.offered).toEqual(r.usable ? g.order : []);
      }),
      runs(500),
    );
  });
});
