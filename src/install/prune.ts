/**
 * Pruning: removing the fields of an object that its kind's schema does not declare, as the API
 * server does when an object is created or updated. OLM creates a bundle's objects with
 * create/update, so the server silently drops what a schema does not know; Bosun applies them
 * with server-side apply, whose typed conversion refuses such a field instead (`field not
 * declared in schema`). Pruning first makes what Bosun applies what the server would have kept,
 * and says which fields went, so the InstallPlan can report them.
 *
 * Two kinds of schema, each with the rules of the part of the API server that reads it:
 *
 * - `structural`: a CustomResourceDefinition version's `openAPIV3Schema`, pruned as the
 *   apiextensions server prunes custom resources. A field is kept when `properties` declares it or
 *   `additionalProperties` is set (any value of it: a map); anything else is removed, except
 *   below `x-kubernetes-preserve-unknown-fields: true`, where unknown fields are kept as they are
 *   while declared ones are still pruned by their own schema. The root and every
 *   `x-kubernetes-embedded-resource` keep `apiVersion` and `kind`, and their `metadata` is pruned
 *   to ObjectMeta's fields. Logical junctors (`allOf`, `anyOf`, `oneOf`, `not`) declare nothing:
 *   a structural schema may only repeat there what its skeleton declares. A missing schema
 *   (no `items`, a boolean `additionalProperties`) declares nothing below it.
 *
 * - `openapi`: a schema from the OpenAPI v3 document the API server publishes for a built-in
 *   group/version (`/openapi/v3/apis/<group>/<version>`), read as server-side apply reads it:
 *   `$ref` to `#/components/schemas/<name>` (also wrapped in a one-element `allOf`) is followed,
 *   an object whose schema declares neither `properties` nor `additionalProperties` is free-form
 *   (e.g. RawExtension, FieldsV1), a missing schema accepts anything, and an object with
 *   `properties` accepts only those (or what `additionalProperties` allows).
 *
 * Pure: no input is modified. What is unchanged is shared with the input, so pruning an object
 * with nothing to prune costs one walk and no copy.
 */

/** A schema as a CRD's `openAPIV3Schema` or an OpenAPI v3 document spells it (only what pruning reads). */
export interface SchemaNode {
  type?: string | string[];
  /** Not read by pruning; kept for what a typed decoding writes (zero-values.ts). */
  required?: string[];
  nullable?: boolean;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode | SchemaNode[];
  additionalProperties?: SchemaNode | boolean;
  allOf?: SchemaNode[];
  $ref?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
}

/** The schema of one kind (or of a part of it), with the rules it is read by. */
export type KindSchema =
  | { flavor: 'structural'; schema: SchemaNode | undefined }
  | {
      flavor: 'openapi';
      schema: SchemaNode | undefined;
      /** `components.schemas` of the document the schema is from, for `$ref`. */
      components: Readonly<Record<string, SchemaNode>>;
    };

export interface Pruned<T> {
  /** The input without the undeclared fields (the input itself when nothing was pruned). */
  value: T;
  /** Each removed field, as a path from the pruned value: `spec.owned[0].group`. */
  fields: string[];
}

/**
 * ObjectMeta's fields, as the API server keeps them when it decodes the metadata of a custom
 * resource (the root's, and an embedded resource's).
 */
export const ObjectMetaSchema: SchemaNode = (() => {
  const string: SchemaNode = { type: 'string' };
  const integer: SchemaNode = { type: 'integer' };
  const boolean: SchemaNode = { type: 'boolean' };
  const stringMap: SchemaNode = { type: 'object', additionalProperties: string };
  return {
    type: 'object',
    properties: {
      name: string,
      generateName: string,
      namespace: string,
      selfLink: string,
      uid: string,
      resourceVersion: string,
      generation: integer,
      creationTimestamp: string,
      deletionTimestamp: string,
      deletionGracePeriodSeconds: integer,
      labels: stringMap,
      annotations: stringMap,
      ownerReferences: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            apiVersion: string,
            kind: string,
            name: string,
            uid: string,
            controller: boolean,
            blockOwnerDeletion: boolean,
          },
        },
      },
      finalizers: { type: 'array', items: string },
      managedFields: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            manager: string,
            operation: string,
            apiVersion: string,
            time: string,
            fieldsType: string,
            // A set of field paths, kept as written.
            fieldsV1: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            subresource: string,
          },
        },
      },
    },
  };
})();

