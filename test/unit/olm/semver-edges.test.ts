import { describe, expect, it } from 'vitest';
import { newestEntryEdges, semverTemplateEdges } from '../../../src/olm/semver-edges.js';
import { parseVersion } from '../../../src/olm/version.js';

const m = (v: string) => ({ name: `a.v${v}`, version: parseVersion(v)! });

describe('the semver template’s edges (opm v1.73)', () => {
  it('each Y-stream’s newest replaces the previous one’s and skips the rest of its major', () => {
    expect(semverTemplateEdges(['1.1.0', '1.0.1', '1.0.0', '2.0.0', '1.1.1', '2.0.1'].map(m))).toEqual(
      new Map([
        ['a.v1.0.1', { skips: ['a.v1.0.0'] }],
        ['a.v1.1.1', { replaces: 'a.v1.0.1', skips: ['a.v1.0.0', 'a.v1.1.0'] }],
        // A new major starts afresh: nothing links 2.0.0 to 1.x.
        ['a.v2.0.1', { skips: ['a.v2.0.0'] }],
      ]),
    );
  });

  it('a lone bundle, or a lone first Y-stream, has no edges', () => {
    expect(semverTemplateEdges([m('1.0.0')])).toEqual(new Map());
    expect(semverTemplateEdges([m('1.0.0'), m('1.1.0')])).toEqual(
      new Map([['a.v1.1.0', { replaces: 'a.v1.0.0' }]]),
    );
  });
});

describe('newestEntryEdges', () => {
  it('replaces the previous Y-stream’s newest and skips its own Y-stream', () => {
    expect(newestEntryEdges(['1.0.0', '1.0.1', '1.1.0'].map(m), m('1.1.1'))).toEqual({
      replaces: 'a.v1.0.1',
      skips: ['a.v1.1.0'],
    });
    expect(newestEntryEdges([], m('1.0.0'))).toEqual({});
  });
});
