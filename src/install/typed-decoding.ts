/**
 * The zero values a typed decoding writes. OLM reads a ClusterServiceVersion into its Go types
 * before it creates it, and writes it back from them: a field the manifest lacks but whose Go
 * field has no `omitempty` comes back as its zero value (`""`, `0`, `false`, or a struct of
 * zero values). Those are exactly the fields OLM's CRD marks required (its generator makes a
 * field required unless it may be omitted), so a CSV that leaves out, say, the `name` of an
 * owned CRD's `resources[]` entry is accepted when OLM installs it, and would be refused if it
 * were sent as written. Bosun fills the same zero values from the live CRD schema, so the same
 * CSVs install, and says which fields it filled.
 *
 * Only strings, numbers, booleans and objects get a zero value: a Go slice or map without a value
 * is written as `null`, which the API server drops, so such a field stays missing (and refused),
 * as it does under OLM.
 */
import type { KindSchema, SchemaNode } from './prune.js';

export interface Filled<T> {
  /** The input with the zero values added (the input itself when nothing was missing). */
  value: T;
  /** Each field that was added, as a path from the value: `spec.owned[0].resources[0].name`. */
  fields: string[];
}

/** Adds the zero value of every required field `value` lacks, below a CRD's structural schema. */
export function fillRequiredZeroValues<T>(value: T, schema: KindSchema | undefined): Filled<T> {
  if (schema?.flavor !== 'structural' || schema.schema === undefined) return { value, fields: [] };
  const fields: string[] = [];
  const out = fill(value, schema.schema, '', fields);
  return { value: out as T, fields };
}

type JsonMap = Record<string, unknown>;
const isMap = (v: unknown): v is JsonMap => v !== null && typeof v === 'object' && !Array.isArray(v);

function fill(value: unknown, schema: SchemaNode, path: string, fields: string[]): unknown {
  if (Array.isArray(value)) {
    const items = Array.isArray(schema.items) ? undefined : schema.items;
    if (items === undefined) return value;
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const next = fill(v, items, `${path}[${i}]`, fields);
      if (next !== v) (out ??= [...value])[i] = next;
    });
    return out ?? value;
  }
  if (!isMap(value)) return value;
  let out: JsonMap | undefined;
  const props = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (Object.hasOwn(value, name) || !Object.hasOwn(props, name)) continue;
    const zero = zeroValue(props[name]!, join(path, name));
    if (zero === undefined) continue;
    (out ??= { ...value })[name] = zero;
    fields.push(join(path, name));
  }
  for (const [k, v] of Object.entries(value)) {
    const child = Object.hasOwn(props, k)
      ? props[k]
      : isMap(schema.additionalProperties)
        ? schema.additionalProperties
        : undefined;
    if (child === undefined) continue;
    const next = fill(v, child, join(path, k), fields);
    if (next !== v) (out ??= { ...value })[k] = next;
  }
  return out ?? value;
}

/** The zero value Go writes for a field of this schema, or undefined where it writes `null`. */
function zeroValue(schema: SchemaNode, path: string): unknown {
  const type = Array.isArray(schema.type) ? undefined : schema.type;
  if (schema['x-kubernetes-int-or-string'] === true) return undefined;
  switch (type) {
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'object':
      // A struct: its own fields without omitempty get their zero values too. A map (no
      // properties) is a nil map in Go, written as null.
      if (schema.properties === undefined) return undefined;
      return fill({}, schema, path, []);
    default:
      return undefined;
  }
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);