/** Prunes a whole object (a resource: its root keeps apiVersion and kind, metadata is ObjectMeta). */
export function pruneObject<T>(obj: T, schema: KindSchema): Pruned<T> {
  return run(obj, schema, true);
}

/** Prunes a value against a schema for a part of an object (see `subschema`). */
export function pruneValue<T>(value: T, schema: KindSchema): Pruned<T> {
  return run(value, schema, false);
}

/**
 * The schema of the field at `path` (property names) below `schema`, e.g. `['spec']` of a
 * Deployment for a DeploymentSpec; undefined when the schema does not declare it.
 */
export function subschema(schema: KindSchema, path: readonly string[]): KindSchema | undefined {
  let node = schema.schema;
  for (const key of path) {
    const resolved = schema.flavor === 'openapi' ? resolve(node, schema.components) : node;
    const props = resolved?.properties;
    if (props === undefined || !Object.hasOwn(props, key)) return undefined;
    node = props[key];
  }
  return { ...schema, schema: node };
}

/** The paths of an object's fields that `schema` does not declare, without pruning anything. */
export function undeclaredFields(obj: unknown, schema: KindSchema): string[] {
  return pruneObject(obj, schema).fields;
}

// ---- the walk ----

type Json = unknown;
type JsonMap = Record<string, Json>;

interface Walk {
  fields: string[];
  components: Readonly<Record<string, SchemaNode>>;
}

function run<T>(value: T, schema: KindSchema, root: boolean): Pruned<T> {
  const walk: Walk = {
    fields: [],
    components: schema.flavor === 'openapi' ? schema.components : {},
  };
  const out =
    schema.flavor === 'structural'
      ? structural(value, root ? asResource(schema.schema) : schema.schema, '', walk)
      : openapi(value, schema.schema, false, root, '', walk);
  return { value: out as T, fields: walk.fields };
}

/** The root of a custom resource is always treated as an embedded resource. */
function asResource(s: SchemaNode | undefined): SchemaNode {
  if (s?.['x-kubernetes-embedded-resource'] === true) return s;
  return { ...s, 'x-kubernetes-embedded-resource': true };
}

const metaFields: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

/** The apiextensions server's pruning of custom resources. */
function structural(x: Json, s: SchemaNode | undefined, at: string, walk: Walk): Json {
  if (s?.['x-kubernetes-preserve-unknown-fields'] === true) return structuralKeep(x, s, at, walk);
  if (Array.isArray(x)) {
    const items = itemsOf(s);
    return mapArray(x, (v, i) => structural(v, items, index(at, i), walk));
  }
  if (!isMap(x)) return x;
  return mapObject(x, (k, v) => {
    if (s === undefined) return removed(walk, key(at, k));
    if (s['x-kubernetes-embedded-resource'] === true && metaFields.has(k))
      return resourceMeta(k, v, at, walk);
    const prop = propertyOf(s, k);
    if (prop !== undefined) return structural(v, prop, key(at, k), walk);
    if (s.additionalProperties !== undefined) {
      const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
      return structural(v, extra, key(at, k), walk);
    }
    return removed(walk, key(at, k));
  });
}

/**
 * Below `x-kubernetes-preserve-unknown-fields`: unknown fields stay as they are; declared fields
 * (and additional properties, where a schema is given for them) are pruned by their schema.
 */
function structuralKeep(x: Json, s: SchemaNode, at: string, walk: Walk): Json {
  if (Array.isArray(x)) {
    const items = itemsOf(s);
    if (items === undefined) return x;
    return mapArray(x, (v, i) => structuralKeep(v, items, index(at, i), walk));
  }
  if (!isMap(x)) return x;
  return mapObject(x, (k, v) => {
    if (s['x-kubernetes-embedded-resource'] === true && metaFields.has(k))
      return resourceMeta(k, v, at, walk);
    const prop = propertyOf(s, k);
    if (prop !== undefined) return structural(v, prop, key(at, k), walk);
    if (typeof s.additionalProperties === 'object') {
      return structural(v, s.additionalProperties, key(at, k), walk);
    }
    if (s.additionalProperties !== undefined) return structural(v, undefined, key(at, k), walk);
    return v;
  });
}

