/**
 * Structural checks of a CRD's OpenAPI v3 schema that the API server would otherwise make at
 * install time. The common authoring mistake it catches is a mis-indented property: `color:`
 * nested under `size:` reads as an unknown keyword of `size`'s schema, which server-side apply
 * rejects ("field not declared in schema") and a plain create silently drops.
 */
import { isRecord } from '../util/record.js';

/** The keywords of Kubernetes' JSONSchemaProps (apiextensions.k8s.io/v1). */
const keywords = new Set([
  'id',
  '$schema',
  '$ref',
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'patternProperties',
  'dependencies',
  'additionalItems',
  'definitions',
  'externalDocs',
  'example',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

export interface SchemaKeywordProblem {
  /** Dotted path of the offending key, relative to the caller's `at`. */
  field: string;
  key: string;
}

/** Every key in `schema` (and the schemas nested in it) that is not a JSON-schema keyword. */
export function unknownSchemaKeywords(schema: unknown, at: string): SchemaKeywordProblem[] {
  const out: SchemaKeywordProblem[] = [];
  const walk = (node: unknown, path: string) => {
    if (!isRecord(node)) return;
    for (const [key, value] of Object.entries(node)) {
      const here = `${path}.${key}`;
      if (!keywords.has(key)) {
        out.push({ field: here, key });
        continue;
      }
      switch (key) {
        case 'properties':
        case 'patternProperties':
        case 'definitions':
        case 'dependencies':
          if (isRecord(value)) for (const [name, sub] of Object.entries(value)) walk(sub, `${here}.${name}`);
          break;
        case 'items':
          if (Array.isArray(value)) value.forEach((sub, i) => walk(sub, `${here}[${i}]`));
          else walk(value, here);
          break;
        case 'allOf':
        case 'oneOf':
        case 'anyOf':
          if (Array.isArray(value)) value.forEach((sub, i) => walk(sub, `${here}[${i}]`));
          break;
        case 'not':
        case 'additionalProperties':
        case 'additionalItems':
          walk(value, here);
          break;
      }
    }
  };
  walk(schema, at);
  return out;
}
