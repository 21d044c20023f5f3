import { describe, expect, it } from 'vitest';
import { compareVersions, parseRange, parseVersion } from '../../../src/catalog/version.js';

describe('parseVersion accepts strict semver only, as OLM does', () => {
  it.each([
    ['1.2.3', true],
    ['0.0.1', true],
    ['1.2.3-rc.1', true],
    ['1.2.3-0.15.2-1', true],
    ['1.2.1-up.3', true],
    ['1.0.0+build.5', true],
    ['v1.2.3', false],
    ['=1.2.3', false],
    ['1.2', false],
    ['1', false],
    ['01.2.3', false],
    ['1.2.3-01', false],
    [' 1.2.3', false],
    ['', false],
    ['1.2.3.4', false],
  ])('%s → %s', (input, valid) => {
    expect(parseVersion(input) !== undefined).toBe(valid);
  });
});

describe('compareVersions orders by semver precedence', () => {
  it.each([
    ['1.0.0-alpha', '1.0.0-beta', -1],
    ['1.0.0-beta', '1.0.0', -1],
    ['1.0.0', '1.0.0+build', 0],
    ['1.10.0', '1.9.0', 1],
    ['2.0.0', '10.0.0', -1],
  ])('%s vs %s → %d', (a, b, want) => {
    expect(Math.sign(compareVersions(a, b))).toBe(want);
  });
});

describe('parseRange reads skipRange syntax as blang/semver does', () => {
  it.each([
    ['>=1.0.0 <1.2.0', ['1.0.0', '1.1.9', '1.2.0-rc.1'], ['0.9.9', '1.2.0']],
    ['<0.1.4', ['0.1.3', '0.0.1'], ['0.1.4', '1.0.0']],
    ['>= 0.6.0 < 1.1.0', ['0.6.0', '1.0.0'], ['1.1.0']],
    ['1.x', ['1.0.0', '1.99.3'], ['2.0.0', '0.9.0']],
    ['>=1.2.x', ['1.2.0', '5.0.0'], ['1.1.9']],
    ['<=1.2.x', ['1.2.9'], ['1.3.0']],
    ['1.0.0 || >=2.0.0 <2.1.0', ['1.0.0', '2.0.5'], ['1.0.1', '2.1.0']],
    ['!=1.0.0', ['1.0.1', '0.9.0'], ['1.0.0']],
    ['=1.0.0', ['1.0.0'], ['1.0.1']],
    ['==1.0.0', ['1.0.0'], ['1.0.1']],
  ])('%s', (source, inside, outside) => {
    const r = parseRange(source);
    if (!r.ok) throw new Error(r.message);
    for (const v of inside) expect(r.range.test(v), `${v} in ${source}`).toBe(true);
    for (const v of outside) expect(r.range.test(v), `${v} not in ${source}`).toBe(false);
  });

  it.each(['', '>=1.0', 'latest', '>=1.0.0 <', '>=1.0.0 ||', '^1.2.3', '~1.2.3', '!=1.x'])(
    'refuses %j',
    (source) => {
      expect(parseRange(source).ok).toBe(false);
    },
  );
});
