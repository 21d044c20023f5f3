/**
 * Whether a CRD version's schema is one `apiextensions.k8s.io/v1` accepts on create: the API
 * server's structural-schema invariants (pkg/apiserver/schema: every specified field has a type,
 * value validations only restrict what the structure declares and hold no types, descriptions,
 * defaults or extensions, metadata is the server's) and its v1 schema validation
 * (pkg/apis/apiextensions/validation: forbidden keywords, list and map types, the root's limits).
 * Written apart from the repair in schema.ts, so that each checks the other: a repaired schema
 * that still breaks a rule here is replaced by a schema that accepts any object.
 *
 * CEL rules (`x-kubernetes-validations`) and whether defaults validate against their schema are
 * not judged here.
 */
import { childPath, isJsonObject, type Json, type JsonObject, show } from './json.js';
import { re2Problem } from './re2.js';
import {
  EmbeddedResource,
  IntOrString,
  OpenAPITypes,
  PreserveUnknownFields,
  statusRootKeywords,
} from './schema.js';

export interface SchemaViolation {
  field: string;
  message: string;
}

export interface CheckOptions {
  statusSubresource: boolean;
}

const knownKeywords = new Set([
  ...statusRootKeywords,
  'default',
  'enum',
  'maxProperties',
  'minProperties',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'additionalProperties',
  'nullable',
  EmbeddedResource,
  IntOrString,
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
]);

const neverAllowed = [
  'id',
  '$schema',
  '$ref',
  'patternProperties',
  'dependencies',
  'additionalItems',
  'definitions',
];
const metaFields = new Set(['apiVersion', 'kind', 'metadata']);

type Level = 'root' | 'item' | 'field';

/** Every rule of v1 that `schema` (at `at`) breaks; empty when the API server would accept it. */
export function checkV1Schema(schema: Json, at: string, opts: CheckOptions): SchemaViolation[] {
  const out: SchemaViolation[] = [];
  const add = (field: string, message: string) => out.push({ field, message });
  if (!isJsonObject(schema)) {
    add(at, 'must be a schema');
    return out;
  }
  if (opts.statusSubresource) {
    for (const k of Object.keys(schema)) {
      if (!statusRootKeywords.has(k))
        add(childPath(at, k), 'is not allowed at the root when the status subresource is enabled');
    }
  }
  if (schema.nullable === true) add(childPath(at, 'nullable'), 'cannot be true at the root');
  structural(schema, at, 'root', { inMeta: false, defaultsForbidden: false }, add);
  return out;
}

interface Ctx {
  inMeta: boolean;
  defaultsForbidden: boolean;
}

type Add = (field: string, message: string) => void;

