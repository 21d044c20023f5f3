/**
 * A structural comparison of two CustomResourceDefinitions for the same kind: what one declares
 * that the other does not, field by field, and every rule the API server enforces or applies on
 * create (types, required, enums, defaults, formats, bounds, patterns, list and map types, CEL
 * rules, unknown-field preservation), plus the CRD-level settings users see (names, scope,
 * versions, printer columns, subresources). Descriptions are left out: they change nothing the
 * API server does. Pure: plain data in, a sorted list of differences out.
 */

/** An OpenAPI v3 schema node as found in any CRD (ours or someone else's), read loosely. */
export interface AnySchema {
  type?: string;
  properties?: Record<string, AnySchema>;
  items?: AnySchema;
  additionalProperties?: AnySchema | boolean;
  required?: string[];
  enum?: unknown[];
  [keyword: string]: unknown;
}

/** The parts of an apiextensions.k8s.io/v1 CustomResourceDefinition that the comparison reads. */
export interface CrdShape {
  spec: {
    group: string;
    scope: string;
    names: {
      kind: string;
      listKind?: string;
      plural: string;
      singular?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      deprecated?: boolean;
      schema?: { openAPIV3Schema?: AnySchema };
      subresources?: Record<string, unknown>;
      additionalPrinterColumns?: Record<string, unknown>[];
    }[];
  };
}

export const Aspect = {
  Names: 'names',
  Scope: 'scope',
  Version: 'version',
  PrinterColumns: 'printerColumns',
  Subresources: 'subresources',
  Field: 'field',
  Type: 'type',
  Required: 'required',
  Enum: 'enum',
  Default: 'default',
  PreserveUnknownFields: 'preserveUnknownFields',
  IntOrString: 'intOrString',
  Format: 'format',
  Pattern: 'pattern',
  Bounds: 'bounds',
  ListType: 'listType',
  MapType: 'mapType',
  Validations: 'validations',
  Nullable: 'nullable',
  Other: 'other',
} as const;
export type Aspect = (typeof Aspect)[keyof typeof Aspect];

/** One way the two CRDs differ. `ours`/`theirs` is undefined where that side has nothing. */
export interface CrdDifference {
  /** The version whose schema or settings differ; absent for CRD-wide settings. */
  version?: string;
  /**
   * Where, as a path into the object (`.spec.install.spec.deployments[].spec`, `{}` for map
   * values), or the CRD setting (`names.shortNames`, `v1alpha2`).
   */
  path: string;
  aspect: Aspect;
  ours: unknown;
  theirs: unknown;
}

const keywordAspect: Record<string, Aspect> = {
  type: Aspect.Type,
  anyOf: Aspect.Type,
  allOf: Aspect.Type,
  oneOf: Aspect.Type,
  not: Aspect.Type,
  enum: Aspect.Enum,
  default: Aspect.Default,
  'x-kubernetes-preserve-unknown-fields': Aspect.PreserveUnknownFields,
  'x-kubernetes-embedded-resource': Aspect.PreserveUnknownFields,
  'x-kubernetes-int-or-string': Aspect.IntOrString,
  format: Aspect.Format,
  pattern: Aspect.Pattern,
  minimum: Aspect.Bounds,
  maximum: Aspect.Bounds,
  exclusiveMinimum: Aspect.Bounds,
  exclusiveMaximum: Aspect.Bounds,
  minLength: Aspect.Bounds,
  maxLength: Aspect.Bounds,
  minItems: Aspect.Bounds,
  maxItems: Aspect.Bounds,
  minProperties: Aspect.Bounds,
  maxProperties: Aspect.Bounds,
  multipleOf: Aspect.Bounds,
  uniqueItems: Aspect.Bounds,
  'x-kubernetes-list-type': Aspect.ListType,
  'x-kubernetes-list-map-keys': Aspect.ListType,
  'x-kubernetes-map-type': Aspect.MapType,
  'x-kubernetes-validations': Aspect.Validations,
  nullable: Aspect.Nullable,
};

/** Keywords that carry no rule, or that the walk handles itself. */
const notCompared = new Set([
  'description',
  'title',
  'example',
  'externalDocs',
  'properties',
  'items',
  'additionalProperties',
  'required',
]);

