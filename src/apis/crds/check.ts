/**
 * Checking values against the schemas of the CRD schema builder, where documents are read: one
 * ajv instance for the whole project (catalog documents, CSVs), each schema compiled once, every
 * failure turned into a problem naming file, object and field.
 *
 * ajv is the most used JSON Schema validator for JavaScript: it compiles a schema to a function,
 * which keeps checking a whole corpus to milliseconds, and reports every failure with a JSON
 * pointer, from which messages name the field. Kubernetes' own keywords (`x-kubernetes-*`,
 * `int32` and `byte` formats) are not JSON Schema's and are ignored (`strict: false`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Problem } from '../../util/result.js';
import type { JSONSchemaProps, Schema } from './schema.js';

// A default is written into the generated code as a literal, so documents never share a list.
// ajv's optimizing pass costs more than it saves here: on the CSV schema (a whole DeploymentSpec,
// 1.3 MB of generated code) it takes compiling from 0.25 s to 1.3 s, and checking the corpus's
// 1008 CSVs is no faster for it (35 ms without, 51 ms with).
const ajv = new Ajv({
  allErrors: true,
  strict: false,
  useDefaults: true,
  validateFormats: false,
  code: { optimize: false },
});

/**
 * A type guard for `schema`, filling in the defaults it declares; `errors` says what failed.
 */
export function compileSchema<T>(schema: Schema<T>): ValidateFunction<T> {
  return ajv.compile<T>(schema.json);
}

/**
 * A type guard for `schema` that leaves the value as it is: the schema's defaults are the API
 * server's to fill in, not the reader's.
 */
export function compileChecker<T>(schema: JSONSchemaProps): ValidateFunction<T> {
  return ajv.compile<T>(withoutDefaults(schema) as object);
}

function withoutDefaults(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDefaults);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    // `default` is a keyword only in a schema, never the name of a property it lists.
    if (k === 'properties')
      out[k] = Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, withoutDefaults(s)]));
    else if (k !== 'default') out[k] = withoutDefaults(v);
  }
  return out;
}

/** `/entries/3/name` → `entries[3].name`. */
export function fieldOf(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  array: 'a list',
  object: 'a map',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
};

/** A checker's failures as problems of `object` in `file`, one per field. */
export function schemaProblems(errors: readonly ErrorObject[], file: string, object: string): Problem[] {
  const out: Problem[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let field = fieldOf(e.instancePath);
    let message: string;
    switch (e.keyword) {
      case 'if':
        continue; // the failures of its `then` are reported themselves
      case 'required': {
        const missing = String((e.params as { missingProperty: string }).missingProperty);
        field = field === '' ? missing : `${field}.${missing}`;
        message = 'is required';
        break;
      }
      case 'type': {
        const type = String((e.params as { type: string }).type);
        message = `must be ${TYPE_NAMES[type] ?? type}`;
        break;
      }
      case 'enum':
        message = `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
        break;
      default:
        message = e.message ?? `fails ${e.keyword}`;
    }
    const key = `${field}\n${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ file, object, ...(field ? { field } : {}), message });
  }
  return out;
}
