/**
 * Makes a CRD version's OpenAPI v3 schema one that `apiextensions.k8s.io/v1` accepts. A v1beta1
 * CRD could carry a schema the v1 API refuses: v1 requires a *structural* schema (every field has
 * a type, value validations under allOf/anyOf/oneOf/not only restrict what the structure already
 * declares, metadata is left to the server) and forbids some keywords outright. Each rule the API
 * server applies on create (k8s.io/apiextensions-apiserver: pkg/apiserver/schema's structural
 * checks and pkg/apis/apiextensions/validation) is met here by the smallest change that keeps
 * what the schema accepted:
 *
 * - Keys that are not schema keywords are dropped: the API server ignored them when it decoded a
 *   v1beta1 CRD (typically properties indented one level too far).
 * - A field without a type is typed from what its value validations agree on (`anyOf` of
 *   integer and string is `x-kubernetes-int-or-string`), or from its keywords (`properties` means
 *   object); a field whose type cannot be known accepts any value
 *   (`x-kubernetes-preserve-unknown-fields`), as v1beta1 did.
 * - Value validations lose what v1 forbids in them (types, descriptions, nullable,
 *   additionalProperties, extensions), and fields they constrain are declared in the structure.
 * - Root `metadata` keeps only `name`/`generateName` constraints; `apiVersion`/`kind` are strings.
 * - With `preserveUnknownFields` (v1beta1's default, true), v1beta1 kept every field a schema did
 *   not declare, at every depth. v1 prunes them unless a node says
 *   `x-kubernetes-preserve-unknown-fields: true`, so every object node of the schema says so: a
 *   custom resource keeps exactly the fields it kept before.
 *
 * Every change that alters what is accepted, refused or stored becomes a note naming the field;
 * changes that alter nothing (a description dropped from an `anyOf` branch) are silent.
 */
import { childPath, describeJson, isJsonObject, type Json, type JsonObject, show } from './json.js';
import { re2Problem } from './re2.js';

export interface SchemaRepairOptions {
  /** v1beta1's `spec.preserveUnknownFields` (default true): keep undeclared fields everywhere. */
  preserveUnknownFields: boolean;
  /** The version has a status subresource, which limits the keywords at the schema's root. */
  statusSubresource: boolean;
}

/** What a repair changed, at `field` (a path from the CRD's root). */
export interface SchemaNote {
  field: string;
  message: string;
}

export interface RepairedSchema {
  schema: JsonObject;
  notes: SchemaNote[];
}

export const PreserveUnknownFields = 'x-kubernetes-preserve-unknown-fields';
export const IntOrString = 'x-kubernetes-int-or-string';
export const EmbeddedResource = 'x-kubernetes-embedded-resource';
const ListType = 'x-kubernetes-list-type';
const ListMapKeys = 'x-kubernetes-list-map-keys';
const MapType = 'x-kubernetes-map-type';

/** A schema that accepts any value and keeps all of it. */
export const anyValue = (): JsonObject => ({ [PreserveUnknownFields]: true });
/** A schema that accepts any object and keeps all of it: the fallback for a whole version. */
export const anyObject = (): JsonObject => ({ type: 'object', [PreserveUnknownFields]: true });

export const OpenAPITypes: ReadonlySet<string> = new Set([
  'array',
  'boolean',
  'integer',
  'number',
  'object',
  'string',
]);

type KeywordKind =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'strings'
  | 'list'
  | 'schema'
  | 'schemas'
  | 'schemaMap'
  | 'schemaOrBool'
  | 'items'
  | 'type'
  | 'exclusive'
  | 'externalDocs'
  | 'any';

/** The keywords of apiextensions v1 JSONSchemaProps, and what each must hold to be decoded. */
const keywordKinds: Record<string, KeywordKind> = {
  description: 'string',
  type: 'type',
  format: 'string',
  title: 'string',
  default: 'any',
  maximum: 'number',
  exclusiveMaximum: 'exclusive',
  minimum: 'number',
  exclusiveMinimum: 'exclusive',
  maxLength: 'integer',
  minLength: 'integer',
  pattern: 'string',
  maxItems: 'integer',
  minItems: 'integer',
  uniqueItems: 'boolean',
  multipleOf: 'number',
  enum: 'list',
  maxProperties: 'integer',
  minProperties: 'integer',
  required: 'strings',
  items: 'items',
  allOf: 'schemas',
  oneOf: 'schemas',
  anyOf: 'schemas',
  not: 'schema',
  properties: 'schemaMap',
  additionalProperties: 'schemaOrBool',
  externalDocs: 'externalDocs',
  example: 'any',
  nullable: 'boolean',
  [PreserveUnknownFields]: 'boolean',
  [EmbeddedResource]: 'boolean',
  [IntOrString]: 'boolean',
  [ListMapKeys]: 'strings',
  [ListType]: 'string',
  [MapType]: 'string',
  'x-kubernetes-validations': 'list',
};

