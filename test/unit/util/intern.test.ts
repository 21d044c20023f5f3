import { describe, expect, it } from 'vitest';
import { internStrings } from '../../../src/util/intern.js';

describe('internStrings', () => {
  it('keeps the data equal and gives equal long strings one instance', () => {
    const long = (c: string) => c.repeat(100);
    const a = { description: long('a'), list: [long('b'), 'short', 1, null, { deep: long('a') }] };
    const b = structuredClone(a);
    const table = new Map<string, string>();
    const expected = structuredClone([a, b]);
    const out = [internStrings(a, table), internStrings(b, table)];
    expect(out).toEqual(expected);
    expect(table.size).toBe(2);
    expect([...table.keys()].sort()).toEqual([long('a'), long('b')]);
  });
});
