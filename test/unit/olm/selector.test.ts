import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../../../src/apis/meta.js';
import { matchesSelector } from '../../../src/olm/selector.js';

describe('matchesSelector', () => {
  const labels = { team: 'a', tier: 'prod' };
  const cases: { name: string; selector: LabelSelector; expected: boolean }[] = [
    { name: 'an empty selector matches everything', selector: {}, expected: true },
    { name: 'matchLabels that agree match', selector: { matchLabels: { team: 'a' } }, expected: true },
    { name: 'matchLabels that differ do not', selector: { matchLabels: { team: 'b' } }, expected: false },
    {
      name: 'In a listed value matches',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['dev', 'prod'] }] },
      expected: true,
    },
    {
      name: 'In without the label does not match',
      selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['x'] }] },
      expected: false,
    },
    {
      name: 'NotIn without the label matches',
      selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['x'] }] },
      expected: true,
    },
    {
      name: 'NotIn a listed value does not match',
      selector: { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] },
      expected: false,
    },
    {
      name: 'Exists matches a present label',
      selector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] },
      expected: true,
    },
    {
      name: 'DoesNotExist does not match a present label',
      selector: { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] },
      expected: false,
    },
    {
      name: 'labels and expressions must all hold',
      selector: {
        matchLabels: { team: 'a' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['dev'] }],
      },
      expected: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(matchesSelector(c.selector, labels)).toBe(c.expected);
    });
  }

  it('treats missing labels as no labels', () => {
    expect(
      matchesSelector({ matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, undefined),
    ).toBe(true);
  });
});
