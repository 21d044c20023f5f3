/**
 * A bundle as an FBC `olm.bundle` document, with its properties derived the way `opm render`
 * derives them (operator-registry's ObjectsAndPropertiesFromBundle):
 *
 * - `olm.package` {packageName, version}: from `properties.yaml` if it has one, else the package
 *   annotation and the CSV's `spec.version`;
 * - `olm.gvk`: every group/version/kind of every CRD in the bundle, the CSV's owned API services,
 *   and `olm.gvk` entries of `properties.yaml`;
 * - `olm.gvk.required`: the CSV's required CRDs (group from the `plural.group` name) and API
 *   services, and `olm.gvk` entries of `dependencies.yaml`;
 * - `olm.package.required` {packageName, versionRange}: `olm.package` entries of `dependencies.yaml`;
 * - everything else in `dependencies.yaml`/`properties.yaml` (`olm.constraint`, `olm.label`, ...),
 *   unchanged;
 * - the properties of the CSV's `olm.properties` annotation (a JSON list), read after
 *   `properties.yaml` as opm reads them: an `olm.gvk` there is provided, an `olm.package` there
 *   replaces the one derived, anything else is kept as it is (opm leaves the CSV's
 *   `operatorframework.io/properties` annotation to OLM at run time, and so does Bosun);
 * - `olm.bundle.object`: each manifest, base64 of its JSON;
 * - `olm.csv.metadata`: the CSV's descriptive fields, so catalog browsers need not decode objects.
 *
 * Properties are sorted by type then value, with the objects and the CSV metadata last, as opm
 * orders them (checked against operator-registry v1.48: the same properties and the same
 * `olm.bundle.object` bytes). Bosun adds `olm.csv.metadata`, which opm writes only when migrating
 * catalogs, because it serves package metadata from it without decoding the objects; opm
 * validates catalogs that have both.
 *
 * The `image` of a bundle read from a directory or archive is the empty string, as opm leaves it
 * for bundle directories: there is no image to point at, and the inline objects are the bundle.
 * An image reference can be set with `imageRefTemplate` (opm's `--image-ref-template`).
 */
import { imageReferenceError } from '../olm/image-reference.js';
import { join } from 'node:path';
import { type Bundle, BundleAnnotation, type KubeManifest } from '../apis/bundle.js';
import { type BundleDoc, type Property, PropertyType, type RelatedImage, Schema } from '../apis/fbc.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { goJson } from './gojson.js';
import { arr, crdGVKs, describe, isCRD, isCSV, rec, str } from './manifest.js';
import { isObject } from './yaml.js';

export interface RenderOptions {
  /** Package name for bundles without annotations (legacy package-manifest folders). */
  packageName?: string;
  /** The bundle's image reference; default `''`. */
  image?: string;
  /**
   * Builds the image reference from `{{.Package}}`, `{{.Name}}` and `{{.Version}}`, like opm's
   * `--image-ref-template`, e.g. `registry.example/bundles/{{.Package}}:v{{.Version}}`.
   */
  imageRefTemplate?: string;
}

/** Renders a (validated) bundle. Fails only when the facts a bundle document needs are missing. */
export function bundleToDoc(bundle: Bundle, opts: RenderOptions = {}): Result<BundleDoc> {
  const csvs = bundle.manifests.filter((m) => isCSV(m.object));
  const problems: Problem[] = [];
  if (csvs.length !== 1) {
    problems.push({
      file: bundle.source,
      message: `a bundle has exactly one ClusterServiceVersion, found ${csvs.length}`,
    });
    return fail(problems);
  }
  const csvManifest = csvs[0]!;
  const csv = csvManifest.object;
  const file = labelOf(bundle, csvManifest.file);
  const name = str(csv, 'metadata', 'name');
  const version = str(csv, 'spec', 'version');
  const pkg = opts.packageName ?? bundle.annotations[BundleAnnotation.Package];
  if (!name) problems.push({ file, object: describe(csv), field: 'metadata.name', message: 'is required' });
  if (!version) problems.push({ file, object: describe(csv), field: 'spec.version', message: 'is required' });
  if (!pkg) {
    problems.push({
      file: bundle.metadataFiles.annotations ?? bundle.source,
      field: `annotations.${BundleAnnotation.Package}`,
      message: 'the package name is required',
    });
  }
  if (problems.length || !name || !version || !pkg) return fail(problems);

  const image = opts.imageRefTemplate
    ? expandImageTemplate(opts.imageRefTemplate, { Package: pkg, Name: name, Version: version })
    : (opts.image ?? '');
  const invalid = invalidImageReferences(csv, image).map(({ field, message }) => ({
    file,
    object: describe(csv),
    field,
    message,
  }));
  if (invalid.length) return fail(invalid);
  const properties = deriveProperties(bundle, csv, pkg, version);
  const relatedImages = deriveRelatedImages(csv, image);
  const doc: BundleDoc = { schema: Schema.Bundle, name, package: pkg, image, properties };
  if (relatedImages.length) doc.relatedImages = relatedImages;
  return ok(doc);
}