/** `apiVersion` and `kind` of a resource are kept; its `metadata` is pruned to ObjectMeta. */
function resourceMeta(k: string, v: Json, at: string, walk: Walk): Json {
  if (k !== 'metadata' || !isMap(v)) return v;
  return structural(v, ObjectMetaSchema, key(at, k), walk);
}

/** Server-side apply's reading of an OpenAPI v3 schema. */
function openapi(
  x: Json,
  node: SchemaNode | undefined,
  inheritedPreserve: boolean,
  root: boolean,
  at: string,
  walk: Walk,
): Json {
  if (node === undefined) return x; // no schema: any value
  const followsRef = refOf(node) !== undefined;
  const s = resolve(node, walk.components);
  if (s === undefined) return x;
  // Preserving unknown fields carries over to inlined schemas, not into a referenced definition.
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true || (inheritedPreserve && !followsRef);
  const type = typeOf(s);
  if (Array.isArray(x)) {
    if (type !== undefined && type !== 'array') return x; // a type error is the server's to report
    const items = itemsOf(s);
    if (items === undefined) return x;
    return mapArray(x, (v, i) => openapi(v, items, preserve, false, index(at, i), walk));
  }
  if (!isMap(x)) return x;
  if (type !== undefined && type !== 'object') return x;
  const props = s.properties ?? {};
  const free = Object.keys(props).length === 0 && s.additionalProperties === undefined;
  return mapObject(x, (k, v) => {
    if (root && (k === 'apiVersion' || k === 'kind')) return v;
    if (root && k === 'metadata' && !Object.hasOwn(props, k)) return resourceMeta(k, v, at, walk);
    if (Object.hasOwn(props, k)) return openapi(v, props[k], preserve, false, key(at, k), walk);
    const extra = s.additionalProperties;
    if (typeof extra === 'object') return openapi(v, extra, preserve, false, key(at, k), walk);
    if (extra === true || (extra === undefined && (free || preserve))) return v;
    return removed(walk, key(at, k));
  });
}

/** The schema a node stands for: `$ref` (bare or as the one entry of `allOf`) followed. */
function resolve(
  node: SchemaNode | undefined,
  components: Readonly<Record<string, SchemaNode>>,
): SchemaNode | undefined {
  let s = node;
  for (let depth = 0; s !== undefined && depth < 32; depth++) {
    const ref = refOf(s);
    if (ref === undefined) return s;
    const name = ref.slice(ref.lastIndexOf('/') + 1);
    s = Object.hasOwn(components, name) ? components[name] : undefined;
  }
  return undefined;
}

function refOf(s: SchemaNode): string | undefined {
  if (typeof s.$ref === 'string' && s.$ref !== '') return s.$ref;
  const only = s.allOf?.length === 1 ? s.allOf[0] : undefined;
  if (only !== undefined && typeof only.$ref === 'string' && only.$ref !== '') return only.$ref;
  return undefined;
}

function typeOf(s: SchemaNode): string | undefined {
  const t = Array.isArray(s.type) ? (s.type.length === 1 ? s.type[0] : undefined) : s.type;
  return t === '' ? undefined : t;
}

function itemsOf(s: SchemaNode | undefined): SchemaNode | undefined {
  const items = s?.items;
  return items === undefined || Array.isArray(items) ? undefined : items;
}

function propertyOf(s: SchemaNode, k: string): SchemaNode | undefined {
  const props = s.properties;
  return props !== undefined && Object.hasOwn(props, k) ? props[k] : undefined;
}

// ---- copy on write ----

const REMOVED = Symbol('removed');

function removed(walk: Walk, path: string): typeof REMOVED {
  walk.fields.push(path);
  return REMOVED;
}

function mapObject(x: JsonMap, f: (k: string, v: Json) => Json | typeof REMOVED): JsonMap {
  let out: JsonMap | undefined;
  const keys = Object.keys(x);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = x[k];
    const next = f(k, v);
    if (next === v && out === undefined) continue;
    if (out === undefined) {
      out = {};
      for (let j = 0; j < i; j++) setOwn(out, keys[j] as string, x[keys[j] as string]);
    }
    if (next !== REMOVED) setOwn(out, k, next);
  }
  return out ?? x;
}

function mapArray(x: readonly Json[], f: (v: Json, i: number) => Json): Json[] {
  let out: Json[] | undefined;
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    const next = f(v, i);
    if (next === v && out === undefined) continue;
    out ??= x.slice(0, i);
    out.push(next);
  }
  return out ?? (x as Json[]);
}