function structural(s: JsonObject, path: string, level: Level, ctx: Ctx, add: Add): void {
  const at = (k: string) => childPath(path, k);
  keywordShapes(s, path, add);
  const type = typeof s.type === 'string' ? s.type : undefined;
  const intOrString = s[IntOrString] === true;
  const preserve = s[PreserveUnknownFields] === true;
  const embedded = s[EmbeddedResource] === true;

  if (type !== undefined && !OpenAPITypes.has(type)) add(at('type'), `${type} is not an OpenAPI type`);
  if (type === 'array' && !isJsonObject(s.items)) add(at('items'), 'must be a schema for an array');
  if (s.uniqueItems === true) add(at('uniqueItems'), 'cannot be true');
  if (
    isJsonObject(s.properties) &&
    Object.keys(s.properties).length > 0 &&
    s.additionalProperties !== undefined &&
    s.additionalProperties !== true
  ) {
    add(at('additionalProperties'), 'and properties are mutually exclusive');
  }
  if (level === 'root' && s.additionalProperties !== undefined)
    add(at('additionalProperties'), 'must not be used at the root');
  if (embedded && s.additionalProperties !== undefined)
    add(at('additionalProperties'), 'must not be used with an embedded resource');
  if (intOrString && preserve) add(at(PreserveUnknownFields), 'must be false with int-or-string');
  if (intOrString && embedded) add(at(EmbeddedResource), 'must be false with int-or-string');
  if (embedded && type !== 'object') add(at('type'), 'must be object for an embedded resource');
  else if (type === undefined && !intOrString && !preserve) add(at('type'), 'must not be empty');
  if (level === 'root' && type !== undefined && type !== 'object')
    add(at('type'), 'must be object at the root');
  if (embedded && !preserve && !(isJsonObject(s.properties) && Object.keys(s.properties).length > 0)) {
    add(at('properties'), 'must not be empty for an embedded resource that does not preserve unknown fields');
  }
  if (ctx.inMeta && embedded) add(at(EmbeddedResource), 'must not be used inside resource metadata');
  if (s.default !== undefined && ctx.defaultsForbidden) add(at('default'), 'is not allowed here');
  if (s[PreserveUnknownFields] === false) add(at(PreserveUnknownFields), 'must be true or undefined');
  listAndMapTypes(s, path, add);

  const isResource = level === 'root' || embedded;
  if (isJsonObject(s.properties)) {
    for (const [name, sub] of Object.entries(s.properties)) {
      const here = childPath(at('properties'), name);
      if (!isJsonObject(sub)) {
        add(here, 'must be a schema');
        continue;
      }
      const meta = isResource && metaFields.has(name);
      if (meta && name !== 'metadata' && sub.type !== 'string')
        add(childPath(here, 'type'), 'must be string');
      if (meta && name === 'metadata') metadata(sub, here, level === 'root', add);
      structural(
        sub,
        here,
        'field',
        {
          inMeta: ctx.inMeta || meta,
          defaultsForbidden: ctx.defaultsForbidden || (meta && level === 'root'),
        },
        add,
      );
    }
  }
  if (s.items !== undefined) {
    if (isJsonObject(s.items)) structural(s.items, at('items'), 'item', ctx, add);
    else add(at('items'), 'must be one schema');
  }
  if (isJsonObject(s.additionalProperties)) {
    structural(
      s.additionalProperties,
      at('additionalProperties'),
      'field',
      { ...ctx, defaultsForbidden: ctx.defaultsForbidden || ctx.inMeta },
      add,
    );
  }
  const intOrStringAnyOf = intOrString && isIntOrStringPair(s.anyOf);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = s[k];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      add(at(k), 'must be a list of schemas');
      continue;
    }
    if (k === 'anyOf' && intOrStringAnyOf) continue;
    list.forEach((b, i) => {
      const here = `${at(k)}[${i}]`;
      if (!isJsonObject(b)) return add(here, 'must be a schema');
      const skipAnyOf = k === 'allOf' && i === 0 && intOrString && isIntOrStringPair(b.anyOf);
      nested(b, here, skipAnyOf, add);
      complete(b, s, path, here, add);
    });
  }
  if (s.not !== undefined) {
    if (isJsonObject(s.not)) {
      nested(s.not, at('not'), false, add);
      complete(s.not, s, path, at('not'), add);
    } else add(at('not'), 'must be a schema');
  }
}

/** The root's metadata may restrict name and generateName only; any metadata must be an object. */
function metadata(m: JsonObject, path: string, root: boolean, add: Add): void {
  if (m.type !== 'object') add(childPath(path, 'type'), 'must be object');
  if (!root) return;
  const props = isJsonObject(m.properties) ? Object.keys(m.properties) : [];
  const onlyNames = props.every((p) => p === 'name' || p === 'generateName');
  const others = Object.keys(m).filter((k) => k !== 'type' && k !== 'properties' && k !== 'default');
  if (!onlyNames || others.length > 0) {
    add(path, 'must not specify anything other than name and generateName');
  }
}

