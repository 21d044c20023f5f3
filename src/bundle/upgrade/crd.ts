/**
 * `apiextensions.k8s.io/v1beta1` CustomResourceDefinition → `v1`, the way the API server converts
 * a stored v1beta1 CRD (k8s.io/apiextensions-apiserver: v1beta1 defaults, then v1beta1 → internal
 * → v1), plus what a v1 create needs beyond that:
 *
 * 1. v1beta1's defaults first: `scope` Namespaced; `names.singular` the lowercased kind;
 *    `names.listKind` the kind + `List`; `versions` from `version` (served and storage);
 *    `conversion.strategy` None; a webhook's `conversionReviewVersions` [v1beta1]; a webhook
 *    service's `port` 443; `preserveUnknownFields` true.
 * 2. Top-level `validation`, `subresources`, `additionalPrinterColumns` (`JSONPath` → `jsonPath`)
 *    and `selectableFields` are copied into every version; `version` goes.
 * 3. `conversion.webhookClientConfig` and `conversionReviewVersions` move under
 *    `conversion.webhook` (`clientConfig`, `conversionReviewVersions`).
 * 4. v1 refuses `preserveUnknownFields: true` on create; the schema says it instead, at every
 *    object node (schema.ts). A version without a schema gets one that accepts any object.
 * 5. Schemas are repaired into structural ones (schema.ts); one that still breaks a v1 rule
 *    (structural.ts) is replaced by a schema that accepts and keeps any object, with a warning
 *    saying which validation is lost.
 * 6. A CRD in a group Kubernetes reserves (`*.k8s.io`, `*.kubernetes.io`) needs the
 *    `api-approved.kubernetes.io` annotation in v1 (v1beta1 did not ask); without one it gets the
 *    value that says it is unapproved.
 *
 * What a v1beta1 server would have refused too (a column without a type, both a top-level and a
 * per-version schema) is made acceptable and reported, rather than refused: the bundle was
 * published and may have been installed somewhere that did not check.
 */
import {
  childPath,
  cloneJson,
  describeJson,
  isJsonObject,
  type Json,
  type JsonObject,
  show,
} from './json.js';
import { anyObject, repairSchema, type SchemaNote } from './schema.js';
import { checkV1Schema } from './structural.js';

export const CRDv1beta1 = 'apiextensions.k8s.io/v1beta1';
export const CRDv1 = 'apiextensions.k8s.io/v1';
export const ApprovalAnnotation = 'api-approved.kubernetes.io';
export const UnapprovedValue = 'unapproved, converted from apiextensions.k8s.io/v1beta1';

export interface CRDConversion {
  object: JsonObject;
  notes: SchemaNote[];
  /** What no conversion can supply (a group, a kind, a storage version): the author must fix it. */
  errors: SchemaNote[];
}

const printerColumnTypes = new Set(['integer', 'number', 'string', 'boolean', 'date']);
const printerColumnFormats = new Set([
  'int32',
  'int64',
  'float',
  'double',
  'byte',
  'date',
  'date-time',
  'password',
]);

