import { describe, expect, it } from 'vitest';
import { re2Problem } from '../../../../src/bundle/upgrade/re2.js';

describe('re2Problem', () => {
  it.each([
    '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
    '^(?i)\\d+\\s*[kmg]?b?$',
    '^[-+]?([0-9]*(\\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$',
    '^(?:[0-9]|)$',
    '.*?',
    'a{2}?',
    '[\\w-.]+',
    '^\\ *x\\ *$',
    '\\pL\\p{Greek}\\x{41}\\101',
    '\\Qa.b*\\E+',
    '(?P<name>x)(?<other>y)',
    '[]a]',
    'a{1000}',
  ])('accepts %s, which Go compiles', (pattern) => {
    expect(re2Problem(pattern)).toBeUndefined();
  });

  it.each([
    ['^(?!kube-).*$', /lookaround/],
    ['(?<=a)b', /lookaround/],
    ['(a)\\1', /backreference/],
    ['\\Z', /not an escape RE2 knows/],
    ['\\u0041', /not an escape RE2 knows/],
    ['(?>a)', /atomic groups/],
    ['a**', /nested repetition/],
    ['a++', /nested repetition/],
    ['a{2}{3}', /nested repetition/],
    ['a{1001}', /more than 1000/],
    ['[a-z', /not closed/],
    ['abc\\', /lone backslash/],
  ])('refuses %s', (pattern, why) => {
    expect(re2Problem(pattern)).toMatch(why);
  });
});
