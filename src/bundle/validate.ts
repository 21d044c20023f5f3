/**
 * Bundle validation: what `operator-sdk bundle validate` and OLM's install checks would refuse
 * (errors) or frown upon (warnings). One pass collects every problem, each naming its file,
 * object and field. Pure: a `Bundle` in, problems out.
 */
import {
  type Bundle,
  BundleAnnotation,
  type BundleManifest,
  BundleMediaType,
  CSVAnnotation,
  type KubeManifest,
  MaxManifestBytes,
} from '../apis/bundle.js';
import { type Property, PropertyType } from '../apis/fbc.js';
import { constraintProblems } from '../olm/constraint.js';
import { InstallableKinds } from '../olm/kinds.js';
import { csvEdgeProblems } from '../olm/csv-edges.js';
import { readInstallStrategy } from '../olm/install-strategy.js';
import { parseRange, parseVersion } from '../olm/version.js';
import { webhookDescriptionProblems } from '../olm/webhooks.js';
import type { Problem } from '../util/result.js';
import { unknownSchemaKeywords } from './crd-schema.js';
import { checkClusterServiceVersion } from './csv-schema.js';
import {
  arr,
  CRDApiVersions,
  CSVApiVersion,
  crdGVKs,
  describe,
  isCRD,
  isCSV,
  kindOf,
  nameOf,
  rec,
  str,
} from './manifest.js';
import { dns1123LabelError, dns1123SubdomainError } from './names.js';
import {
  csvAnnotationProperties,
  CSVPropertiesAnnotation,
  invalidImageReferences,
  labelOf,
} from './render.js';
import { isObject } from './yaml.js';

export interface Validation {
  errors: Problem[];
  warnings: Problem[];
}

export interface BundleValidationOptions {
  /**
   * The bundle came from a legacy package-manifest folder: it has no annotations (the package
   * file names package and channels), so annotation checks are skipped.
   */
  legacy?: boolean;
}

/** Kinds OLM knows how to install from a registry+v1 bundle: the kinds Bosun installs. */
export const SupportedKinds: ReadonlySet<string> = new Set(InstallableKinds.map((k) => k.kind));

export const InstallModeTypes = [
  'OwnNamespace',
  'SingleNamespace',
  'MultiNamespace',
  'AllNamespaces',
] as const;
export const DependencyTypes = [
  PropertyType.GVK,
  PropertyType.Package,
  PropertyType.Label,
  PropertyType.Constraint,
] as const;

/** Records problems against one file and object, so each check states only the field and message. */
class Report {
  constructor(readonly out: Validation) {}
  at(file: string | undefined, object?: string) {
    const add = (into: Problem[]) => (field: string | undefined, message: string) => {
      const p: Problem = { message };
      if (file) p.file = file;
      if (object) p.object = object;
      if (field) p.field = field;
      into.push(p);
    };
    return { error: add(this.out.errors), warn: add(this.out.warnings) };
  }
}

export function validateBundle(bundle: Bundle, opts: BundleValidationOptions = {}): Validation {
  // What reading left out (a manifest file's later documents) is a finding of validation too.
  const out: Validation = { errors: [], warnings: [...(bundle.warnings ?? [])] };
  const report = new Report(out);
  if (!opts.legacy) checkAnnotations(bundle, report);
  checkManifests(bundle, report);

  const csvs = bundle.manifests.filter((m) => isCSV(m.object));
  if (csvs.length === 0) {
    report
      .at(labelOf(bundle, 'manifests/'))
      .error(undefined, 'the bundle has no ClusterServiceVersion; it needs exactly one');
  } else if (csvs.length > 1) {
    const where = csvs.map((m) => `${m.file} (${describe(m.object)})`).join(', ');
    report
      .at(bundle.source)
      .error(
        undefined,
        `the bundle has ${csvs.length} ClusterServiceVersions, it needs exactly one: ${where}`,
      );
  }
  for (const csv of csvs) checkCSV(bundle, csv, report);
  for (const m of bundle.manifests) if (isCRD(m.object)) checkCRD(bundle, m, report);
  checkDependencies(bundle, report);
  checkProperties(bundle, report);
  return out;
}

