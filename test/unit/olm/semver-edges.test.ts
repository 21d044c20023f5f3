import { describe, expect, it } from 'vitest';
import { semverChannelEdges } from '../../../src/olm/semver-edges.js';
import { parseVersion } from '../../../src/olm/version.js';

const m = (v: string) => ({ name: `a.v${v}`, version: parseVersion(v)! });

describe('the semver template’s edges', () => {
  it('each Y-stream’s Z max skips its group and replaces (and skips) the previous Z max', () => {
    expect(semverChannelEdges(['1.1.0', '1.0.1', '1.0.0', '2.0.0', '1.1.1'].map(m))).toEqual([
      { name: 'a.v1.0.0' },
      { name: 'a.v1.0.1', skips: ['a.v1.0.0'] },
      { name: 'a.v1.1.0' },
      { name: 'a.v1.1.1', replaces: 'a.v1.0.1', skips: ['a.v1.0.1', 'a.v1.1.0'] },
      { name: 'a.v2.0.0', replaces: 'a.v1.1.1', skips: ['a.v1.1.1'] },
    ]);
  });

  it('avoidSkipPatch links every entry to the one before it', () => {
    expect(semverChannelEdges(['1.0.1', '1.0.0', '1.1.0'].map(m), true)).toEqual([
      { name: 'a.v1.0.0' },
      { name: 'a.v1.0.1', replaces: 'a.v1.0.0' },
      { name: 'a.v1.1.0', replaces: 'a.v1.0.1' },
    ]);
  });
});
