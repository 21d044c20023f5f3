/**
 * The runtime schemas of file-based catalog documents, checked once where a catalog is read
 * (load.ts), so that everything after loading works on checked types. They are written with the
 * CRD schema builder (src/apis/crds/schema.ts), which ties each schema to its type in
 * src/apis/fbc.ts: a field added to a type fails the type check until its schema follows.
 *
 * Like opm's loader, which refuses a document whose fields do not decode into its Go types, a
 * field of the wrong type fails loading; unknown fields are kept; a missing field that opm reads
 * as its Go zero value (an empty name, image or list) is given that value, for validation to
 * judge as opm's does. The values of the properties
 * OLM interprets (olm.package, olm.gvk, olm.gvk.required, olm.package.required) are checked too.
 * What a schema cannot say (names that must be set, references between documents, versions and
 * ranges that must parse, channel graphs) stays in validate.ts.
 *
 * The checking is done by the project's one ajv setup (src/apis/crds/check.ts), shared with the
 * check of ClusterServiceVersions where bundles are read.
 */
import {
  type BundleDoc,
  type ChannelDoc,
  type ChannelEntry,
  type DeprecationEntry,
  type DeprecationsDoc,
  type Icon,
  type OtherDoc,
  type PackageDoc,
  type Property,
  PropertyType,
  type RelatedImage,
  Schema as DocSchema,
} from '../apis/fbc.js';
import {
  array,
  object,
  oneOf,
  required,
  type RequiredField,
  type Schema,
  string,
} from '../apis/crds/schema.js';
import { compileSchema, fieldOf, schemaProblems } from '../apis/crds/check.js';

/** A field opm reads as `value` when it is missing (Go's zero value). */
function zero<T>(field: RequiredField<T>, value: T): RequiredField<T> {
  return { ...field, json: { ...field.json, default: value } };
}
const text = () => zero(required(string()), '');

/** Any value (a property's value, before its type says what it must be). */
const anything: Schema<unknown> = { json: {} };

const stringFields = (...names: string[]) => ({
  type: 'object',
  required: names,
  properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
});

/**
 * What each property type OLM interprets needs in its value. A bundle object's `data` (and
 * `ref`) is text, as opm decodes it into bytes from base64: anything else is refused here, at the
 * boundary, so no catalog can put a structure where Bosun keeps text (see payloads.ts).
 */
const propertyValues: Record<string, object> = {
  [PropertyType.BundleObject]: {
    type: 'object',
    properties: { data: { type: 'string' }, ref: { type: 'string' } },
  },
  [PropertyType.Package]: stringFields('packageName', 'version'),
  [PropertyType.GVK]: stringFields('group', 'version', 'kind'),
  [PropertyType.GVKRequired]: stringFields('group', 'version', 'kind'),
  [PropertyType.PackageRequired]: stringFields('packageName', 'versionRange'),
};

/**
 * A property: a type and a value, which for the types above must have their fields. (JSON
 * Schema's if/then is beyond the builder, so this one is written out.)
 */
const property: Schema<Property> = {
  json: {
    ...object<Property>({ type: text(), value: required(anything) }).json,
    ...({
      allOf: Object.entries(propertyValues).map(([type, value]) => ({
        if: { properties: { type: { const: type } }, required: ['type'] },
        then: { properties: { value } },
      })),
    } as object),
  },
};

const properties = array(property);

const icon = object<Icon>({ base64data: required(string()), mediatype: required(string()) });

export const packageSchema = object<PackageDoc>({
  schema: required(oneOf([DocSchema.Package])),
  name: text(),
  defaultChannel: string(),
  icon,
  description: string(),
  properties,
});

const entry = object<ChannelEntry>({
  name: text(),
  replaces: string(),
  skips: array(string()),
  skipRange: string(),
});

export const channelSchema = object<ChannelDoc>({
  schema: required(oneOf([DocSchema.Channel])),
  package: text(),
  name: text(),
  entries: zero(required(array(entry)), []),
  properties,
});

const relatedImage = object<RelatedImage>({ name: text(), image: text() });

export const bundleSchema = object<BundleDoc>({
  schema: required(oneOf([DocSchema.Bundle])),
  package: text(),
  name: text(),
  image: text(),
  properties: zero(required(properties), []),
  relatedImages: array(relatedImage),
});

const deprecationEntry = object<DeprecationEntry>({
  reference: required(
    object<DeprecationEntry['reference']>({
      schema: required(oneOf([DocSchema.Package, DocSchema.Channel, DocSchema.Bundle])),
      name: string(),
    }),
  ),
  message: text(),
});

export const deprecationsSchema = object<DeprecationsDoc>({
  schema: required(oneOf([DocSchema.Deprecations])),
  package: text(),
  entries: zero(required(array(deprecationEntry)), []),
});

/** Documents of other schemas are kept as they are; only what every document has is checked. */
const otherSchema: Schema<OtherDoc> = {
  json: {
    type: 'object',
    required: ['schema'],
    properties: { schema: { type: 'string' }, package: { type: 'string' }, name: { type: 'string' } },
  },
};

const compile = compileSchema;

/** One checker per schema, each a type guard; `errors` says what failed. */
export const checkDocument = {
  package: compile(packageSchema),
  channel: compile(channelSchema),
  bundle: compile(bundleSchema),
  deprecations: compile(deprecationsSchema),
  other: compile(otherSchema),
};

export { fieldOf, schemaProblems };
