/**
 * A small builder for OpenAPI v3 (structural) schemas that is type-checked against the TypeScript
 * types in src/apis. `object<T>(props)` demands a schema for every field of `T` and nothing else,
 * each field's schema must describe that field's type, and a field is marked required exactly
 * when `T` declares it non-optional (wrap it in `required(...)`). So adding, renaming or retyping
 * a field in the types fails the type check until the CRD schema follows.
 */

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps that Bosun's CRDs use. */
export interface JSONSchemaProps {
  description?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  enum?: string[];
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps;
  anyOf?: JSONSchemaProps[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
}

/** A CEL rule the API server checks on a value (`self`); `message` says what is wrong. */
export interface ValidationRule {
  rule: string;
  message: string;
}

declare const describes: unique symbol;

/** A schema for values of type `T`. `T` exists only for the type checker. */
export interface Schema<T> {
  readonly json: JSONSchemaProps;
  readonly [describes]?: T;
  readonly isRequired?: false;
}

/** A schema for a field its parent object must have. */
export interface RequiredField<T> {
  readonly json: JSONSchemaProps;
  readonly [describes]?: T;
  readonly isRequired: true;
}

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** One schema per field of `T`: `required(...)` for non-optional fields, a plain schema for the rest. */
export type Props<T> = {
  [K in keyof T]-?: K extends RequiredKeys<T> ? RequiredField<T[K]> : Schema<NonNullable<T[K]>>;
};

export interface Options {
  description?: string;
}

function withDescription(json: JSONSchemaProps, opts?: Options): JSONSchemaProps {
  return opts?.description === undefined ? json : { description: opts.description, ...json };
}

export function required<T>(schema: Schema<T>): RequiredField<T> {
  return { json: schema.json, isRequired: true };
}

/** A string; `T` narrows it for fields typed as a union of strings without restricting values. */
export function string<T extends string = string>(
  opts?: Options & {
    pattern?: string;
    minLength?: number;
    maxLength?: number;
    format?: string;
    rules?: ValidationRule[];
  },
): Schema<T> {
  const json: JSONSchemaProps = { type: 'string' };
  if (opts?.format !== undefined) json.format = opts.format;
  if (opts?.pattern !== undefined) json.pattern = opts.pattern;
  if (opts?.minLength !== undefined) json.minLength = opts.minLength;
  if (opts?.maxLength !== undefined) json.maxLength = opts.maxLength;
  if (opts?.rules !== undefined) json['x-kubernetes-validations'] = opts.rules;
  return { json: withDescription(json, opts) };
}

/** A string that must be one of `values` (the API server rejects others). */
export function oneOf<const V extends string>(
  values: readonly V[],
  opts?: Options & { default?: V },
): Schema<V> {
  const json: JSONSchemaProps = { type: 'string', enum: [...values] };
  if (opts?.default !== undefined) json.default = opts.default;
  return { json: withDescription(json, opts) };
}

/** An RFC 3339 timestamp. */
export function time(opts?: Options): Schema<string> {
  return { json: withDescription({ type: 'string', format: 'date-time' }, opts) };
}

export function integer(
  opts?: Options & { format?: 'int32' | 'int64'; minimum?: number; maximum?: number; default?: number },
): Schema<number> {
  const json: JSONSchemaProps = { type: 'integer' };
  if (opts?.format !== undefined) json.format = opts.format;
  if (opts?.default !== undefined) json.default = opts.default;
  if (opts?.minimum !== undefined) json.minimum = opts.minimum;
  if (opts?.maximum !== undefined) json.maximum = opts.maximum;
  return { json: withDescription(json, opts) };
}

export function boolean(opts?: Options): Schema<boolean> {
  return { json: withDescription({ type: 'boolean' }, opts) };
}

/**
 * A list. `listType` says how server-side apply merges it: `atomic` (replaced whole), `set`
 * (unique scalars) or `map` (entries keyed by `mapKeys`, which must be unique).
 */
export function array<T>(
  items: Schema<T>,
  opts?: Options & { minItems?: number; maxItems?: number } & (
      { listType?: 'atomic' | 'set' } | { listType: 'map'; mapKeys: (keyof T & string)[] }
    ),
): Schema<T[]> {
  const json: JSONSchemaProps = { type: 'array', items: items.json };
  if (opts?.minItems !== undefined) json.minItems = opts.minItems;
  if (opts?.maxItems !== undefined) json.maxItems = opts.maxItems;
  if (opts?.listType !== undefined) json['x-kubernetes-list-type'] = opts.listType;
  if (opts?.listType === 'map') json['x-kubernetes-list-map-keys'] = opts.mapKeys;
  return { json: withDescription(json, opts) };
}

/** An object with arbitrary keys and values of one type (labels, annotations, node selectors). */
export function map<T>(values: Schema<T>, opts?: Options): Schema<Record<string, T>> {
  return { json: withDescription({ type: 'object', additionalProperties: values.json }, opts) };
}

/**
 * An object whose fields are all described. `preserveUnknownFields` keeps fields the schema does
 * not list (so a newer Bosun's additions to a status survive an older schema). `rules` are CEL
 * rules on the whole object, for what no single field can say (a union whose `type` names the
 * member that must be set, or "at least one of").
 */
export function object<T>(
  props: Props<T>,
  opts?: Options & { preserveUnknownFields?: boolean; default?: Partial<T>; rules?: ValidationRule[] },
): Schema<T> {
  const entries = Object.entries(props as Record<string, Schema<unknown> | RequiredField<unknown>>).sort(
    ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0),
  );
  const json: JSONSchemaProps = { type: 'object' };
  const requiredNames = entries.filter(([, s]) => s.isRequired === true).map(([name]) => name);
  if (requiredNames.length > 0) json.required = requiredNames;
  if (opts?.default !== undefined) json.default = opts.default;
  json.properties = Object.fromEntries(entries.map(([name, s]) => [name, s.json]));
  if (opts?.preserveUnknownFields === true) json['x-kubernetes-preserve-unknown-fields'] = true;
  if (opts?.rules !== undefined) json['x-kubernetes-validations'] = opts.rules;
  return { json: withDescription(json, opts) };
}

/**
 * An object whose fields the schema does not describe (kept as written): configuration another
 * party defines and checks, such as a bundle's.
 */
export function freeform<T extends Record<string, unknown>>(
  opts?: Options & { minProperties?: number },
): Schema<T> {
  const json: JSONSchemaProps = { type: 'object' };
  if (opts?.minProperties !== undefined) json.minProperties = opts.minProperties;
  json['x-kubernetes-preserve-unknown-fields'] = true;
  return { json: withDescription(json, opts) };
}