/**
 * Keywords JSONSchemaProps decodes but v1 refuses, and whether dropping one loses validation
 * (`id`, `$schema` and `definitions` alone constrain nothing).
 */
const forbiddenKeywords: Record<string, boolean> = {
  id: false,
  $schema: false,
  definitions: false,
  $ref: true,
  patternProperties: true,
  dependencies: true,
  additionalItems: true,
};

/** What the root of a schema may hold when the status subresource is enabled. */
export const statusRootKeywords: ReadonlySet<string> = new Set([
  'description',
  'type',
  'format',
  'title',
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
  'required',
  'items',
  'properties',
  'externalDocs',
  'example',
  PreserveUnknownFields,
  'x-kubernetes-validations',
]);

/** Keywords that constrain nothing: dropping them is silent. */
const annotationKeywords = new Set(['description', 'title', 'example', 'externalDocs']);

/** Type names authors wrote that are not OpenAPI types, and what they meant. */
const typeAliases: Record<string, { type: string; format?: string }> = {
  int: { type: 'integer' },
  int32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  long: { type: 'integer', format: 'int64' },
  float: { type: 'number', format: 'float' },
  double: { type: 'number', format: 'double' },
  bool: { type: 'boolean' },
  str: { type: 'string' },
  map: { type: 'object' },
  dict: { type: 'object' },
  list: { type: 'array' },
};

const numberKeywords = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
const stringKeywords = ['pattern', 'minLength', 'maxLength', 'format'];
const metaFields = new Set(['apiVersion', 'kind', 'metadata']);

type Level = 'root' | 'field' | 'item';

interface Where {
  path: string;
  level: Level;
  /** Inside the apiVersion, kind or metadata of the root or of an embedded resource. */
  inMeta: boolean;
  /** This node is the root's `metadata`. */
  rootMetadata?: boolean;
  /** This node is `apiVersion` or `kind` of the root or of an embedded resource. */
  typeMeta?: boolean;
}

/** Repairs `schema` (found at `at`, e.g. `spec.validation.openAPIV3Schema`). Pure. */
export function repairSchema(schema: unknown, at: string, opts: SchemaRepairOptions): RepairedSchema {
  const repair = new Repair(opts);
  if (!isJsonObject(schema)) {
    return {
      schema: anyObject(),
      notes: [{ field: at, message: `is ${describeJson(schema)}, not a schema; any object is accepted` }],
    };
  }
  return { schema: repair.node(schema, { path: at, level: 'root', inMeta: false }), notes: repair.notes };
}

class Repair {
  readonly notes: SchemaNote[] = [];

  constructor(private readonly opts: SchemaRepairOptions) {}

  private note(field: string, message: string): void {
    this.notes.push({ field, message });
  }