/** Converts a v1beta1 CRD (any other input is the caller's mistake). Pure; the input is not changed. */
export function convertCRD(input: JsonObject): CRDConversion {
  const notes: SchemaNote[] = [];
  const note = (field: string, message: string) => notes.push({ field, message });
  const crd = cloneJson(input);
  const spec: JsonObject = isJsonObject(crd.spec) ? crd.spec : {};
  const names: JsonObject = isJsonObject(spec.names) ? spec.names : {};
  const kind = typeof names.kind === 'string' ? names.kind : '';

  // 1. v1beta1 defaults.
  const scope = typeof spec.scope === 'string' && spec.scope !== '' ? spec.scope : 'Namespaced';
  if (!names.singular && kind) names.singular = kind.toLowerCase();
  if (!names.listKind && kind) names.listKind = `${kind}List`;
  const preserveUnknownFields = spec.preserveUnknownFields !== false;
  const rawVersions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const versions: JsonObject[] =
    rawVersions.length > 0
      ? rawVersions.map((v) => ({ ...v }))
      : typeof spec.version === 'string' && spec.version !== ''
        ? [{ name: spec.version, served: true, storage: true }]
        : [];
  if (typeof spec.version === 'string' && versions.length > 0 && versions[0]!.name !== spec.version) {
    note(
      'spec.version',
      `${spec.version} is not the first of spec.versions, as v1beta1 required; spec.versions is kept`,
    );
  }

  // 2. Top-level fields into every version.
  const topLevel = {
    validation: spec.validation,
    subresources: spec.subresources,
    additionalPrinterColumns: spec.additionalPrinterColumns,
    selectableFields: spec.selectableFields,
  };
  const statusIn = (v: JsonObject) => {
    const sub = isJsonObject(topLevel.subresources) ? topLevel.subresources : v.subresources;
    return isJsonObject(sub) && sub.status !== undefined && sub.status !== null;
  };
  const anyStatus = versions.some(statusIn);

  // The top-level schema is repaired once (its notes name it once), then copied.
  let topSchema: JsonObject | undefined;
  const topValidation = isJsonObject(topLevel.validation) ? topLevel.validation : undefined;
  if (topValidation?.openAPIV3Schema !== undefined && topValidation.openAPIV3Schema !== null) {
    topSchema = schemaFor(
      topValidation.openAPIV3Schema,
      'spec.validation.openAPIV3Schema',
      {
        preserveUnknownFields,
        statusSubresource: anyStatus,
      },
      note,
    );
  }
  const columns = Array.isArray(topLevel.additionalPrinterColumns)
    ? printerColumns(topLevel.additionalPrinterColumns, 'spec.additionalPrinterColumns', note)
    : undefined;

  const outVersions = versions.map((v, i): JsonObject => {
    const at = `spec.versions[${i}]`;
    const out: JsonObject = { name: v.name ?? '', served: v.served === true, storage: v.storage === true };
    if (v.deprecated === true) out.deprecated = true;
    if (typeof v.deprecationWarning === 'string') out.deprecationWarning = v.deprecationWarning;
    let schema: JsonObject;
    if (topSchema !== undefined) {
      if (v.schema !== undefined && v.schema !== null) {
        note(
          `${at}.schema`,
          'both a top-level and a per-version schema are set; the top-level one is used, as the API server converts',
        );
      }
      schema = cloneJson(topSchema);
    } else {
      const own = isJsonObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
      schema =
        own === undefined || own === null
          ? anyObject()
          : schemaFor(
              own,
              `${at}.schema.openAPIV3Schema`,
              { preserveUnknownFields, statusSubresource: statusIn(v) },
              note,
            );
    }
    out.schema = { openAPIV3Schema: schema };
    const subresources = isJsonObject(topLevel.subresources) ? topLevel.subresources : v.subresources;
    if (isJsonObject(subresources)) out.subresources = cloneJson(subresources);
    const cols =
      columns ??
      (Array.isArray(v.additionalPrinterColumns)
        ? printerColumns(v.additionalPrinterColumns, `${at}.additionalPrinterColumns`, note)
        : undefined);
    if (cols !== undefined && cols.length > 0) out.additionalPrinterColumns = cloneJson(cols);
    const selectable = Array.isArray(topLevel.selectableFields)
      ? topLevel.selectableFields
      : v.selectableFields;
    if (Array.isArray(selectable) && selectable.length > 0) out.selectableFields = cloneJson(selectable);
    return out;
  });

  // 3. Conversion.
  const conversion = convertConversion(spec.conversion, note);

  const outSpec: JsonObject = { group: spec.group ?? '', names, scope, versions: outVersions, conversion };
  const out: JsonObject = { ...crd, apiVersion: CRDv1, spec: outSpec };
  // 6. The approval protected groups need in v1.
  if (typeof spec.group === 'string' && isProtectedGroup(spec.group)) approve(out, note);
  return { object: out, notes, errors: unfixable(spec, names, outVersions) };
}

/** What the API server would refuse in any version, and no conversion can make up. */
function unfixable(spec: JsonObject, names: JsonObject, versions: JsonObject[]): SchemaNote[] {
  const errors: SchemaNote[] = [];
  const missing = (field: string, what: string) =>
    errors.push({ field, message: `is required; set ${what}` });
  if (typeof spec.group !== 'string' || spec.group === '')
    missing('spec.group', 'the API group of the resource');
  if (typeof names.kind !== 'string' || names.kind === '')
    missing('spec.names.kind', 'the kind of the resource');
  if (typeof names.plural !== 'string' || names.plural === '')
    missing('spec.names.plural', 'the plural resource name');
  if (versions.length === 0) {
    missing('spec.versions', 'spec.versions (or spec.version) with at least one version');
    return errors;
  }
  versions.forEach((v, i) => {
    if (typeof v.name !== 'string' || v.name === '') missing(`spec.versions[${i}].name`, 'the version name');
  });
  const storage = versions.filter((v) => v.storage === true).length;
  if (storage !== 1) {
    errors.push({
      field: 'spec.versions',
      message: `${storage} versions are marked storage; mark exactly one version storage: true`,
    });
  }
  return errors;
}

