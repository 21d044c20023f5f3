import { describe, expect, it } from 'vitest';
import type { ChannelEntry } from '../../../src/apis/fbc.js';
import {
  canReach,
  channelGraph,
  channelGraphProblems,
  channelHeads,
  replacesCycles,
} from '../../../src/olm/channel-graph.js';

const e = (name: string, replaces?: string, skips?: string[]): ChannelEntry => ({
  name,
  ...(replaces ? { replaces } : {}),
  ...(skips ? { skips } : {}),
});

describe('the channel graph, with opm’s rules', () => {
  it.each<[string, ChannelEntry[], { heads: string[]; order: string[]; stranded: string[] }]>([
    [
      'a replaces chain',
      [e('a'), e('b', 'a'), e('c', 'b')],
      { heads: ['c'], order: ['c', 'b', 'a'], stranded: [] },
    ],
    [
      'the tail may replace what is not in the channel',
      [e('b', 'a'), e('c', 'b')],
      { heads: ['c'], order: ['c', 'b'], stranded: [] },
    ],
    [
      'a skipped entry off the chain is fine',
      [e('a'), e('b', 'a'), e('c', 'a', ['b'])],
      { heads: ['c'], order: ['c', 'a'], stranded: [] },
    ],
    ['two heads', [e('a'), e('b', 'a'), e('x')], { heads: ['b', 'x'], order: [], stranded: [] }],
    [
      'stranded behind a skipped entry',
      [e('a'), e('b'), e('c', 'a'), e('d', 'b', ['c'])],
      { heads: ['d'], order: ['d', 'b'], stranded: ['a'] },
    ],
    // opm stops walking the chain at a replaced entry that something skips: what lies behind it
    // is stranded unless skipped too (checked against operator-registry v1.73's model.Validate).
    [
      'the chain stops at a skipped entry',
      [e('a'), e('b', 'a'), e('c', 'b', ['b'])],
      { heads: ['c'], order: ['c'], stranded: ['a'] },
    ],
    [
      'behind a skipped entry, skipped entries are not stranded',
      [e('a'), e('b', 'a'), e('c', 'b', ['a', 'b'])],
      { heads: ['c'], order: ['c'], stranded: [] },
    ],
    [
      'a tail that skips itself is only skipped, as opm accepts',
      [e('a', undefined, ['a']), e('b', 'a')],
      { heads: ['b'], order: ['b'], stranded: [] },
    ],
    [
      'an entry skipping itself is no head',
      [e('a', undefined, ['a'])],
      { heads: [], order: [], stranded: [] },
    ],
    ['an entry replacing itself is no head', [e('a', 'a')], { heads: [], order: [], stranded: [] }],
  ])('%s', (_, entries, want) => {
    const g = channelGraph(entries);
    expect({ heads: g.heads, order: g.order, stranded: g.stranded }).toEqual(want);
  });

  it.each<[string, ChannelEntry[], string[]]>([
    ['a valid chain', [e('a'), e('b', 'a')], []],
    ['no entries', [], ['a channel needs at least one entry']],
    ['an entry that replaces itself', [e('a', 'a'), e('b', 'a')], ['replaces cycle: a -> a']],
    [
      'a lone entry that replaces itself',
      [e('a', 'a')],
      [
        'no channel head: every entry is replaced or skipped by another, so there is no latest version',
        'replaces cycle: a -> a',
      ],
    ],
    [
      'two heads',
      [e('a'), e('x')],
      ['multiple channel heads: a, x; exactly one entry may be left un-replaced and un-skipped'],
    ],
    ['a cycle below the head', [e('h', 'a'), e('a', 'b'), e('b', 'a')], ['replaces cycle: a -> b -> a']],
    [
      'stranded behind a skipped replaces edge',
      [e('a'), e('b', 'a'), e('c', 'b', ['b'])],
      ['stranded entries (not on the replaces chain from the head and not skipped): a'],
    ],
  ])('problems: %s', (_, entries, want) => {
    expect(channelGraphProblems(channelGraph(entries))).toEqual(want);
  });

  it('reports the cycle on the chain as opm does, from the repeated entry', () => {
    const g = channelGraph([e('h', 'a'), e('a', 'b'), e('b', 'a')]);
    expect(g.chainCycle).toEqual(['a', 'b', 'a']);
    expect(g.order).toEqual([]);
  });

  it('finds every replaces cycle once, from its smallest name', () => {
    const g = channelGraph([e('b', 'a'), e('a', 'b'), e('x', 'y'), e('y', 'x'), e('z')]);
    expect(replacesCycles(g.entries)).toEqual([
      ['a', 'b', 'a'],
      ['x', 'y', 'x'],
    ]);
  });

  it('heads ignore skipRange, as opm does', () => {
    expect(channelHeads([e('a'), { name: 'b', skipRange: '<1.0.0' }])).toEqual(['a', 'b']);
  });

  it('canReach follows replaces, skips and skipRange backwards from the target', () => {
    const entries = [e('a'), e('b', 'a'), { name: 'c', replaces: 'b', skipRange: '<2.0.0' }];
    const versions: Record<string, string> = {
      a: '1.0.0',
      b: '1.1.0',
      c: '2.0.0',
      old: '0.5.0',
      gone: '3.0.0',
    };
    const inRange = (_: ChannelEntry, cand: string) => (versions[cand] ?? '9.9.9') < '2.0.0';
    const universe = [...entries, { name: 'old' }, { name: 'gone' }];
    expect([...canReach(universe, 'c', inRange)].sort()).toEqual(['a', 'b', 'c', 'old']);
  });
});