/** A value validation: no types, descriptions, defaults, nullable, additionalProperties or extensions. */
function nested(v: JsonObject, path: string, skipAnyOf: boolean, add: Add): void {
  keywordShapes(v, path, add);
  const at = (k: string) => childPath(path, k);
  for (const k of ['type', 'title', 'description', 'default', 'additionalProperties']) {
    if (v[k] !== undefined && v[k] !== '') add(at(k), 'must be empty to be structural');
  }
  if (v.nullable === true) add(at('nullable'), 'must be false to be structural');
  for (const k of Object.keys(v)) {
    if (k.startsWith('x-kubernetes-') && v[k] !== false) add(at(k), 'must be unset to be structural');
  }
  if (v.uniqueItems === true) add(at('uniqueItems'), 'cannot be true');
  if (isJsonObject(v.properties)) {
    if ('metadata' in v.properties)
      add(childPath(at('properties'), 'metadata'), 'must not be specified in a nested context');
    for (const [name, sub] of Object.entries(v.properties)) {
      if (isJsonObject(sub)) nested(sub, childPath(at('properties'), name), false, add);
      else add(childPath(at('properties'), name), 'must be a schema');
    }
  }
  if (v.items !== undefined) {
    if (isJsonObject(v.items)) nested(v.items, at('items'), false, add);
    else add(at('items'), 'must be one schema');
  }
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    if (k === 'anyOf' && skipAnyOf) continue;
    const list = v[k];
    if (Array.isArray(list)) {
      list.forEach((b, i) =>
        isJsonObject(b) ? nested(b, `${at(k)}[${i}]`, false, add) : add(`${at(k)}[${i}]`, 'must be a schema'),
      );
    }
  }
  if (isJsonObject(v.not)) nested(v.not, at('not'), false, add);
}

/** Every field a value validation names must be declared by the structure at the same place. */
function complete(v: JsonObject, s: JsonObject | undefined, sPath: string, vPath: string, add: Add): void {
  if (s === undefined) {
    add(sPath, `must be declared because ${vPath} constrains it`);
    return;
  }
  if (isJsonObject(v.properties)) {
    const props = isJsonObject(s.properties) ? s.properties : {};
    for (const [name, sub] of Object.entries(v.properties)) {
      if (!isJsonObject(sub)) continue;
      const target = props[name];
      complete(
        sub,
        isJsonObject(target) ? target : undefined,
        childPath(childPath(sPath, 'properties'), name),
        childPath(childPath(vPath, 'properties'), name),
        add,
      );
    }
  }
  if (isJsonObject(v.items)) {
    complete(
      v.items,
      isJsonObject(s.items) ? s.items : undefined,
      childPath(sPath, 'items'),
      childPath(vPath, 'items'),
      add,
    );
  }
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = v[k];
    if (Array.isArray(list))
      list.forEach((b, i) => isJsonObject(b) && complete(b, s, sPath, `${childPath(vPath, k)}[${i}]`, add));
  }
  if (isJsonObject(v.not)) complete(v.not, s, sPath, childPath(vPath, 'not'), add);
}