function checkAnnotations(bundle: Bundle, report: Report): void {
  const file = bundle.metadataFiles.annotations;
  if (!file) return; // reading already failed without it
  const { error, warn } = report.at(file);
  const a = bundle.annotations;
  const field = (k: string) => `annotations.${k}`;
  const mediaType = a[BundleAnnotation.MediaType];
  if (mediaType === undefined)
    error(field(BundleAnnotation.MediaType), `is required (${BundleMediaType.RegistryV1})`);
  else if (mediaType !== BundleMediaType.RegistryV1) {
    error(
      field(BundleAnnotation.MediaType),
      `"${mediaType}" is not supported; Bosun installs ${BundleMediaType.RegistryV1} bundles`,
    );
  }
  const pkg = a[BundleAnnotation.Package];
  if (!pkg)
    error(field(BundleAnnotation.Package), 'is required: the name of the package the bundle belongs to');
  else {
    const bad = dns1123LabelError(pkg);
    if (bad) error(field(BundleAnnotation.Package), bad);
  }
  const channels = (a[BundleAnnotation.Channels] ?? '').split(',').map((c) => c.trim());
  if (!a[BundleAnnotation.Channels]) {
    error(
      field(BundleAnnotation.Channels),
      'is required: a comma-separated list of the channels the bundle is in',
    );
  } else if (channels.some((c) => c === '')) {
    error(field(BundleAnnotation.Channels), `"${a[BundleAnnotation.Channels]}" has an empty channel name`);
  }
  const def = a[BundleAnnotation.DefaultChannel];
  if (def !== undefined && a[BundleAnnotation.Channels] && !channels.includes(def)) {
    error(
      field(BundleAnnotation.DefaultChannel),
      `"${def}" is not one of the bundle's channels (${channels.join(', ')})`,
    );
  }
  if (def === undefined && channels.length > 1) {
    warn(field(BundleAnnotation.DefaultChannel), 'is not set although the bundle is in several channels');
  }
}

function checkManifests(bundle: Bundle, report: Report): void {
  for (const m of bundle.manifests) {
    const kind = kindOf(m.object) ?? '';
    const { error } = report.at(labelOf(bundle, m.file), describe(m.object));
    if (!SupportedKinds.has(kind)) {
      error(
        'kind',
        `${kind} is not supported in a registry+v1 bundle (supported: ${[...SupportedKinds].join(', ')})`,
      );
    }
    if (!nameOf(m.object)) error('metadata.name', 'is required');
    if (m.size > MaxManifestBytes) {
      error(
        undefined,
        `the object is ${m.size} bytes, over the limit of ${MaxManifestBytes} bytes (1 MiB) per object`,
      );
    }
  }
}

function checkCSV(bundle: Bundle, m: BundleManifest, report: Report): void {
  const csv = m.object;
  const file = labelOf(bundle, m.file);
  const { error, warn } = report.at(file, describe(csv));
  if (csv.apiVersion !== CSVApiVersion)
    error('apiVersion', `"${String(csv.apiVersion)}" must be ${CSVApiVersion}`);
  const name = nameOf(csv);
  if (name) {
    const bad = dns1123SubdomainError(name);
    if (bad) error('metadata.name', bad);
  }
  // The shape (what OLM's typed decoding cannot hold); what follows are OLM's own rules.
  for (const bad of checkClusterServiceVersion(csv, file, describe(csv)).errors)
    error(bad.field, bad.message);
  const annotated = csvAnnotationProperties(csv);
  if (annotated.problem) {
    warn(
      `metadata.annotations.${CSVPropertiesAnnotation}`,
      `${annotated.problem}; its properties are left out, as opm leaves them out`,
    );
  }
  // Field paths inside the annotation's JSON, after the annotation's own path.
  annotated.properties.forEach((p, i) =>
    checkTypedValue(p, `metadata.annotations.${CSVPropertiesAnnotation}[${i}].value`, error, 'property'),
  );
  const spec = rec(csv, 'spec');
  if (!spec) {
    error('spec', 'is required');
    return;
  }
  for (const bad of invalidImageReferences(csv, '')) error(bad.field, bad.message);
  const version = spec.version;
  if (version === undefined) error('spec.version', 'is required: the semver version of this bundle');
  else if (typeof version === 'string' && !parseVersion(version)) {
    error('spec.version', `"${version}" is not a semver version (like 1.2.3 or 1.2.3-rc.1)`);
  }
  for (const bad of csvEdgeProblems(csv, name)) error(bad.field, bad.message);
  checkInstallModes(spec, error);
  checkInstall(csv, error, warn);
  checkOwnedCRDs(bundle, spec, error);
  checkRequiredAPIs(spec, error);
  checkWebhooks(csv, error, warn);

  const minKube = spec.minKubeVersion;
  if (minKube !== undefined && (typeof minKube !== 'string' || !/^v?\d+\.\d+(\.\d+)?/.test(minKube))) {
    warn('spec.minKubeVersion', `"${String(minKube)}" is not a Kubernetes version like 1.21.0`);
  }
  const examples = str(csv, 'metadata', 'annotations', 'alm-examples');
  if (examples !== undefined) {
    try {
      if (!Array.isArray(JSON.parse(examples)))
        warn('metadata.annotations.alm-examples', 'should be a JSON list of example objects');
    } catch {
      warn('metadata.annotations.alm-examples', 'is not valid JSON');
    }
  }
  const props = str(csv, 'metadata', 'annotations', CSVAnnotation.Properties);
  if (props !== undefined) {
    try {
      JSON.parse(props);
    } catch {
      error(`metadata.annotations.${CSVAnnotation.Properties}`, 'is not valid JSON ({"properties": [...]})');
    }
  }
  if (!spec.displayName) warn('spec.displayName', 'is not set; catalogs show the package name instead');
  if (!spec.description)
    warn('spec.description', 'is not set; catalogs have nothing to describe the operator with');
  if (!Array.isArray(spec.icon) || spec.icon.length === 0)
    warn('spec.icon', 'is not set; catalogs show a placeholder');
  if (!str(spec, 'provider', 'name')) warn('spec.provider.name', 'is not set');
}

