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
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { writeFileAtomic } from '../../util/fs.js';
import type { Problem } from '../../util/result.js';
import type { JSONSchemaProps, Schema } from './schema.js';

// A default is written into the generated code as a literal, so documents never share a list.
// ajv's optimizing pass costs more than it saves here: on the CSV schema (a whole DeploymentSpec,
// 1.3 MB of generated code) it takes compiling from 0.25 s to 1.3 s, and checking the corpus's
// 1008 CSVs is no faster for it (35 ms without, 51 ms with).
// The generated source is kept so that `npm run build` can write it out (writeCompiled).
const options = {
  allErrors: true,
  strict: false,
  useDefaults: true,
  validateFormats: false,
  code: { optimize: false, source: true },
} as const;
const ajv = new Ajv(options);

/**
 * Checkers compiled ahead of time by `npm run build`, next to the compiled module in dist/ (under
 * the TypeScript sources there are none, and each schema is compiled when first used). Compiling
 * the CSV schema takes close to half a second, which every `bosun` command reading a bundle paid
 * before anything else; loading its compiled code takes a few milliseconds. Each file is named by
 * a digest of ajv's version, its options and the schema, so a changed schema is never checked by
 * stale code: it is compiled instead.
 */
const compiledDir = fileURLToPath(new URL('./compiled/', import.meta.url));
const requireHere = createRequire(import.meta.url);
// Read when a checker is first made, not when this module loads.
let ajvVersion: string | undefined;

/** What this process compiled itself, by digest: what `writeCompiled` writes. */
const compiledHere = new Map<string, ValidateFunction>();

function digest(json: object): string {
  ajvVersion ??= (
    JSON.parse(readFileSync(requireHere.resolve('ajv/package.json'), 'utf8')) as { version: string }
  ).version;
  return createHash('sha256')
    .update(JSON.stringify([ajvVersion, options, json]))
    .digest('hex')
    .slice(0, 32);
}

function compile<T>(json: object): ValidateFunction<T> {
  const key = digest(json);
  const file = join(compiledDir, `${key}.cjs`);
  if (existsSync(file)) return requireHere(file) as ValidateFunction<T>;
  const checker = ajv.compile<T>(json);
  compiledHere.set(key, checker);
  return checker;
}

/**
 * Writes the code of every checker this process compiled to `dir`, one CommonJS module each;
 * returns each file with the checker it holds.
 */
export async function writeCompiled(dir: string): Promise<{ file: string; checker: ValidateFunction }[]> {
  await mkdir(dir, { recursive: true });
  const written: { file: string; checker: ValidateFunction }[] = [];
  for (const [key, checker] of compiledHere) {
    const file = join(dir, `${key}.cjs`);
    await writeFileAtomic(file, standaloneCode.default(ajv, checker));
    written.push({ file, checker });
  }
  return written;
}

/**
 * A type guard for `schema`, filling in the defaults it declares; `errors` says what failed.
 */
export function compileSchema<T>(schema: Schema<T>): ValidateFunction<T> {
  return compile<T>(schema.json);
}

/**
 * A type guard for `schema` that leaves the value as it is: the schema's defaults are the API
 * server's to fill in, not the reader's.
 */
export function compileChecker<T>(schema: JSONSchemaProps): ValidateFunction<T> {
  return compile<T>(withoutDefaults(schema) as object);
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