function listAndMapTypes(s: JsonObject, path: string, add: Add): void {
  const at = (k: string) => childPath(path, k);
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (s.type !== 'object') add(at('type'), 'must be object with x-kubernetes-map-type');
    if (mapType !== 'atomic' && mapType !== 'granular')
      add(at('x-kubernetes-map-type'), 'must be atomic or granular');
  }
  const listType = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys) && keys.length > 0 && listType !== 'map') {
    add(at('x-kubernetes-list-type'), 'must be map when x-kubernetes-list-map-keys is set');
  }
  if (listType === undefined) return;
  if (s.type !== 'array') add(at('type'), 'must be array with x-kubernetes-list-type');
  if (listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    add(at('x-kubernetes-list-type'), 'must be atomic, set or map');
  }
  const items = isJsonObject(s.items) ? s.items : undefined;
  if (items === undefined || listType === 'atomic') return;
  if (items.nullable === true)
    add(childPath(at('items'), 'nullable'), `cannot be nullable in a ${show(listType)} list`);
  if (listType === 'set') {
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      add(childPath(at('items'), 'x-kubernetes-map-type'), 'must be atomic as item of a set');
    }
    if (
      items.type === 'array' &&
      items['x-kubernetes-list-type'] !== undefined &&
      items['x-kubernetes-list-type'] !== 'atomic'
    ) {
      add(childPath(at('items'), 'x-kubernetes-list-type'), 'must be atomic as item of a set');
    }
    return;
  }
  if (listType !== 'map') return;
  if (!Array.isArray(keys) || keys.length === 0)
    add(at('x-kubernetes-list-map-keys'), 'must not be empty for a map list');
  if (items.type !== 'object') add(childPath(at('items'), 'type'), 'must be object for a map list');
  const props = isJsonObject(items.properties) ? items.properties : {};
  const required = new Set(Array.isArray(items.required) ? items.required : []);
  const seen = new Set<Json>();
  for (const k of Array.isArray(keys) ? keys : []) {
    if (seen.has(k)) add(at('x-kubernetes-list-map-keys'), 'must not repeat');
    seen.add(k);
    const p = typeof k === 'string' ? props[k] : undefined;
    if (!isJsonObject(p)) {
      add(at('x-kubernetes-list-map-keys'), 'entries must all be names of item properties');
      continue;
    }
    if (p.type === 'array' || p.type === 'object')
      add(at('x-kubernetes-list-map-keys'), `${show(k)} must be a scalar`);
    if (!required.has(k) && p.default === undefined)
      add(at('x-kubernetes-list-map-keys'), `${show(k)} must be required or have a default`);
    if (p.nullable === true) add(at('x-kubernetes-list-map-keys'), `${show(k)} cannot be nullable`);
  }
}

/** Keywords present must be known, allowed in v1, and of the shape JSONSchemaProps decodes. */
function keywordShapes(s: JsonObject, path: string, add: Add): void {
  for (const k of neverAllowed) if (s[k] !== undefined) add(childPath(path, k), 'is not supported');
  for (const [k, v] of Object.entries(s)) {
    if (!knownKeywords.has(k)) {
      if (!neverAllowed.includes(k)) add(childPath(path, k), 'is not a schema keyword');
      continue;
    }
    const here = childPath(path, k);
    switch (k) {
      case 'required':
      case 'x-kubernetes-list-map-keys':
        if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
          add(here, 'must be a list of strings');
        break;
      case 'enum':
      case 'x-kubernetes-validations':
        if (!Array.isArray(v)) add(here, 'must be a list');
        break;
      case 'pattern': {
        const problem = typeof v === 'string' ? re2Problem(v) : 'must be a string';
        if (problem) add(here, problem);
        break;
      }
      case 'type':
      case 'format':
      case 'title':
      case 'description':
      case 'x-kubernetes-list-type':
      case 'x-kubernetes-map-type':
        if (typeof v !== 'string') add(here, 'must be a string');
        break;
      case 'nullable':
      case 'uniqueItems':
      case 'exclusiveMaximum':
      case 'exclusiveMinimum':
      case PreserveUnknownFields:
      case EmbeddedResource:
      case IntOrString:
        if (typeof v !== 'boolean') add(here, 'must be true or false');
        break;
      case 'maximum':
      case 'minimum':
      case 'multipleOf':
        if (typeof v !== 'number') add(here, 'must be a number');
        break;
      case 'maxLength':
      case 'minLength':
      case 'maxItems':
      case 'minItems':
      case 'maxProperties':
      case 'minProperties':
        if (typeof v !== 'number' || !Number.isInteger(v)) add(here, 'must be an integer');
        break;
      case 'properties':
        if (!isJsonObject(v)) add(here, 'must be a mapping of schemas');
        break;
      case 'additionalProperties':
        if (!isJsonObject(v) && typeof v !== 'boolean') add(here, 'must be a schema or a boolean');
        break;
    }
  }
}

function isIntOrStringPair(list: Json | undefined): boolean {
  return (
    Array.isArray(list) &&
    list.length === 2 &&
    isJsonObject(list[0]) &&
    isJsonObject(list[1]) &&
    Object.keys(list[0]).join() === 'type' &&
    Object.keys(list[1]).join() === 'type' &&
    list[0].type === 'integer' &&
    list[1].type === 'string'
  );
}