type Say = (field: string | undefined, message: string) => void;

/**
 * A field that is missing or empty, which OLM's decoding reads as "" and its rules refuse. (A
 * value of the wrong type is the CSV schema's to report, once.)
 */
function blank(o: unknown, field: string): boolean {
  const v = isObject(o) ? o[field] : undefined;
  return v === undefined || v === null || v === '';
}

function checkInstallModes(spec: Record<string, unknown>, error: Say): void {
  const modes = spec.installModes;
  if (!Array.isArray(modes) || modes.length === 0) {
    error(
      'spec.installModes',
      `is required: list which of ${InstallModeTypes.join(', ')} the operator supports`,
    );
    return;
  }
  const seen = new Set<string>();
  let supported = 0;
  modes.forEach((m, i) => {
    const type = str(m, 'type');
    if (type === undefined && !blank(m, 'type')) return; // not a string: the schema says so
    if (!type || !(InstallModeTypes as readonly string[]).includes(type)) {
      error(`spec.installModes[${i}].type`, `"${String(type)}" is not one of ${InstallModeTypes.join(', ')}`);
    } else if (seen.has(type)) error(`spec.installModes[${i}].type`, `${type} is listed twice`);
    else seen.add(type);
    // A missing `supported` is false, as OLM reads it; a wrong type is the schema's to report.
    if (isObject(m) && m.supported === true) supported++;
  });
  if (supported === 0)
    error('spec.installModes', 'no install mode is supported, so the operator cannot be installed');
}

/** Reports the kernel's install strategy problems, plus the naming rules of the objects it declares. */
function checkInstall(csv: KubeManifest, error: Say, warn: Say): void {
  const { problems } = readInstallStrategy(csv);
  for (const p of problems) (p.severity === 'warning' ? warn : error)(p.field, p.message);
  const details = rec(csv, 'spec', 'install', 'spec');
  const names = new Set<string>();
  (arr(details, 'deployments') ?? []).forEach((d, i) => {
    const at = `spec.install.spec.deployments[${i}]`;
    const name = str(d, 'name');
    const bad = name ? dns1123SubdomainError(name) : undefined;
    if (bad && !names.has(name!)) error(`${at}.name`, bad);
    if (name) names.add(name);
    (arr(d, 'spec', 'template', 'spec', 'containers') ?? []).forEach((c, j) => {
      const cname = str(c, 'name');
      const badName = cname ? dns1123LabelError(cname) : undefined;
      if (badName) error(`${at}.spec.template.spec.containers[${j}].name`, badName);
    });
  });
  for (const key of ['permissions', 'clusterPermissions'] as const) {
    (arr(details, key) ?? []).forEach((p, i) => {
      const sa = str(p, 'serviceAccountName');
      const bad = sa ? dns1123SubdomainError(sa) : undefined;
      if (bad) error(`spec.install.spec.${key}[${i}].serviceAccountName`, bad);
    });
  }
}

