import { describe, expect, it } from 'vitest';
import type { ChannelEntry } from '../../../src/apis/fbc.js';
import { canReach, channelHeads, checkChannelGraph } from '../../../src/catalog/graph.js';

const e = (name: string, replaces?: string, skips?: string[]): ChannelEntry => ({
  name,
  ...(replaces ? { replaces } : {}),
  ...(skips ? { skips } : {}),
});

describe('channel graph checks', () => {
  it.each<[string, ChannelEntry[], { heads: string[]; cycles: string[][]; stranded: string[] }]>([
    ['a replaces chain', [e('a'), e('b', 'a'), e('c', 'b')], { heads: ['c'], cycles: [], stranded: [] }],
    [
      'the tail may replace what is not in the channel',
      [e('b', 'a'), e('c', 'b')],
      { heads: ['c'], cycles: [], stranded: [] },
    ],
    [
      'a skipped entry off the chain is fine',
      [e('a'), e('b', 'a'), e('c', 'a', ['b'])],
      { heads: ['c'], cycles: [], stranded: [] },
    ],
    ['two heads', [e('a'), e('b', 'a'), e('x')], { heads: ['b', 'x'], cycles: [], stranded: [] }],
    [
      'no head in a full cycle',
      [e('a', 'b'), e('b', 'a')],
      { heads: [], cycles: [['a', 'b', 'a']], stranded: [] },
    ],
    [
      'a cycle below the head',
      [e('h', 'a'), e('a', 'b'), e('b', 'a')],
      { heads: ['h'], cycles: [['a', 'b', 'a']], stranded: [] },
    ],
    [
      'stranded behind a skipped entry',
      [e('a'), e('b'), e('c', 'a'), e('d', 'b', ['c'])],
      { heads: ['d'], cycles: [], stranded: ['a'] },
    ],
  ])('%s', (_, entries, want) => {
    expect(checkChannelGraph(entries)).toEqual(want);
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