/** Every difference between two CRDs for the same kind, sorted by version and path. */
export function compareCrds(ours: CrdShape, theirs: CrdShape): CrdDifference[] {
  const out: CrdDifference[] = [];
  const crdLevel = (path: string, aspect: Aspect, a: unknown, b: unknown) => {
    if (!deepEqual(a, b)) out.push({ path, aspect, ours: a, theirs: b });
  };
  const a = ours.spec;
  const b = theirs.spec;
  crdLevel('group', Aspect.Names, a.group, b.group);
  crdLevel('scope', Aspect.Scope, a.scope, b.scope);
  for (const key of ['kind', 'listKind', 'plural', 'singular'] as const) {
    crdLevel(`names.${key}`, Aspect.Names, a.names[key], b.names[key]);
  }
  crdLevel('names.shortNames', Aspect.Names, sortedSet(a.names.shortNames), sortedSet(b.names.shortNames));
  crdLevel('names.categories', Aspect.Names, sortedSet(a.names.categories), sortedSet(b.names.categories));

  const versionNames = [...new Set([...a.versions, ...b.versions].map((v) => v.name))].sort();
  for (const name of versionNames) {
    const va = a.versions.find((v) => v.name === name);
    const vb = b.versions.find((v) => v.name === name);
    const state = (v: typeof va) =>
      v === undefined
        ? undefined
        : { served: v.served, storage: v.storage, ...(v.deprecated ? { deprecated: true } : {}) };
    if (!deepEqual(state(va), state(vb))) {
      out.push({ version: name, path: name, aspect: Aspect.Version, ours: state(va), theirs: state(vb) });
    }
    if (!va || !vb) continue;
    const columns = (v: typeof va) =>
      (v.additionalPrinterColumns ?? []).map((c) => withoutKeys(c, ['description']));
    if (!deepEqual(columns(va), columns(vb))) {
      out.push({
        version: name,
        path: 'additionalPrinterColumns',
        aspect: Aspect.PrinterColumns,
        ours: columns(va),
        theirs: columns(vb),
      });
    }
    if (!deepEqual(va.subresources ?? {}, vb.subresources ?? {})) {
      out.push({
        version: name,
        path: 'subresources',
        aspect: Aspect.Subresources,
        ours: va.subresources,
        theirs: vb.subresources,
      });
    }
    for (const d of compareSchemas(va.schema?.openAPIV3Schema ?? {}, vb.schema?.openAPIV3Schema ?? {})) {
      out.push({ version: name, ...d });
    }
  }
  return out;
}

/** Every difference between two schemas, with paths relative to their roots (`''` is the root). */
export function compareSchemas(ours: AnySchema, theirs: AnySchema, path = ''): CrdDifference[] {
  const out: CrdDifference[] = [];
  walk(ours, theirs, path, out);
  return out.sort((x, y) => compareText(x.path, y.path) || compareText(x.aspect, y.aspect));
}

function walk(a: AnySchema, b: AnySchema, path: string, out: CrdDifference[]): void {
  const keywords = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !notCompared.has(k));
  for (const key of keywords.sort()) {
    // An enum is a set: the order of its values changes nothing.
    const norm = (v: unknown) => (key === 'enum' && Array.isArray(v) ? sortedSet(v) : v);
    const [va, vb] = [norm(a[key]), norm(b[key])];
    if (!deepEqual(va, vb)) {
      out.push({
        path,
        aspect: keywordAspect[key] ?? Aspect.Other,
        ours: key in a ? { [key]: va } : undefined,
        theirs: key in b ? { [key]: vb } : undefined,
      });
    }
  }
  const [ra, rb] = [sortedSet(a.required) ?? [], sortedSet(b.required) ?? []];
  if (!deepEqual(ra, rb)) out.push({ path, aspect: Aspect.Required, ours: ra, theirs: rb });

  const fields = [...new Set([...Object.keys(a.properties ?? {}), ...Object.keys(b.properties ?? {})])];
  for (const name of fields.sort(compareText)) {
    const fa = a.properties?.[name];
    const fb = b.properties?.[name];
    const at = `${path}.${name}`;
    if (fa && fb) walk(fa, fb, at, out);
    else out.push({ path: at, aspect: Aspect.Field, ours: fa && 'declared', theirs: fb && 'declared' });
  }
  if (a.items && b.items) walk(a.items, b.items, `${path}[]`, out);
  else if (a.items || b.items) {
    out.push({
      path: `${path}[]`,
      aspect: Aspect.Field,
      ours: a.items && 'declared',
      theirs: b.items && 'declared',
    });
  }
  const [pa, pb] = [a.additionalProperties, b.additionalProperties];
  if (typeof pa === 'object' && typeof pb === 'object') walk(pa, pb, `${path}{}`, out);
  else if (pa !== undefined || pb !== undefined) {
    const show = (p: typeof pa) => (typeof p === 'object' ? 'declared' : p);
    if (show(pa) !== show(pb)) {
      out.push({ path: `${path}{}`, aspect: Aspect.Field, ours: show(pa), theirs: show(pb) });
    }
  }
}

function sortedSet<T>(values: T[] | undefined): T[] | undefined {
  return values === undefined
    ? undefined
    : [...values].sort((x, y) => compareText(JSON.stringify(x), JSON.stringify(y)));
}

function withoutKeys(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
}

function compareText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** JSON equality: same type, same array order, same keys whatever their order. */
export function deepEqual(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  if (Array.isArray(x) && Array.isArray(y)) {
    return x.length === y.length && x.every((v, i) => deepEqual(v, y[i]));
  }
  const kx = Object.keys(x as object);
  const ky = Object.keys(y as object);
  return (
    kx.length === ky.length &&
    kx.every((k) =>
      Object.prototype.hasOwnProperty.call(y, k)
        ? deepEqual((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k])
        : false,
    )
  );
}