function checkOwnedCRDs(bundle: Bundle, spec: Record<string, unknown>, error: Say): void {
  const crds = new Map<string, KubeManifest>();
  for (const m of bundle.manifests)
    if (isCRD(m.object) && nameOf(m.object)) crds.set(nameOf(m.object)!, m.object);
  const owned = arr(spec, 'customresourcedefinitions', 'owned') ?? [];
  const ownedNames = new Set<string>();
  owned.forEach((o, i) => {
    const at = `spec.customresourcedefinitions.owned[${i}]`;
    const name = str(o, 'name');
    const version = str(o, 'version');
    const kind = str(o, 'kind');
    if (blank(o, 'name')) error(`${at}.name`, 'is required (plural.group, e.g. widgets.example.com)');
    if (blank(o, 'version')) error(`${at}.version`, 'is required');
    if (blank(o, 'kind')) error(`${at}.kind`, 'is required');
    if (!name) return;
    ownedNames.add(name);
    const crd = crds.get(name);
    if (!crd) {
      error(`${at}.name`, `the CSV owns CRD ${name} but the bundle does not contain it; add its manifest`);
      return;
    }
    const gvks = crdGVKs(crd);
    if (version && !gvks.some((g) => g.version === version)) {
      error(
        `${at}.version`,
        `CRD ${name} has no version ${version} (it has ${gvks.map((g) => g.version).join(', ')})`,
      );
    }
    if (kind && gvks.length && gvks[0]!.kind !== kind)
      error(`${at}.kind`, `CRD ${name} defines kind ${gvks[0]!.kind}, not ${kind}`);
  });
  for (const crdName of crds.keys()) {
    if (!ownedNames.has(crdName)) {
      error(
        'spec.customresourcedefinitions.owned',
        `CRD ${crdName} is in the bundle but the CSV does not list it as owned`,
      );
    }
  }
}

function checkRequiredAPIs(spec: Record<string, unknown>, error: Say): void {
  (arr(spec, 'customresourcedefinitions', 'required') ?? []).forEach((r, i) => {
    const at = `spec.customresourcedefinitions.required[${i}]`;
    const name = str(r, 'name');
    if (!name?.includes('.') && (name !== undefined || blank(r, 'name')))
      error(`${at}.name`, `"${String(name)}" must be plural.group, e.g. widgets.example.com`);
    if (blank(r, 'version')) error(`${at}.version`, 'is required');
    if (blank(r, 'kind')) error(`${at}.kind`, 'is required');
  });
  for (const side of ['owned', 'required'] as const) {
    (arr(spec, 'apiservicedefinitions', side) ?? []).forEach((a, i) => {
      const at = `spec.apiservicedefinitions.${side}[${i}]`;
      for (const f of ['group', 'version', 'kind', 'name'])
        if (blank(a, f)) error(`${at}.${f}`, 'is required');
      if (side === 'owned' && blank(a, 'deploymentName'))
        error(`${at}.deploymentName`, 'is required for an owned API service');
    });
  }
}

/** Reports the kernel's webhook description problems, plus the naming rule for `generateName`. */
function checkWebhooks(csv: KubeManifest, error: Say, warn: Say): void {
  for (const p of webhookDescriptionProblems(csv))
    (p.severity === 'warning' ? warn : error)(p.field, p.message);
  (arr(csv, 'spec', 'webhookdefinitions') ?? []).forEach((h, i) => {
    const gen = str(h, 'generateName');
    const bad = gen ? dns1123SubdomainError(gen) : undefined;
    if (bad) error(`spec.webhookdefinitions[${i}].generateName`, bad);
  });
}

