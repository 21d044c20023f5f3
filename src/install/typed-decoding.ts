/**
 * What a typed decoding makes of a manifest. OLM reads a ClusterServiceVersion into its Go types
 * before it creates it, and writes it back from them. Two things change on the way:
 * - a field set to `null` is read as its zero value, which is then left out (`omitempty`) or
 *   written as that zero value: either way the `null` is gone, where the API server would refuse
 *   it (`args: null` is not an array);
 * - a field the manifest lacks but whose Go field has no `omitempty` comes back as its zero value
 *   (`""`, `0`, `false`, or a struct of zero values). Those are exactly the fields OLM's CRD marks required (its generator makes a
 * field required unless it may be omitted), so a CSV that leaves out, say, the `name` of an
 * owned CRD's `resources[]` entry is accepted when OLM installs it, and would be refused if it
 * were sent as written. Bosun does the same from the live CRD schema, so the same CSVs install,
 * and says which fields it changed.
 *
 * Only strings, numbers, booleans and objects get a zero value: a Go slice or map without a value
 * is written as `null`, which the API server drops, so such a field stays missing (and refused),
 * as it does under OLM.
 */
import type { KindSchema, SchemaNode } from './prune.js';

export interface Decoded<T> {
  /** The input as the typed decoding leaves it (the input itself when nothing changed). */
  value: T;
  /** Each field that was missing and given its zero value: `spec.owned[0].resources[0].name`. */
  filled: string[];
  /** Each field whose `null` was dropped. */
  nulls: string[];
}

/**
 * Drops the `null` of every field whose schema is not nullable, then adds the zero value of every
 * required field `value` lacks, below a CRD's structural schema.
 */
export function decodeAsTyped<T>(value: T, schema: KindSchema | undefined): Decoded<T> {
  if (schema?.flavor !== 'structural' || schema.schema === undefined) return { value, filled: [], nulls: [] };
  const walk: Walk = { filled: [], nulls: [] };
  const out = fill(value, schema.schema, '', walk);
  return { value: out as T, ...walk };
}

interface Walk {
  filled: string[];
  nulls: string[];
}

type JsonMap = Record<string, unknown>;
const isMap = (v: unknown): v is JsonMap => v !== null && typeof v === 'object' && !Array.isArray(v);

function fill(value: unknown, schema: SchemaNode, path: string, walk: Walk): unknown {
  if (Array.isArray(value)) {
    const items = Array.isArray(schema.items) ? undefined : schema.items;
    if (items === undefined) return value;
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const next = fill(v, items, `${path}[${i}]`, walk);
      if (next !== v) (out ??= [...value])[i] = next;
    });
    return out ?? value;
  }
  if (!isMap(value)) return value;
  let out: JsonMap | undefined;
  const props = schema.properties ?? {};
  const childSchema = (k: string) =>
    Object.hasOwn(props, k)
      ? props[k]
      : isMap(schema.additionalProperties)
        ? schema.additionalProperties
        : undefined;
  for (const [k, v] of Object.entries(value)) {
    const child = childSchema(k);
    if (child === undefined) continue;
    if (v === null) {
      if (child.nullable === true) continue;
      if (out === undefined) out = { ...value };
      // A map keeps the key with the zero value; a struct field drops it (or its zero value is
      // filled below, when required).
      const zero = Object.hasOwn(props, k) ? undefined : zeroValue(child, join(path, k));
      if (zero === undefined) delete out[k];
      else out[k] = zero;
      walk.nulls.push(join(path, k));
      continue;
    }
    const next = fill(v, child, join(path, k), walk);
    if (next !== v) (out ??= { ...value })[k] = next;
  }
  const present = out ?? value;
  for (const name of schema.required ?? []) {
    if (Object.hasOwn(present, name) || !Object.hasOwn(props, name)) continue;
    const zero = zeroValue(props[name]!, join(path, name));
    if (zero === undefined) continue;
    (out ??= { ...value })[name] = zero;
    walk.filled.push(join(path, name));
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
      return fill({}, schema, path, { filled: [], nulls: [] });
    default:
      return undefined;
  }
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);