/** How messages name a file of the bundle: a path for directories, `archive:path` for archives. */
export function labelOf(bundle: Pick<Bundle, 'source' | 'archive'>, rel: string): string {
  return bundle.archive ? `${bundle.source}:${rel}` : join(bundle.source, rel);
}

export function expandImageTemplate(
  template: string,
  data: { Package: string; Name: string; Version: string },
): string {
  return template.replace(/\{\{\s*\.(Package|Name|Version)\s*\}\}/g, (_, k: keyof typeof data) => data[k]);
}

interface GVKValue {
  group: string;
  kind: string;
  version: string;
}

// Go marshals these values in struct field order; building them in that order makes the
// sort by serialised value match opm's.
const gvk = (group: string, version: string, kind: string): GVKValue => ({ group, kind, version });

function deriveProperties(bundle: Bundle, csv: KubeManifest, pkg: string, version: string): Property[] {
  const provided = new Map<string, GVKValue>();
  const required = new Map<string, GVKValue>();
  const addGVK = (into: Map<string, GVKValue>, v: GVKValue) =>
    into.set(`${v.group}/${v.version}/${v.kind}`, v);
  let packageProp: Property | undefined;
  const others: Property[] = [];
  const packagesRequired: Property[] = [];

  // The CSV's `olm.properties` annotation comes after properties.yaml, as opm lists them.
  for (const p of [...bundle.properties, ...csvAnnotationProperties(csv).properties]) {
    if (p.type === PropertyType.GVK && isObject(p.value)) {
      addGVK(
        provided,
        gvk(String(p.value.group ?? ''), String(p.value.version ?? ''), String(p.value.kind ?? '')),
      );
    } else if (p.type === PropertyType.Package && isObject(p.value)) {
      packageProp = packageProperty(String(p.value.packageName ?? ''), String(p.value.version ?? ''));
    } else {
      others.push(p);
    }
  }
  for (const d of bundle.dependencies) {
    if (d.type === PropertyType.GVK && isObject(d.value)) {
      addGVK(
        required,
        gvk(String(d.value.group ?? ''), String(d.value.version ?? ''), String(d.value.kind ?? '')),
      );
    } else if (d.type === PropertyType.Package && isObject(d.value)) {
      packagesRequired.push({
        type: PropertyType.PackageRequired,
        value: {
          packageName: String(d.value.packageName ?? ''),
          versionRange: String(d.value.version ?? ''),
        },
      });
    } else {
      others.push(d);
    }
  }

  for (const m of bundle.manifests) {
    if (isCRD(m.object)) for (const g of crdGVKs(m.object)) addGVK(provided, gvk(g.group, g.version, g.kind));
  }
  for (const api of arr(csv, 'spec', 'apiservicedefinitions', 'owned') ?? []) {
    addGVK(provided, gvk(str(api, 'group') ?? '', str(api, 'version') ?? '', str(api, 'kind') ?? ''));
  }
  for (const crd of arr(csv, 'spec', 'customresourcedefinitions', 'required') ?? []) {
    const crdName = str(crd, 'name') ?? '';
    const dot = crdName.indexOf('.');
    if (dot < 0) continue; // validation reports it; opm refuses such a bundle
    addGVK(required, gvk(crdName.slice(dot + 1), str(crd, 'version') ?? '', str(crd, 'kind') ?? ''));
  }
  for (const api of arr(csv, 'spec', 'apiservicedefinitions', 'required') ?? []) {
    addGVK(required, gvk(str(api, 'group') ?? '', str(api, 'version') ?? '', str(api, 'kind') ?? ''));
  }

  const props: Property[] = [
    packageProp ?? packageProperty(pkg, version),
    ...[...provided.values()].map((value) => ({ type: PropertyType.GVK, value })),
    ...[...required.values()].map((value) => ({ type: PropertyType.GVKRequired, value })),
    ...packagesRequired,
    ...others,
  ];
  const objects: Property[] = bundle.manifests.map((m) => ({
    type: PropertyType.BundleObject,
    value: { data: Buffer.from(goJson(m.object)).toString('base64') },
  }));
  const metadata: Property = { type: PropertyType.CSVMetadata, value: csvMetadata(csv) };
  return [...sortProperties(dedupe(props)), ...sortProperties(dedupe(objects)), metadata];
}

/** The CSV annotation opm reads bundle properties from, besides `metadata/properties.yaml`. */
export const CSVPropertiesAnnotation = 'olm.properties';

/**
 * The properties a CSV declares in its `olm.properties` annotation: a JSON list of
 * `{type, value}`. opm skips an annotation that does not parse (with a warning in its log), and
 * so does rendering; bundle validation reports it.
 */