function checkCRD(bundle: Bundle, m: BundleManifest, report: Report): void {
  const crd = m.object;
  const { error } = report.at(labelOf(bundle, m.file), describe(crd));
  if (!CRDApiVersions.includes(String(crd.apiVersion))) {
    error('apiVersion', `"${String(crd.apiVersion)}" must be one of ${CRDApiVersions.join(', ')}`);
  }
  const group = str(crd, 'spec', 'group');
  const plural = str(crd, 'spec', 'names', 'plural');
  if (!group) error('spec.group', 'is required');
  if (!plural) error('spec.names.plural', 'is required');
  if (!str(crd, 'spec', 'names', 'kind')) error('spec.names.kind', 'is required');
  const name = nameOf(crd);
  if (group && plural && name && name !== `${plural}.${group}`) {
    error('metadata.name', `must be ${plural}.${group} (spec.names.plural + "." + spec.group)`);
  }
  const isV1 = typeof crd.apiVersion === 'string' && crd.apiVersion === 'apiextensions.k8s.io/v1';
  const versions = arr(crd, 'spec', 'versions');
  if (isV1 || versions) {
    if (!versions || versions.length === 0) error('spec.versions', 'is required: at least one version');
    else {
      const storage = versions.filter((v) => isObject(v) && v.storage === true).length;
      if (storage !== 1)
        error('spec.versions', `exactly one version must have storage: true, found ${storage}`);
    }
  } else if (!str(crd, 'spec', 'version')) error('spec.version', 'is required (or spec.versions)');
  checkCRDSchemas(crd, isV1 ? error : report.at(labelOf(bundle, m.file), describe(crd)).warn);
}

/**
 * Unknown keywords in a schema: an error in an apiextensions.k8s.io/v1 CRD (the API server
 * refuses it), a warning in a legacy v1beta1 one, which Bosun never installs as it is.
 */
function checkCRDSchemas(crd: Record<string, unknown>, say: Say): void {
  const schemas: [unknown, string][] = [];
  const validation = (crd.spec as { validation?: { openAPIV3Schema?: unknown } } | undefined)?.validation;
  if (validation?.openAPIV3Schema)
    schemas.push([validation.openAPIV3Schema, 'spec.validation.openAPIV3Schema']);
  (arr(crd, 'spec', 'versions') ?? []).forEach((v, i) => {
    const schema = isObject(v) && isObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (schema) schemas.push([schema, `spec.versions[${i}].schema.openAPIV3Schema`]);
  });
  for (const [schema, at] of schemas) {
    for (const p of unknownSchemaKeywords(schema, at)) {
      say(
        p.field,
        `"${p.key}" is not a JSON-schema keyword; if it is meant as a property, indent it under "properties"`,
      );
    }
  }
}

function checkDependencies(bundle: Bundle, report: Report): void {
  const file = bundle.metadataFiles.dependencies;
  const { error } = report.at(file);
  bundle.dependencies.forEach((d, i) => {
    const at = `dependencies[${i}]`;
    if (!(DependencyTypes as readonly string[]).includes(d.type)) {
      error(`${at}.type`, `"${d.type}" is not a dependency type (${DependencyTypes.join(', ')})`);
      return;
    }
    checkTypedValue(d, `${at}.value`, error, 'dependency');
  });
}

function checkProperties(bundle: Bundle, report: Report): void {
  const { error } = report.at(bundle.metadataFiles.properties);
  bundle.properties.forEach((p, i) => {
    checkTypedValue(p, `properties[${i}].value`, error, 'property');
  });
}

/** Checks the value of a known property or dependency type. */
function checkTypedValue(p: Property, at: string, error: Say, role: 'dependency' | 'property'): void {
  const v = p.value;
  switch (p.type) {
    case PropertyType.GVK:
      if (
        !isObject(v) ||
        typeof v.kind !== 'string' ||
        !v.kind ||
        typeof v.version !== 'string' ||
        !v.version ||
        typeof v.group !== 'string'
      ) {
        error(at, 'an olm.gvk value needs group, version and kind');
      }
      return;
    case PropertyType.Package:
      if (!isObject(v) || typeof v.packageName !== 'string' || !v.packageName) {
        error(`${at}.packageName`, 'is required');
        return;
      }
      if (typeof v.version !== 'string') error(`${at}.version`, 'is required');
      else if (role === 'dependency') {
        const r = parseRange(v.version);
        if (!r.ok) error(`${at}.version`, r.message);
      } else if (!parseVersion(v.version)) error(`${at}.version`, `"${v.version}" is not a semver version`);
      return;
    case PropertyType.Label:
      if (!isObject(v) || typeof v.label !== 'string' || !v.label) error(`${at}.label`, 'is required');
      return;
    case PropertyType.Constraint:
      for (const bad of constraintProblems(v)) error(`${at}${bad.path}`, bad.message);
      return;
    default:
      if (v === undefined) error(at, 'is required');
  }
}
