import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generatedName, shortHash, stableStringify } from '../../../src/install/index.js';

/** The same object with its keys inserted in reverse order, at every level. */
function reversedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, reversedKeys(x)]),
    );
  }
  return v;
}

describe('stableStringify', () => {
  it('serialises equal objects the same whatever order their keys were inserted in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(stableStringify(reversedKeys(v))).toBe(stableStringify(v));
      }),
    );
  });

  it('reads back to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(stableStringify(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it('keeps a key named __proto__ as a key', () => {
    const v = JSON.parse('{"a":{"__proto__":"x","b":1}}') as unknown;
    expect(stableStringify(v)).toBe('{"a":{"__proto__":"x","b":1}}');
  });

  it('leaves out undefined fields as JSON does', () => {
    expect(stableStringify({ b: 1, a: undefined, c: [undefined] })).toBe('{"b":1,"c":[null]}');
  });
});

describe('generatedName', () => {
  it('is at most 63 characters, ends in the hash of its identity, and is deterministic', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,120}$/), fc.jsonValue(), (base, identity) => {
        const name = generatedName(base, identity);
        expect(name.length).toBeLessThanOrEqual(63);
        expect(name).toBe(generatedName(base, identity));
        expect(name.endsWith(`-${shortHash(identity)}`)).toBe(true);
      }),
    );
  });

  it('keeps a short base whole', () => {
    expect(generatedName('etcd.v0.9.4-etcd-operator', ['x'])).toBe(
      `etcd.v0.9.4-etcd-operator-${shortHash(['x'])}`,
    );
  });

  it('cuts a long base without leaving a dangling separator', () => {
    const name = generatedName(`${'a'.repeat(51)}.-b`, 1);
    expect(name).toBe(`${'a'.repeat(51)}-${shortHash(1)}`);
  });
});
