/**
 * What the schema builder (src/apis/crds/schema.ts, definition.ts) writes for the keywords OLM v1's
 * CRDs need: CEL rules on an object (a union whose discriminator names the member that must be
 * set, "at least one of"), a list's maximum length, and a resource whose metadata is not listed as
 * required. The parity tests then compare the whole CRDs with OLM v1's.
 */
import { describe, expect, it } from 'vitest';
import { resourceSchema } from '../../../src/apis/crds/definition.js';
import { array, object, oneOf, required, string } from '../../../src/apis/crds/schema.js';

interface Union {
  type: 'A';
  a?: string;
}

const unionRule = { rule: "self.type == 'A' ? has(self.a) : !has(self.a)", message: 'a iff type A' };

describe('schema builder: keywords for OLM v1', () => {
  it('an object carries its CEL rules, in order, beside its fields', () => {
    const second = { rule: 'true', message: 'second' };
    const s = object<Union>({ type: required(oneOf(['A'])), a: string() }, { rules: [unionRule, second] });
    expect(s.json).toEqual({
      type: 'object',
      required: ['type'],
      properties: { a: { type: 'string' }, type: { type: 'string', enum: ['A'] } },
      'x-kubernetes-validations': [unionRule, second],
    });
  });

  it('an object without rules has no x-kubernetes-validations at all', () => {
    expect(object<Union>({ type: required(oneOf(['A'])), a: string() }).json).not.toHaveProperty(
      'x-kubernetes-validations',
    );
  });

  it('a list may have a maximum length, and has none unless given', () => {
    expect(array(string(), { maxItems: 256 }).json).toEqual({
      type: 'array',
      items: { type: 'string' },
      maxItems: 256,
    });
    expect(array(string()).json).not.toHaveProperty('maxItems');
  });

  it('a resource lists metadata as required unless told not to, and then lists only what is', () => {
    type R = { spec?: Union; status?: Union };
    const spec = object<Union>({ type: required(oneOf(['A'])), a: string() });
    expect(resourceSchema<R>('r', { spec, status: spec }).json.required).toEqual(['metadata']);
    expect(
      resourceSchema<R>('r', { spec, status: spec }, { metadataRequired: false }).json,
    ).not.toHaveProperty('required');
    type S = { spec: Union; status?: Union };
    expect(
      resourceSchema<S>('s', { spec: required(spec), status: spec }, { metadataRequired: false }).json
        .required,
    ).toEqual(['spec']);
  });
});