  /** A node of the structure: the root, a property, the items of an array, or additionalProperties. */
  node(raw: JsonObject, where: Where): JsonObject {
    if (where.rootMetadata) return this.rootMetadata(raw, where);
    const s = this.keywords(raw, where.path);
    this.resolveType(s, where.path);
    this.intOrString(s, where.path);
    this.liftBranchTypes(s, where.path);

    if (isJsonObject(s.properties)) {
      const props: JsonObject = {};
      const isResource = where.level === 'root' || s[EmbeddedResource] === true;
      for (const [name, value] of Object.entries(s.properties)) {
        const path = childPath(childPath(where.path, 'properties'), name);
        const meta = isResource && metaFields.has(name);
        const child: Where = {
          path,
          level: 'field',
          inMeta: where.inMeta || meta,
          ...(meta && where.level === 'root' && name === 'metadata' ? { rootMetadata: true } : {}),
          ...(meta && name !== 'metadata' ? { typeMeta: true } : {}),
        };
        props[name] = this.child(value, child);
      }
      s.properties = props;
    }
    if (s.items !== undefined) {
      s.items = this.child(s.items, {
        path: childPath(where.path, 'items'),
        level: 'item',
        inMeta: where.inMeta,
      });
    }
    if (isJsonObject(s.additionalProperties)) {
      s.additionalProperties = this.node(s.additionalProperties, {
        path: childPath(where.path, 'additionalProperties'),
        level: 'field',
        inMeta: where.inMeta,
      });
    }
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = s[k];
      if (!Array.isArray(list)) continue;
      const kept = list
        .map((b, i) => this.nested(b, `${childPath(where.path, k)}[${i}]`))
        .filter((b): b is JsonObject => b !== undefined);
      if (kept.length > 0) s[k] = kept;
      else delete s[k];
    }
    if (s.not !== undefined) {
      const not = this.nested(s.not, childPath(where.path, 'not'));
      if (not) s.not = not;
      else delete s.not;
    }
    this.complete(s, where);
    this.constrain(s, where);
    this.preserve(s, where);
    return s;
  }

  /** A child node; a missing or empty schema accepts any value, as it did in v1beta1. */
  private child(value: Json, where: Where): JsonObject {
    if (where.rootMetadata) return this.rootMetadata(isJsonObject(value) ? value : {}, where);
    if (!isJsonObject(value)) {
      // apiVersion and kind are strings whatever their schema says.
      const replacement = where.typeMeta ? { type: 'string' } : anyValue();
      if (value !== null) {
        this.note(
          where.path,
          `is ${describeJson(value)}, not a schema; ${where.typeMeta ? 'a string' : 'any value'} is accepted`,
        );
      }
      return replacement;
    }
    return this.node(value, where);
  }

  /**
   * The keywords of one schema node that decode into JSONSchemaProps and that v1 allows, with
   * values of the right shape. Children are not visited here.
   */
  private keywords(raw: JsonObject, path: string): JsonObject {
    const s: JsonObject = {};
    for (const [key, value] of Object.entries(raw)) {
      const here = childPath(path, key);
      if (Object.hasOwn(forbiddenKeywords, key)) {
        if (forbiddenKeywords[key])
          this.note(here, `${key} is not supported by apiextensions.k8s.io/v1; dropped`);
        continue;
      }
      const kind = Object.hasOwn(keywordKinds, key) ? keywordKinds[key] : undefined;
      if (kind === undefined) continue; // not a keyword: the API server ignored it
      if (value === null) continue; // Go decodes null as unset
      const fixed = this.decode(kind, key, value, here);
      if (fixed === undefined) continue;
      if (key === 'exclusiveMaximum' || key === 'exclusiveMinimum') {
        // JSON Schema draft 6 writes the bound itself; OpenAPI 3.0 a flag beside maximum/minimum.
        if (typeof value === 'number') {
          const bound = key === 'exclusiveMaximum' ? 'maximum' : 'minimum';
          s[bound] = value;
          this.note(here, `a number is read as ${bound}: ${value} with ${key}: true`);
        }
      }
      s[key] = fixed;
    }
    if (s.uniqueItems === true) {
      delete s.uniqueItems;
      this.note(
        childPath(path, 'uniqueItems'),
        'uniqueItems: true is not allowed in apiextensions.k8s.io/v1; dropped, so repeated items are accepted',
      );
    }
    if (typeof s.pattern === 'string') {
      const problem = re2Problem(s.pattern);
      if (problem !== undefined) {
        this.note(childPath(path, 'pattern'), `${problem}; the pattern was dropped and is not checked`);
        delete s.pattern;
      }
    }
    if (s[PreserveUnknownFields] === false) delete s[PreserveUnknownFields];
    return s;
  }

  /** A keyword's value in the shape JSONSchemaProps decodes, or undefined (noted) when it cannot be. */
  private decode(kind: KeywordKind, key: string, value: Json, here: string): Json | undefined {
    const bad = (expected: string) => {
      this.note(
        here,
        `is ${describeJson(value)}, not ${expected}; the API server cannot decode it, so it was dropped`,
      );
      return undefined;
    };
    switch (kind) {
      case 'string':
        return typeof value === 'string' ? value : bad('a string');
      case 'number':
        return typeof value === 'number' ? value : bad('a number');
      case 'integer':
        return typeof value === 'number' && Number.isInteger(value) ? value : bad('an integer');
      case 'boolean':
        return typeof value === 'boolean' ? value : bad('true or false');
      case 'exclusive':
        return typeof value === 'boolean' ? value : typeof value === 'number' ? true : bad('true or false');
      case 'strings':
        if (!Array.isArray(value)) return bad('a list of strings');
        if (!value.every((v) => typeof v === 'string')) {
          this.note(here, 'holds entries that are not strings; they were dropped');
          return value.filter((v) => typeof v === 'string');
        }
        return value;
      case 'list':
        return Array.isArray(value) ? value : bad('a list');
      case 'schemas':
        return Array.isArray(value) ? value : bad('a list of schemas');
      case 'schema':
        return isJsonObject(value) ? value : bad('a schema');
      case 'schemaMap':
        return isJsonObject(value) ? value : bad('a mapping of property names to schemas');
      case 'schemaOrBool':
        return isJsonObject(value) || typeof value === 'boolean' ? value : bad('a schema or true/false');
      case 'externalDocs':
        return isJsonObject(value) &&
          Object.entries(value).every(
            ([k, v]) => (k === 'description' || k === 'url') && typeof v === 'string',
          )
          ? value
          : undefined;
      case 'items':
        if (isJsonObject(value)) return value;
        if (Array.isArray(value)) {
          if (value.length === 1 && isJsonObject(value[0])) {
            this.note(here, 'a list of one schema now applies to every item, not only the first');
            return value[0];
          }
          this.note(here, 'a list of schemas (one per position) is not allowed in v1; items may be anything');
          return anyValue();
        }
        return bad('a schema');
      case 'type':
        return typeof value === 'string' || Array.isArray(value) ? value : bad('a type name');
      case 'any':
        return value;
    }
  }

  /** Makes `type` one OpenAPI type, or removes it, noting what that changes. */
  private resolveType(s: JsonObject, path: string): void {
    const t = s.type;
    if (t === undefined || (typeof t === 'string' && OpenAPITypes.has(t))) return;
    const here = childPath(path, 'type');
    delete s.type;
    if (t === 'null') {
      s.nullable = true;
      this.note(here, 'type null is not allowed in v1; any value is accepted');
      return;
    }
    if (typeof t === 'string') {
      const word = /^[a-z0-9]+/.exec(t.toLowerCase())?.[0] ?? '';
      const alias = OpenAPITypes.has(word)
        ? { type: word }
        : Object.hasOwn(typeAliases, word)
          ? typeAliases[word]
          : undefined;
      if (alias) {
        s.type = alias.type;
        if (alias.format !== undefined && s.format === undefined) s.format = alias.format;
        this.note(here, `"${t}" is not an OpenAPI type; read as ${alias.type}`);
      } else this.note(here, `"${t}" is not an OpenAPI type; any value is accepted`);
      return;
    }
    // A list of types (JSON Schema); OpenAPI has one type and nullable.
    const types = (t as Json[]).filter((x): x is string => typeof x === 'string');
    if (types.includes('null')) s.nullable = true;
    const others = [...new Set(types.filter((x) => x !== 'null' && OpenAPITypes.has(x)))].sort();
    if (others.length === 1) s.type = others[0]!;
    else if (others.join() === 'integer,string') s[IntOrString] = true;
    else if (others.join() === 'integer,number') s.type = 'number';
    else this.note(here, `[${types.join(', ')}] cannot be one OpenAPI type; any value is accepted`);
  }

  /**
   * `anyOf`/`oneOf` of an integer and a string is what v1 calls `x-kubernetes-int-or-string`, whose
   * only allowed form is exactly `anyOf: [{type: integer}, {type: string}]`. Constraints a branch
   * held for its own type move to the node, where JSON Schema applies them to that type alone.
   */
  private intOrString(s: JsonObject, path: string): void {
    let key: 'anyOf' | 'oneOf' | undefined;
    for (const k of ['anyOf', 'oneOf'] as const) {
      const list = s[k];
      if (Array.isArray(list) && list.length === 2 && list.every(isJsonObject)) {
        const types = (list as JsonObject[]).map((b) => (typeof b.type === 'string' ? b.type : '')).sort();
        if (types[0] === 'integer' && types[1] === 'string') key = k;
      }
    }
    if (key === undefined && s[IntOrString] !== true) return;
    if (key === undefined && s.type === undefined) {
      s[IntOrString] = true;
      delete s[PreserveUnknownFields];
      return;
    }
    if (key === undefined) {
      // The flag beside a declared type: v1 reads the flag, so the type no longer restricts.
      if (s.type !== 'string' && s.type !== 'integer') {
        this.note(childPath(path, 'type'), `${show(s.type)} is dropped: the field is int-or-string`);
      }
      delete s.type;
      delete s[PreserveUnknownFields];
      return;
    }
    if (s.type !== undefined) return; // e.g. type: string with anyOf [integer, string]: strings only
    for (const branch of s[key] as JsonObject[]) {
      const keywords = branch.type === 'integer' ? numberKeywords : stringKeywords;
      for (const [k, v] of Object.entries(branch)) {
        if (k === 'type' || annotationKeywords.has(k)) continue;
        if (keywords.includes(k) && s[k] === undefined) s[k] = v;
        else this.note(childPath(path, `${key}.${k}`), `cannot be kept for an int-or-string field; dropped`);
      }
    }
    if (key === 'oneOf') delete s.oneOf;
    s.anyOf = [{ type: 'integer' }, { type: 'string' }];
    s[IntOrString] = true;
    delete s[PreserveUnknownFields];
    if (s[EmbeddedResource] === true) delete s[EmbeddedResource];
  }

  /** A node without a type takes the one its value validations agree on, or any value. */
  private liftBranchTypes(s: JsonObject, path: string): void {
    if (s.type !== undefined || s[IntOrString] === true) return;
    const typesOf = (k: string) =>
      Array.isArray(s[k]) ? (s[k] as Json[]).map((b) => (isJsonObject(b) ? b.type : undefined)) : [];
    const allOf = typesOf('allOf').filter((t) => t !== undefined);
    const candidates = [allOf, typesOf('anyOf'), typesOf('oneOf')];
    for (const types of candidates) {
      if (types.length === 0) continue;
      const distinct = new Set(types);
      if (distinct.size === 1 && typeof types[0] === 'string' && OpenAPITypes.has(types[0])) {
        s.type = types[0];
        return;
      }
    }
    const mixed = candidates.flat().filter((t): t is string => typeof t === 'string');
    if (new Set(mixed).size > 1) {
      this.note(
        path,
        `accepts one of the types ${[...new Set(mixed)].sort().join(', ')}, which a v1 schema cannot say; any value is accepted`,
      );
    }
    if (s.type === undefined) this.inferType(s);
  }

  /** The type a node's own keywords imply, if they imply one. */
  private inferType(s: JsonObject): void {
    let t: string | undefined;
    if (s.properties !== undefined || s.additionalProperties !== undefined || s.required !== undefined)
      t = 'object';
    else if (s.items !== undefined || s.minItems !== undefined || s.maxItems !== undefined) t = 'array';
    else if (Array.isArray(s.enum) && s.enum.length > 0) {
      const kinds = new Set(
        s.enum.map((v) => (typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v)),
      );
      const only = [...kinds][0];
      if (kinds.size === 1 && (only === 'string' || only === 'boolean' || only === 'integer')) t = only;
    }
    // A node with properties but no type accepted non-objects too in v1beta1; it keeps doing so
    // (no type, any value kept) unless it is the root, which is always an object.
    if (t !== undefined && t !== 'object') s.type = t;
  }

  /** A value validation (a branch of allOf/anyOf/oneOf, or not), cleaned of what v1 forbids there. */
  private nested(raw: Json, path: string): JsonObject | undefined {
    if (!isJsonObject(raw)) {
      this.note(path, `is ${describeJson(raw)}, not a schema; dropped`);
      return undefined;
    }
    const v = this.keywords(raw, path);
    for (const key of Object.keys(v)) {
      const here = childPath(path, key);
      if (key === 'description' || key === 'title' || key === 'example' || key === 'externalDocs')
        delete v[key];
      else if (key === 'default') {
        delete v[key];
        this.note(here, 'a default inside a value validation is never applied; dropped');
      } else if (key === 'nullable') {
        if (v.nullable === true)
          this.note(here, 'nullable is not allowed inside a value validation; dropped');
        delete v[key];
      } else if (key === 'additionalProperties') {
        delete v[key];
        this.note(here, 'additionalProperties is not allowed inside a value validation; dropped');
      } else if (key.startsWith('x-kubernetes-') && key !== PreserveUnknownFields) {
        delete v[key];
        this.note(here, `${key} is not allowed inside a value validation; dropped`);
      } else if (key === PreserveUnknownFields) delete v[key];
    }
    if (isJsonObject(v.properties)) {
      const props: JsonObject = {};
      for (const [name, value] of Object.entries(v.properties)) {
        const here = childPath(childPath(path, 'properties'), name);
        if (name === 'metadata') {
          this.note(here, 'metadata cannot be constrained inside a value validation; dropped');
          continue;
        }
        const sub = this.nested(value, here);
        if (sub) props[name] = sub;
      }
      v.properties = props;
    }
    if (v.items !== undefined) {
      const items = this.nested(v.items, childPath(path, 'items'));
      if (items) v.items = items;
      else delete v.items;
    }
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
      if (!Array.isArray(v[k])) continue;
      const kept = (v[k] as Json[])
        .map((b, i) => this.nested(b, `${childPath(path, k)}[${i}]`))
        .filter((b): b is JsonObject => b !== undefined);
      if (kept.length) v[k] = kept;
      else delete v[k];
    }
    if (v.not !== undefined) {
      const not = this.nested(v.not, childPath(path, 'not'));
      if (not) v.not = not;
      else delete v.not;
    }
    return v;
  }

  /**
   * Every field a value validation constrains must also be declared by the structure (and its
   * type given there, not in the validation). Declares what is missing where the structure can
   * hold it, then drops the types the validations repeat.
   */
  private complete(s: JsonObject, where: Where): void {
    const path = where.path;
    const isResource = where.level === 'root' || s[EmbeddedResource] === true;
    const exactIntOrString = s[IntOrString] === true;
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = s[k];
      if (!Array.isArray(list)) continue;
      if (k === 'anyOf' && exactIntOrString && isIntOrStringPair(list)) continue;
      list.forEach((b, i) => {
        if (!isJsonObject(b)) return;
        if (
          k === 'allOf' &&
          i === 0 &&
          exactIntOrString &&
          Array.isArray(b.anyOf) &&
          isIntOrStringPair(b.anyOf)
        ) {
          const { anyOf, ...rest } = b;
          this.completeFrom(s, rest, `${childPath(path, k)}[${i}]`, true, isResource);
          Object.assign(b, rest, { anyOf });
          return;
        }
        this.completeFrom(s, b, `${childPath(path, k)}[${i}]`, true, isResource);
      });
    }
    if (isJsonObject(s.not)) this.completeFrom(s, s.not, childPath(path, 'not'), true, isResource);
  }

  /**
   * `direct`: `v` is a branch of `structure`'s own value validations (not a property of one).
   * `isResource`: `structure` is a resource's root, whose apiVersion and kind are strings.
   */
  private completeFrom(
    structure: JsonObject,
    v: JsonObject,
    path: string,
    direct: boolean,
    isResource = false,
  ): void {
    if (v.type !== undefined) {
      // Types of a node's own branches that disagree were noted when its type was chosen.
      if (v.type !== structure.type && (structure.type !== undefined || !direct)) {
        this.note(
          childPath(path, 'type'),
          `${show(v.type)} cannot be checked inside a value validation; dropped`,
        );
      }
      delete v.type;
    }
    if (isJsonObject(v.properties)) {
      const mayDeclare =
        (structure.type === 'object' || structure.type === undefined) &&
        !isJsonObject(structure.additionalProperties) &&
        structure[IntOrString] !== true;
      for (const [name, sub] of Object.entries(v.properties)) {
        if (!isJsonObject(sub)) continue;
        const here = childPath(childPath(path, 'properties'), name);
        const props = isJsonObject(structure.properties) ? structure.properties : undefined;
        let target = props?.[name];
        if (!isJsonObject(target)) {
          if (!mayDeclare) {
            delete v.properties[name];
            this.note(here, 'constrains a field the schema cannot declare here; dropped');
            continue;
          }
          target =
            isResource && (name === 'apiVersion' || name === 'kind') ? { type: 'string' } : skeleton(sub);
          structure.properties = { ...(props ?? {}), [name]: target };
        }
        this.completeFrom(target, sub, here, false);
      }
    }
    if (isJsonObject(v.items)) {
      if (isJsonObject(structure.items))
        this.completeFrom(structure.items, v.items, childPath(path, 'items'), false);
      else {
        delete v.items;
        this.note(
          childPath(path, 'items'),
          'constrains items of a field that is not declared as an array; dropped',
        );
      }
    }
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = v[k];
      if (Array.isArray(list)) {
        list.forEach((b, i) => {
          if (isJsonObject(b))
            this.completeFrom(structure, b, `${childPath(path, k)}[${i}]`, false, isResource);
        });
      }
    }
    if (isJsonObject(v.not)) this.completeFrom(structure, v.not, childPath(path, 'not'), false, isResource);
  }

  /** The rules v1 puts on a node after its children are repaired. */
  private constrain(s: JsonObject, where: Where): void {
    const { path } = where;
    const at = (k: string) => childPath(path, k);
    if (s.type === 'array' && s.items === undefined) s.items = anyValue();
    if (
      s.properties !== undefined &&
      s.additionalProperties !== undefined &&
      s.additionalProperties !== true
    ) {
      this.note(
        at('additionalProperties'),
        s.additionalProperties === false
          ? 'additionalProperties: false beside properties is not allowed in v1; dropped, so undeclared fields are no longer refused'
          : 'a schema for additionalProperties beside properties is not allowed in v1; dropped, so undeclared fields are not checked',
      );
      delete s.additionalProperties;
    }
    if (s[IntOrString] === true) {
      delete s[PreserveUnknownFields];
      if (s[EmbeddedResource] === true) {
        delete s[EmbeddedResource];
        this.note(at(EmbeddedResource), 'cannot be set on an int-or-string field; dropped');
      }
    }
    this.embedded(s, where);
    this.listAndMapTypes(s, path);
    if (s.default !== undefined && (where.inMeta || this.opts.preserveUnknownFields)) {
      delete s.default;
      this.note(
        at('default'),
        where.inMeta
          ? 'defaults are not allowed in apiVersion, kind or metadata; dropped'
          : 'v1beta1 allowed defaults only with preserveUnknownFields: false, so it was never applied; dropped',
      );
    }
    if (where.typeMeta && s.type !== 'string') {
      // apiVersion and kind are strings; what only an object or array could hold goes with the type.
      if (s.type !== undefined) this.note(at('type'), `must be string; ${show(s.type)} was replaced`);
      const keep = new Set(['description', 'title', 'enum', ...stringKeywords]);
      for (const k of Object.keys(s)) if (!keep.has(k)) delete s[k];
      s.type = 'string';
    }
    if (where.level === 'root') this.root(s, path);
  }

  private root(s: JsonObject, path: string): void {
    const at = (k: string) => childPath(path, k);
    if (s.type !== 'object') {
      if (s.type !== undefined)
        this.note(at('type'), `must be object at the root; ${show(s.type)} was replaced`);
      s.type = 'object';
    }
    if (s.nullable === true) this.note(at('nullable'), 'cannot be true at the root; dropped');
    delete s.nullable;
    if (s.additionalProperties !== undefined) {
      if (s.additionalProperties !== true) {
        this.note(
          at('additionalProperties'),
          'is not allowed at the root; dropped, so undeclared top-level fields are not checked',
        );
      }
      delete s.additionalProperties;
    }
    for (const k of [IntOrString, EmbeddedResource, ListType, ListMapKeys]) delete s[k];
    if (this.opts.statusSubresource) {
      for (const k of Object.keys(s)) {
        if (statusRootKeywords.has(k)) continue;
        if (!annotationKeywords.has(k) && k !== MapType) {
          this.note(
            at(k),
            'is not allowed at the root of a schema whose version has a status subresource; dropped',
          );
        }
        delete s[k];
      }
    }
  }

  /** The root's metadata: the API server allows constraints on name and generateName only. */
  private rootMetadata(raw: JsonObject, where: Where): JsonObject {
    const out: JsonObject = { type: 'object' };
    const props = isJsonObject(raw.properties) ? raw.properties : {};
    const kept: JsonObject = {};
    for (const name of ['name', 'generateName']) {
      const p = props[name];
      if (isJsonObject(p)) {
        kept[name] = this.node(p, {
          path: childPath(childPath(where.path, 'properties'), name),
          level: 'field',
          inMeta: true,
        });
      }
    }
    if (Object.keys(kept).length > 0) out.properties = kept;
    const dropped = [
      ...Object.keys(raw).filter(
        (k) =>
          Object.hasOwn(keywordKinds, k) && !annotationKeywords.has(k) && k !== 'type' && k !== 'properties',
      ),
      ...Object.keys(props)
        .filter((k) => k !== 'name' && k !== 'generateName')
        .map((k) => `properties.${k}`),
    ];
    if (dropped.length > 0) {
      this.note(
        where.path,
        `the API server allows constraints on metadata.name and metadata.generateName only; ${dropped.join(', ')} dropped`,
      );
    }
    return out;
  }

  private embedded(s: JsonObject, where: Where): void {
    if (s[EmbeddedResource] !== true) return;
    const at = childPath(where.path, EmbeddedResource);
    if (where.inMeta) {
      delete s[EmbeddedResource];
      this.note(at, 'cannot be used inside apiVersion, kind or metadata; dropped');
      return;
    }
    if (s.type === undefined) s.type = 'object';
    if (s.type !== 'object') {
      delete s[EmbeddedResource];
      this.note(at, `requires type object, not ${show(s.type)}; dropped`);
      return;
    }
    if (s.additionalProperties !== undefined) {
      delete s.additionalProperties;
      this.note(
        childPath(where.path, 'additionalProperties'),
        'is not allowed on an embedded resource; dropped',
      );
    }
    if (s[PreserveUnknownFields] !== true && !isJsonObject(s.properties)) s[PreserveUnknownFields] = true;
  }

  /** x-kubernetes-list-type, -list-map-keys and -map-type: server-side apply's merge rules. */
  private listAndMapTypes(s: JsonObject, path: string): void {
    const at = (k: string) => childPath(path, k);
    const mapType = s[MapType];
    if (mapType !== undefined && (s.type !== 'object' || (mapType !== 'atomic' && mapType !== 'granular'))) {
      delete s[MapType];
      this.note(at(MapType), `${show(mapType)} needs an object field and atomic or granular; dropped`);
    }
    const listType = s[ListType];
    const dropList = (why: string) => {
      delete s[ListType];
      delete s[ListMapKeys];
      this.note(at(ListType), `${why}; dropped, so server-side apply treats the list as one value`);
    };
    if (listType === undefined) {
      if (s[ListMapKeys] !== undefined) {
        delete s[ListMapKeys];
        this.note(at(ListMapKeys), 'requires x-kubernetes-list-type: map; dropped');
      }
      return;
    }
    if (s.type !== 'array') return dropList(`${show(listType)} requires an array field`);
    if (listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
      return dropList(`${show(listType)} is not atomic, set or map`);
    }
    if (listType !== 'map' && s[ListMapKeys] !== undefined) {
      delete s[ListMapKeys];
      this.note(at(ListMapKeys), 'requires x-kubernetes-list-type: map; dropped');
    }
    const items = isJsonObject(s.items) ? s.items : undefined;
    if (listType === 'atomic' || items === undefined) return;
    if (items.nullable === true) {
      delete items.nullable;
      this.note(childPath(at('items'), 'nullable'), `items of a ${listType} list cannot be null; dropped`);
    }
    if (listType === 'set') {
      // Items of a set are compared whole, so they must be atomic themselves.
      if (items.type === 'object') items[MapType] = 'atomic';
      if (items.type === 'array') items[ListType] = 'atomic';
      return;
    }
    const keys = Array.isArray(s[ListMapKeys]) ? (s[ListMapKeys] as string[]) : [];
    const props = isJsonObject(items.properties) ? items.properties : {};
    const required = new Set(Array.isArray(items.required) ? (items.required as string[]) : []);
    if (keys.length === 0) return dropList('map requires x-kubernetes-list-map-keys');
    if (items.type !== 'object') return dropList('map requires items of type object');
    if (new Set(keys).size !== keys.length) return dropList('map keys must not repeat');
    for (const k of keys) {
      const p = props[k];
      if (!isJsonObject(p)) return dropList(`map key ${k} is not a property of the items`);
      if (p.type === 'array' || p.type === 'object') return dropList(`map key ${k} must be a scalar`);
      if (!required.has(k) && p.default === undefined) {
        return dropList(`map key ${k} is neither required nor defaulted, which v1 requires`);
      }
      if (p.nullable === true) return dropList(`map key ${k} cannot be nullable`);
    }
  }

  /** Unknown fields: kept at every object node with preserveUnknownFields, and wherever the type is unknown. */
  private preserve(s: JsonObject, where: Where): void {
    if (s[IntOrString] === true) return;
    if (s.type === undefined) {
      s[PreserveUnknownFields] = true;
      return;
    }
    if (
      !where.inMeta &&
      this.opts.preserveUnknownFields &&
      s.type === 'object' &&
      s.additionalProperties === undefined
    ) {
      s[PreserveUnknownFields] = true;
    }
  }
}

function isIntOrStringPair(list: Json[]): boolean {
  return (
    list.length === 2 &&
    isJsonObject(list[0]) &&
    isJsonObject(list[1]) &&
    Object.keys(list[0]).join() === 'type' &&
    Object.keys(list[1]).join() === 'type' &&
    list[0].type === 'integer' &&
    list[1].type === 'string'
  );
}

/** The structure a value validation implies for a field the schema did not declare. */
function skeleton(v: JsonObject): JsonObject {
  const out: JsonObject = {};
  // Typed as a repaired node would be: what it says, or array when it has items.
  const t =
    typeof v.type === 'string' && OpenAPITypes.has(v.type)
      ? v.type
      : isJsonObject(v.items)
        ? 'array'
        : undefined;
  if (t !== undefined) out.type = t;
  if (isJsonObject(v.properties)) {
    const props: JsonObject = {};
    for (const [name, sub] of Object.entries(v.properties))
      if (isJsonObject(sub)) props[name] = skeleton(sub);
    out.properties = props;
  }
  if (isJsonObject(v.items)) out.items = skeleton(v.items);
  else if (t === 'array') out.items = anyValue();
  if (t === undefined || t === 'object') out[PreserveUnknownFields] = true;
  return out;
}