/** Sets a key as an own data property (a key named `__proto__` stays a key). */
function setOwn(o: JsonMap, k: string, v: Json): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function isMap(x: Json): x is JsonMap {
  return x !== null && typeof x === 'object' && !Array.isArray(x);
}

const key = (at: string, k: string) => (at === '' ? k : `${at}.${k}`);
const index = (at: string, i: number) => `${at}[${i}]`;

// ---- where schemas come from ----

/** The kinds an OpenAPI v3 document describes, and the schemas they refer to. */
export interface OpenAPIDocument {
  /** `components.schemas`, keeping only what pruning reads. */
  components: Record<string, SchemaNode>;
  /** `group/version/kind` → the name of its schema in `components`. */
  kinds: Map<string, string>;
}

/**
 * Reads a document as the API server serves it at `/openapi/v3/apis/<group>/<version>`, keeping
 * of each schema only what pruning reads (descriptions are most of a document's size).
 */
export function readOpenAPIDocument(doc: unknown): OpenAPIDocument {
  const schemas = isMap(doc) && isMap(doc.components) ? doc.components.schemas : undefined;
  const components: Record<string, SchemaNode> = {};
  const kinds = new Map<string, string>();
  if (!isMap(schemas)) return { components, kinds };
  for (const [name, raw] of Object.entries(schemas)) {
    setOwn(components, name, compact(raw));
    const gvks = isMap(raw) ? raw['x-kubernetes-group-version-kind'] : undefined;
    for (const gvk of Array.isArray(gvks) ? gvks : []) {
      if (isMap(gvk)) kinds.set(gvkKey(String(gvk.group ?? ''), String(gvk.version), String(gvk.kind)), name);
    }
  }
  return { components, kinds };
}

/** The schema of one kind in a document read by `readOpenAPIDocument`. */
export function documentKindSchema(
  doc: OpenAPIDocument,
  group: string,
  version: string,
  kind: string,
): KindSchema | undefined {
  const name = doc.kinds.get(gvkKey(group, version, kind));
  if (name === undefined) return undefined;
  return { flavor: 'openapi', schema: { $ref: `#/components/schemas/${name}` }, components: doc.components };
}

/**
 * The schema of a CustomResourceDefinition's version, or undefined when the server does not prune
 * that version (`spec.preserveUnknownFields: true`) or the CRD does not serve it.
 */
export function crdKindSchema(crd: unknown, version: string): KindSchema | undefined {
  const spec = isMap(crd) && isMap(crd.spec) ? crd.spec : undefined;
  if (spec === undefined || spec.preserveUnknownFields === true) return undefined;
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  const v = versions.find((x): x is JsonMap => isMap(x) && x.name === version);
  if (v === undefined) return undefined;
  const schema = isMap(v.schema) && isMap(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
  return { flavor: 'structural', schema: schema === undefined ? undefined : compact(schema) };
}

const gvkKey = (group: string, version: string, kind: string) => `${group}/${version}/${kind}`;

const keptFlags = [
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
] as const;

/** A schema with only the keywords pruning reads. */
function compact(raw: unknown): SchemaNode {
  if (!isMap(raw)) return {};
  const out: SchemaNode = {};
  if (typeof raw.type === 'string' || Array.isArray(raw.type)) out.type = raw.type as SchemaNode['type'];
  if (typeof raw.$ref === 'string') out.$ref = raw.$ref;
  if (Array.isArray(raw.required) && raw.required.every((r) => typeof r === 'string'))
    out.required = raw.required as string[];
  if (raw.nullable === true) out.nullable = true;
  if (isMap(raw.properties)) {
    const props: Record<string, SchemaNode> = {};
    for (const [k, v] of Object.entries(raw.properties)) setOwn(props, k, compact(v));
    out.properties = props;
  }
  if (isMap(raw.items)) out.items = compact(raw.items);
  if (typeof raw.additionalProperties === 'boolean') out.additionalProperties = raw.additionalProperties;
  else if (isMap(raw.additionalProperties)) out.additionalProperties = compact(raw.additionalProperties);
  // Only a one-entry allOf can stand for a $ref; others only validate.
  if (Array.isArray(raw.allOf) && raw.allOf.length === 1) out.allOf = [compact(raw.allOf[0])];
  for (const flag of keptFlags) if (raw[flag] === true) out[flag] = true;
  return out;
}
