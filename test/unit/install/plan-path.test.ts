import { describe, expect, it } from 'vitest';
import type { ChannelEntry } from '../../../src/apis/fbc.js';
import { channelPath, describeHop, edgeFrom, upgradePath } from '../../../src/install/plan-path.js';

/** `op.v1.2.0` → `1.2.0`. */
const versionOf = (name: string) => name.replace(/^op\.v/, '');

describe('channelPath', () => {
  const cases: {
    name: string;
    entries: ChannelEntry[];
    from: string;
    to: string;
    hops: { from: string; to: string; via: string; skipRange?: string }[] | undefined;
  }[] = [
    {
      name: 'one replaces edge',
      entries: [{ name: 'op.v1.0.0' }, { name: 'op.v1.1.0', replaces: 'op.v1.0.0' }],
      from: 'op.v1.0.0',
      to: 'op.v1.1.0',
      hops: [{ from: 'op.v1.0.0', to: 'op.v1.1.0', via: 'replaces' }],
    },
    {
      name: 'a multi-step replaces chain, hop by hop',
      entries: [
        { name: 'op.v1.0.0' },
        { name: 'op.v1.1.0', replaces: 'op.v1.0.0' },
        { name: 'op.v1.2.0', replaces: 'op.v1.1.0' },
        { name: 'op.v1.3.0', replaces: 'op.v1.2.0' },
      ],
      from: 'op.v1.0.0',
      to: 'op.v1.3.0',
      hops: [
        { from: 'op.v1.0.0', to: 'op.v1.1.0', via: 'replaces' },
        { from: 'op.v1.1.0', to: 'op.v1.2.0', via: 'replaces' },
        { from: 'op.v1.2.0', to: 'op.v1.3.0', via: 'replaces' },
      ],
    },
    {
      name: 'a skipRange jumps over the chain in one hop',
      entries: [
        { name: 'op.v1.0.0' },
        { name: 'op.v1.1.0', replaces: 'op.v1.0.0' },
        { name: 'op.v1.2.0', replaces: 'op.v1.1.0', skipRange: '>=1.0.0 <1.2.0' },
      ],
      from: 'op.v1.0.0',
      to: 'op.v1.2.0',
      hops: [{ from: 'op.v1.0.0', to: 'op.v1.2.0', via: 'skipRange', skipRange: '>=1.0.0 <1.2.0' }],
    },
    {
      name: 'skips name the version skipped',
      entries: [{ name: 'op.v1.0.0' }, { name: 'op.v1.0.1', replaces: 'op.v0.9.0', skips: ['op.v1.0.0'] }],
      from: 'op.v1.0.0',
      to: 'op.v1.0.1',
      hops: [{ from: 'op.v1.0.0', to: 'op.v1.0.1', via: 'skips' }],
    },
    {
      name: 'replaces is named before skipRange when both lead there',
      entries: [{ name: 'op.v1.0.0' }, { name: 'op.v1.1.0', replaces: 'op.v1.0.0', skipRange: '<1.1.0' }],
      from: 'op.v1.0.0',
      to: 'op.v1.1.0',
      hops: [{ from: 'op.v1.0.0', to: 'op.v1.1.0', via: 'replaces' }],
    },
    {
      name: 'the installed version need not be an entry any more',
      entries: [{ name: 'op.v2.0.0', skipRange: '>=1.0.0 <2.0.0' }],
      from: 'op.v1.5.0',
      to: 'op.v2.0.0',
      hops: [{ from: 'op.v1.5.0', to: 'op.v2.0.0', via: 'skipRange', skipRange: '>=1.0.0 <2.0.0' }],
    },
    {
      name: 'a version outside the skipRange is not reached',
      entries: [{ name: 'op.v2.0.0', skipRange: '>=1.0.0 <2.0.0' }],
      from: 'op.v0.9.0',
      to: 'op.v2.0.0',
      hops: undefined,
    },
    {
      name: 'no way backwards',
      entries: [{ name: 'op.v1.0.0' }, { name: 'op.v1.1.0', replaces: 'op.v1.0.0' }],
      from: 'op.v1.1.0',
      to: 'op.v1.0.0',
      hops: undefined,
    },
    {
      name: 'a replaces cycle ends the search',
      entries: [
        { name: 'op.v1.0.0', replaces: 'op.v1.1.0' },
        { name: 'op.v1.1.0', replaces: 'op.v1.0.0' },
      ],
      from: 'op.v1.0.0',
      to: 'op.v3.0.0',
      hops: undefined,
    },
  ];
  it.each(cases)('$name', ({ entries, from, to, hops }) => {
    expect(channelPath(entries, from, to, versionOf)).toEqual(hops);
  });
});

describe('edgeFrom', () => {
  it('a skipRange that does not parse is no edge', () => {
    expect(edgeFrom({ name: 'op.v2.0.0', skipRange: '^1.0.0' }, 'op.v1.0.0', '1.0.0')).toBeUndefined();
  });
  it('a skipRange needs the version it tests', () => {
    expect(edgeFrom({ name: 'op.v2.0.0', skipRange: '<2.0.0' }, 'op.v1.0.0', undefined)).toBeUndefined();
  });
});

describe('upgradePath', () => {
  it('takes the channel with the shortest path, the earlier one on a tie', () => {
    const chain: ChannelEntry[] = [
      { name: 'op.v1.0.0' },
      { name: 'op.v1.1.0', replaces: 'op.v1.0.0' },
      { name: 'op.v1.2.0', replaces: 'op.v1.1.0' },
    ];
    const jump: ChannelEntry[] = [{ name: 'op.v1.0.0' }, { name: 'op.v1.2.0', skipRange: '<1.2.0' }];
    const path = upgradePath({
      channels: [
        { name: 'stable', entries: chain },
        { name: 'fast', entries: jump },
        { name: 'faster', entries: jump },
      ],
      from: 'op.v1.0.0',
      to: 'op.v1.2.0',
      versionOf,
    });
    expect(path).toEqual({
      channel: 'fast',
      hops: [{ from: 'op.v1.0.0', to: 'op.v1.2.0', via: 'skipRange', skipRange: '<1.2.0' }],
    });
  });

  it('none when no channel leads there', () => {
    expect(
      upgradePath({
        channels: [{ name: 'stable', entries: [{ name: 'op.v2.0.0' }] }],
        from: 'op.v1.0.0',
        to: 'op.v2.0.0',
        versionOf,
      }),
    ).toBeUndefined();
  });
});

describe('describeHop', () => {
  it('names the edge, and the range of a skipRange', () => {
    expect(describeHop({ from: 'a.v1', to: 'a.v2', via: 'replaces' })).toBe('a.v1 -> a.v2 (replaces)');
    expect(describeHop({ from: 'a.v1', to: 'a.v3', via: 'skipRange', skipRange: '>=1.0.0 <3.0.0' })).toBe(
      'a.v1 -> a.v3 (skipRange >=1.0.0 <3.0.0)',
    );
  });
});