/** A version's schema, repaired, or the fallback with a note saying what validation is lost. */
function schemaFor(
  raw: Json,
  at: string,
  opts: { preserveUnknownFields: boolean; statusSubresource: boolean },
  note: (field: string, message: string) => void,
): JsonObject {
  const repaired = repairSchema(raw, at, opts);
  const violations = checkV1Schema(repaired.schema, at, opts);
  if (violations.length === 0) {
    for (const n of repaired.notes) note(n.field, n.message);
    return repaired.schema;
  }
  const listed = violations
    .slice(0, 3)
    .map((v) => `${v.field}: ${v.message}`)
    .join('; ');
  const more = violations.length > 3 ? ` and ${violations.length - 3} more` : '';
  note(
    at,
    `cannot be made a structural schema (${listed}${more}); objects of this version are no longer validated, and every field is kept`,
  );
  return anyObject();
}

function printerColumns(
  raw: Json[],
  at: string,
  note: (field: string, message: string) => void,
): JsonObject[] {
  const out: JsonObject[] = [];
  raw.forEach((c, i) => {
    const here = `${at}[${i}]`;
    if (!isJsonObject(c)) {
      note(here, `is ${describeJson(c)}, not a column; dropped`);
      return;
    }
    const jsonPath = c.JSONPath ?? c.jsonPath;
    const problem =
      typeof c.name !== 'string' || c.name === ''
        ? 'has no name'
        : typeof c.type !== 'string' || !printerColumnTypes.has(c.type)
          ? `type ${JSON.stringify(c.type) ?? '(unset)'} is not one of ${[...printerColumnTypes].join(', ')}`
          : typeof jsonPath !== 'string' || !jsonPath.startsWith('.')
            ? `JSONPath ${JSON.stringify(jsonPath) ?? '(unset)'} is not a simple path starting with "."`
            : undefined;
    if (problem !== undefined) {
      note(here, `${problem}; the column was dropped`);
      return;
    }
    const col: JsonObject = { name: c.name!, type: c.type!, jsonPath: jsonPath! };
    if (typeof c.format === 'string' && c.format !== '') {
      if (printerColumnFormats.has(c.format)) col.format = c.format;
      else note(childPath(here, 'format'), `${c.format} is not a column format; dropped`);
    }
    if (typeof c.description === 'string' && c.description !== '') col.description = c.description;
    if (typeof c.priority === 'number' && Number.isInteger(c.priority) && c.priority !== 0)
      col.priority = c.priority;
    out.push(col);
  });
  return out;
}

function convertConversion(
  raw: Json | undefined,
  note: (field: string, message: string) => void,
): JsonObject {
  const c = isJsonObject(raw) ? raw : {};
  const strategy = typeof c.strategy === 'string' && c.strategy !== '' ? c.strategy : 'None';
  if (strategy !== 'Webhook') {
    if (c.webhookClientConfig !== undefined || c.conversionReviewVersions !== undefined) {
      note('spec.conversion', 'webhook settings without strategy Webhook are not allowed; dropped');
    }
    if (strategy !== 'None')
      note('spec.conversion.strategy', `${strategy} is not None or Webhook; None is used`);
    return { strategy: 'None' };
  }
  // v1beta1 refused a webhook beside preserveUnknownFields: true; v1 has no such field (the
  // schema keeps unknown fields instead), so the webhook the author declared is kept.
  const webhook: JsonObject = {
    conversionReviewVersions:
      Array.isArray(c.conversionReviewVersions) && c.conversionReviewVersions.length > 0
        ? c.conversionReviewVersions
        : ['v1beta1'],
  };
  if (isJsonObject(c.webhookClientConfig)) {
    const cc = cloneJson(c.webhookClientConfig);
    if (isJsonObject(cc.service) && cc.service.port === undefined) cc.service.port = 443;
    webhook.clientConfig = cc;
  }
  return { strategy: 'Webhook', webhook };
}

/** Groups Kubernetes reserves for its own APIs (apihelpers.IsProtectedCommunityGroup). */
export function isProtectedGroup(group: string): boolean {
  return (
    group === 'k8s.io' ||
    group === 'kubernetes.io' ||
    group.endsWith('.k8s.io') ||
    group.endsWith('.kubernetes.io')
  );
}

function approve(crd: JsonObject, note: (field: string, message: string) => void): void {
  const metadata: JsonObject = isJsonObject(crd.metadata) ? crd.metadata : {};
  crd.metadata = metadata;
  const annotations: JsonObject = isJsonObject(metadata.annotations) ? metadata.annotations : {};
  const value = annotations[ApprovalAnnotation];
  // The API server accepts "unapproved..." or a URL (Go's url.ParseRequestURI: absolute, or a path).
  if (
    typeof value === 'string' &&
    (value.startsWith('unapproved') || /^([a-z][a-z0-9+.-]*:|\/)\S*$/i.test(value))
  )
    return;
  metadata.annotations = { ...annotations, [ApprovalAnnotation]: UnapprovedValue };
  note(
    `metadata.annotations["${ApprovalAnnotation}"]`,
    `group ${show((crd.spec as JsonObject).group)} is reserved for Kubernetes APIs; v1 needs this annotation, so it says "${UnapprovedValue}"`,
  );
}