export function csvAnnotationProperties(csv: KubeManifest): { properties: Property[]; problem?: string } {
  const text = rec(csv, 'metadata', 'annotations')?.[CSVPropertiesAnnotation];
  if (text === undefined) return { properties: [] };
  let list: unknown;
  try {
    list = typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch (err) {
    return { properties: [], problem: `is not JSON: ${(err as Error).message}` };
  }
  if (list === null) return { properties: [] }; // Go reads JSON null as an empty list
  if (!Array.isArray(list) || !list.every((p) => isObject(p) && typeof p.type === 'string' && 'value' in p))
    return { properties: [], problem: 'is not a JSON list of {"type", "value"} properties' };
  return {
    properties: list.map((p: Record<string, unknown>) => ({ type: p.type as string, value: p.value })),
  };
}

const packageProperty = (packageName: string, version: string): Property => ({
  type: PropertyType.Package,
  value: { packageName, version },
});

/**
 * The serialised value opm sorts by. For `olm.bundle.object` that is `{"data":"<base64>"}`, which
 * orders exactly as the base64 text itself (every base64 character sorts after `"`), so the large
 * payloads are not serialised again just to be compared.
 */
function valueKey(p: Property): string {
  if (p.type === PropertyType.BundleObject && isObject(p.value) && typeof p.value.data === 'string')
    return p.value.data;
  return goJson(p.value);
}

export function sortProperties(props: Property[]): Property[] {
  const keyed = props.map((p) => ({ p, key: valueKey(p) }));
  keyed.sort((a, b) =>
    a.p.type !== b.p.type ? (a.p.type < b.p.type ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  return keyed.map((k) => k.p);
}

function dedupe(props: Property[]): Property[] {
  const seen = new Set<string>();
  return props.filter((p) => {
    const k = `${p.type}\0${valueKey(p)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The descriptive part of a CSV, as opm's `olm.csv.metadata` holds it (field order is Go's). */
export function csvMetadata(csv: KubeManifest): Record<string, unknown> {
  const spec = rec(csv, 'spec') ?? {};
  const meta = rec(csv, 'metadata') ?? {};
  const out: Record<string, unknown> = {};
  const put = (key: string, v: unknown) => {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) return;
    if (isObject(v) && Object.keys(v).length === 0) return;
    out[key] = v;
  };
  put('annotations', meta.annotations);
  out.apiServiceDefinitions = rec(spec, 'apiservicedefinitions') ?? {};
  out.crdDescriptions = rec(spec, 'customresourcedefinitions') ?? {};
  put('description', spec.description);
  put('displayName', spec.displayName);
  put('installModes', spec.installModes);
  put('keywords', spec.keywords);
  put('labels', meta.labels);
  put('links', spec.links);
  put('maintainers', spec.maintainers);
  put('maturity', spec.maturity);
  put('minKubeVersion', spec.minKubeVersion);
  put('nativeAPIs', spec.nativeAPIs);
  out.provider = rec(spec, 'provider') ?? {};
  return out;
}

/**
 * Every image reference that would become a related image and that opm's catalog loader would
 * refuse: a catalog holding one cannot be served, so the bundle is refused here, by field.
 */
export function invalidImageReferences(
  csv: KubeManifest,
  bundleImage: string,
): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  const check = (field: string, ref: string | undefined) => {
    const why = ref ? imageReferenceError(ref) : undefined;
    if (why) out.push({ field, message: `"${ref}" is not a valid image reference: ${why}` });
  };
  (arr(csv, 'spec', 'relatedImages') ?? []).forEach((ri, i) =>
    check(`spec.relatedImages[${i}].image`, str(ri, 'image')),
  );
  check('image', bundleImage);
  (arr(csv, 'spec', 'install', 'spec', 'deployments') ?? []).forEach((d, i) => {
    const podSpec = rec(d, 'spec', 'template', 'spec');
    for (const kind of ['initContainers', 'containers'] as const)
      (arr(podSpec, kind) ?? []).forEach((c, j) =>
        check(`spec.install.spec.deployments[${i}].spec.template.spec.${kind}[${j}].image`, str(c, 'image')),
      );
  });
  return out;
}

/**
 * `spec.relatedImages`, plus the bundle image and every image the install deployments run (also
 * init containers), each once, sorted by image, as opm lists them.
 */
function deriveRelatedImages(csv: KubeManifest, bundleImage: string): RelatedImage[] {
  const out: RelatedImage[] = [];
  const seen = new Set<string>();
  const add = (name: string, image: string) => {
    if (!image || seen.has(image)) return;
    seen.add(image);
    out.push({ name, image });
  };
  for (const ri of arr(csv, 'spec', 'relatedImages') ?? [])
    add(str(ri, 'name') ?? '', str(ri, 'image') ?? '');
  add('', bundleImage);
  for (const d of arr(csv, 'spec', 'install', 'spec', 'deployments') ?? []) {
    const podSpec = rec(d, 'spec', 'template', 'spec');
    for (const c of [...(arr(podSpec, 'initContainers') ?? []), ...(arr(podSpec, 'containers') ?? [])]) {
      add('', str(c, 'image') ?? '');
    }
  }
  return out.sort((a, b) => (a.image < b.image ? -1 : a.image > b.image ? 1 : 0));
}
