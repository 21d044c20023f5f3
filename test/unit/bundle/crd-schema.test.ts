import { describe, expect, it } from 'vitest';
import { unknownSchemaKeywords } from '../../../src/bundle/crd-schema.js';

describe('unknownSchemaKeywords', () => {
  it('accepts a schema that uses only JSON-schema keywords, at every depth', () => {
    const schema = {
      type: 'object',
      required: ['spec'],
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [{ rule: 'self.size > 0' }],
          properties: {
            size: { type: 'integer', minimum: 0 },
            tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
          },
          oneOf: [{ required: ['size'] }, { required: ['tags'] }],
        },
      },
    };
    expect(unknownSchemaKeywords(schema, 's')).toEqual([]);
  });

  it.each([
    [{ properties: { size: { type: 'integer', color: { type: 'string' } } } }, 's.properties.size.color'],
    [{ items: { type: 'string', colour: 1 } }, 's.items.colour'],
    [{ items: [{ type: 'string' }, { typ: 'string' }] }, 's.items[1].typ'],
    [{ additionalProperties: { type: 'string', maxlength: 3 } }, 's.additionalProperties.maxlength'],
    [{ anyOf: [{ type: 'string' }, { descripton: 'x' }] }, 's.anyOf[1].descripton'],
    [{ not: { requird: ['a'] } }, 's.not.requird'],
  ])('names the unknown keyword in %j', (schema, field) => {
    expect(unknownSchemaKeywords(schema, 's').map((p) => p.field)).toEqual([field]);
  });

  it('treats property names as names, not keywords', () => {
    expect(
      unknownSchemaKeywords({ properties: { color: { type: 'string' }, items: { type: 'string' } } }, 's'),
    ).toEqual([]);
  });
});
