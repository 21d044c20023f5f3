/**
 * A catalog bundle turned into the typed objects an install is made of. In a file-based catalog
 * a bundle carries its manifests as `olm.bundle.object` properties, each the base64 of one JSON
 * or YAML object. Decoding finds the single CSV, classifies every other object by kind, and
 * rejects what Bosun does not install, naming the bundle, the object and the field, with every
 * problem found in one pass.
 *
 * Manifests of API versions Kubernetes no longer serves (v1beta1 CRDs above all) are converted
 * to their successors (bundle/upgrade), and what each conversion changed becomes a warning of
 * the bundle, for the InstallPlan to report. OLM refuses such bundles on Kubernetes 1.22 and
 * later; Bosun installs them, on purpose.
 */
import { isDeepStrictEqual } from 'node:util';
import type { BundleDoc, BundleObjectProperty, Property } from '../apis/fbc.js';
import { PropertyType } from '../apis/fbc.js';
import type { ClusterServiceVersion } from '../apis/operators.js';
import { decodeClusterServiceVersion } from '../bundle/csv-schema.js';
import { CSVApiVersion } from '../bundle/manifest.js';
import { conversionWebhookCRDs, withoutUncallableConversion } from './crd-conversion.js';
import { upgradeManifest } from '../bundle/upgrade/index.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { validateInstallStrategy } from './csv.js';
import {
  apiVersionFor,
  InstallableKinds,
  type KindInfo,
  kindInfo,
  type Resource,
  splitApiVersion,
} from '../olm/kinds.js';
import { isBase64Alphabet } from '../util/base64.js';
import { parseYamlStream } from '../bundle/yaml.js';
import type { BundleManifests } from '../catalog/content/bundles.js';
import { isRecord } from '../util/record.js';

/** One object of a bundle other than its CSV. */
export interface BundleObject {
  group: string;
  version: string;
  kind: string;
  name: string;
  info: KindInfo;
  object: Resource;
  /** Where in the bundle it was read, for messages: `properties[3]` or `manifests/etcd.crd.yaml`. */
  at?: string;
}

/** A bundle ready to plan: its CSV and the objects installed beside it. */
export interface InstallableBundle {
  /** The bundle's name, which is also its CSV's name. */
  name: string;
  package: string;
  csv: ClusterServiceVersion;
  objects: BundleObject[];
  /**
   * The bundle's properties without its manifests, projected onto the CSV as the
   * `operatorframework.io/properties` annotation.
   */
  properties: Property[];
  /**
   * What decoding changed or noticed without refusing the bundle (e.g. a manifest of a removed
   * API version converted to its successor), for the InstallPlan to report.
   */
  warnings: Problem[];
}

/** A manifest before classification, and where it came from (for messages). */
export interface RawManifest {
  /** e.g. `properties[3]` or `manifests/etcd.crd.yaml`. */
  at: string;
  object: unknown;
}

/** Decodes a catalog bundle whose manifests are inline (`olm.bundle.object`). */
export function decodeBundle(doc: BundleDoc): Result<InstallableBundle> {
  const problems: Problem[] = [];
  const object = bundleLabel(doc.name);
  const raw: RawManifest[] = [];
  (doc.properties ?? []).forEach((p, i) => {
    if (p.type !== PropertyType.BundleObject) return;
    const decoded = decodeBundleObject(p as Property<BundleObjectProperty>, `properties[${i}]`, object);
    if (decoded.ok) raw.push(decoded.value);
    else problems.push(...decoded.errors);
  });
  if (raw.length === 0 && problems.length === 0) {
    return fail([
      {
        object,
        field: 'properties',
        message:
          doc.image === ''
            ? 'has no olm.bundle.object properties, so there is nothing to install'
            : `has no olm.bundle.object properties; its manifests are in the image ${doc.image}`,
      },
    ]);
  }
  const classified = classifyManifests(
    { name: doc.name, package: doc.package, properties: doc.properties ?? [] },
    raw,
  );
  if (!classified.ok) problems.push(...classified.errors);
  return problems.length > 0 ? fail(problems) : classified;
}

/** Decodes catalog bundles, each content once. */
export interface BundleDecoder {
  /**
   * The bundle decoded. Its manifests are read (`manifests.read`) only for content not decoded
   * before; when they cannot be read, the promise rejects with why.
   */
  decode(manifests: BundleManifests): Promise<Result<InstallableBundle>>;
}

/**
 * Decoding a big bundle (parsing every manifest, converting removed API versions) takes up to a
 * second, and an InstallPlan is planned again on every reconcile. The decoder keeps the latest
 * `capacity` outcomes, failures included, keyed by the digest of the bundle's content (see
 * src/catalog/content/bundles.ts), so a catalog that changes a bundle's content under the same
 * name has it decoded again. The manifests are read (asynchronously) only when the bundle is
 * decoded, so a cache hit reads nothing. What it returns is shared between callers and must not
 * be modified.
 */
export function bundleDecoder(
  opts: { capacity?: number; decode?: (doc: BundleDoc) => Result<InstallableBundle> } = {},
): BundleDecoder {
  const capacity = Math.max(1, opts.capacity ?? 16);
  const decode = opts.decode ?? decodeBundle;
  const cache = new Map<string, Result<InstallableBundle>>();
  return {
    async decode(manifests) {
      const key = manifests.digest;
      const hit = cache.get(key);
      if (hit !== undefined) {
        // Map order is the order of use: the first key is the least recently used.
        cache.delete(key);
        cache.set(key, hit);
        return hit;
      }
      const read = await manifests.read();
      // Unreadable content is not an outcome of the bundle's: it is not kept, and the caller retries.
      if (!read.ok) throw new Error(read.message);
      const decoded = decode(read.value);
      cache.set(key, decoded);
      if (cache.size > capacity) cache.delete(cache.keys().next().value as string);
      return decoded;
    },
  };
}

/**
 * Classifies manifests however they were read (inline properties, or a bundle image's
 * `manifests/` directory): exactly one CSV, every other object of a kind Bosun installs.
 */
export function classifyManifests(
  bundle: { name: string; package: string; properties: Property[] },
  manifests: RawManifest[],
): Result<InstallableBundle> {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const csvs: { at: string; object: Resource }[] = [];
  const objects: BundleObject[] = [];
  const seen = new Map<string, { at: string; object: Resource; converted: boolean }>();

  for (const m of manifests) {
    const checked = checkManifest(bundle.name, m);
    if (!checked.ok) {
      problems.push(...checked.errors);
      continue;
    }
    const { object: o, warnings: notes, converted } = checked.value;
    warnings.push(...notes);
    const key = `${o.kind}/${o.name}`;
    const first = seen.get(key);
    if (first !== undefined) {
      // Bundles made during the move off v1beta1 may ship an object in both versions; once
      // converted they are one object, applied once.
      if ((converted || first.converted) && isDeepStrictEqual(first.object, o.object)) {
        warnings.push({
          object: objectLabel(bundle.name, o.kind, o.name),
          field: 'metadata.name',
          message: `${m.at} is the same object as ${first.at} once converted; it is applied once`,
        });
        continue;
      }
      problems.push({
        object: objectLabel(bundle.name, o.kind, o.name),
        field: 'metadata.name',
        message: `${m.at} has the same kind and name as ${first.at}; each object must be unique`,
      });
      continue;
    }
    seen.set(key, { at: m.at, object: o.object, converted });
    if (o.info.phase === 'CSV') csvs.push({ at: m.at, object: o.object });
    else objects.push(o);
  }

  const csv = pickCSV(bundle.name, csvs, problems);
  if (problems.length > 0 || csv === undefined) return fail(problems);
  const filledByCSV = conversionWebhookCRDs(csv);
  const installed = objects.map((o) => {
    if (o.kind !== 'CustomResourceDefinition') return o;
    const { crd, warning } = withoutUncallableConversion(
      o.object,
      filledByCSV,
      objectLabel(bundle.name, o.kind, o.name),
    );
    if (warning) warnings.push(warning);
    return crd === o.object ? o : { ...o, object: crd };
  });
  return ok({
    name: bundle.name,
    package: bundle.package,
    csv,
    objects: installed,
    properties: bundle.properties.filter(
      (p) => p.type !== PropertyType.BundleObject && p.type !== PropertyType.CSVMetadata,
    ),
    warnings,
  });
}

function pickCSV(
  bundleName: string,
  csvs: { at: string; object: Resource }[],
  problems: Problem[],
): ClusterServiceVersion | undefined {
  const object = bundleLabel(bundleName);
  if (csvs.length === 0) {
    problems.push({
      object,
      field: 'properties',
      message: 'has no ClusterServiceVersion; a bundle needs one',
    });
    return undefined;
  }
  if (csvs.length > 1) {
    const where = csvs.map((c) => `${c.object.metadata.name} (${c.at})`).join(', ');
    problems.push({
      object,
      field: 'properties',
      message: `has ${csvs.length} ClusterServiceVersions: ${where}`,
    });
    return undefined;
  }
  const only = csvs[0] as { at: string; object: Resource };
  const label = objectLabel(bundleName, 'ClusterServiceVersion', only.object.metadata.name);
  const decoded = decodeClusterServiceVersion(only.object, only.at, label);
  if (!decoded.ok) {
    problems.push(...decoded.errors);
    return undefined;
  }
  const csv = decoded.value;
  if (csv.metadata.name !== bundleName) {
    problems.push({
      object: objectLabel(bundleName, 'ClusterServiceVersion', only.object.metadata.name),
      field: 'metadata.name',
      message: `must be the bundle's name, ${bundleName}`,
    });
  }
  problems.push(
    ...validateInstallStrategy(
      csv,
      objectLabel(bundleName, 'ClusterServiceVersion', only.object.metadata.name),
    ),
  );
  return csv;
}

function decodeBundleObject(
  p: Property<BundleObjectProperty>,
  at: string,
  object: string,
): Result<RawManifest> {
  const value = p.value as unknown;
  const data = isRecord(value) ? value.data : undefined;
  if (typeof data !== 'string') {
    const ref = isRecord(value) && typeof value.ref === 'string';
    return fail([
      {
        object,
        field: `${at}.value.data`,
        message: ref
          ? 'refers to a file (ref); only inline data can be installed from a catalog'
          : 'must be the base64 of a manifest',
      },
    ]);
  }
  const compact = data.replace(/\s+/g, '');
  if (!isBase64Alphabet(compact) || compact.length % 4 === 1) {
    return fail([{ object, field: `${at}.value.data`, message: 'is not valid base64' }]);
  }
  const text = Buffer.from(compact, 'base64').toString('utf8');
  // opm writes JSON, other tools YAML; the codec tells them apart as Kubernetes does.
  const parsed = parseYamlStream(text, `${object}, ${at}`);
  if (!parsed.ok) {
    return fail([
      { object, field: `${at}.value.data`, message: `is neither JSON nor YAML: ${parsed.problem.message}` },
    ]);
  }
  const docs = parsed.docs;
  if (docs.length === 0) {
    return fail([{ object, field: `${at}.value.data`, message: 'decodes to an empty manifest' }]);
  }
  if (docs.length !== 1) {
    return fail([
      {
        object,
        field: `${at}.value.data`,
        message: `decodes to ${docs.length} documents; each olm.bundle.object holds one`,
      },
    ]);
  }
  return ok({ at, object: docs[0]!.value });
}

/**
 * Checks one manifest's identity and kind, converts it if its API version was removed, and
 * normalises it to what an install applies. Returns what the conversion changed as warnings.
 */
function checkManifest(
  bundleName: string,
  m: RawManifest,
): Result<{ object: BundleObject; warnings: Problem[]; converted: boolean }> {
  const at = bundleLabel(bundleName);
  if (!isRecord(m.object)) {
    return fail([{ object: at, field: m.at, message: 'must be a Kubernetes object (a mapping)' }]);
  }
  const { apiVersion, kind } = m.object;
  const metadata = isRecord(m.object.metadata) ? m.object.metadata : {};
  const name = metadata.name;
  const label = objectLabel(
    bundleName,
    typeof kind === 'string' ? kind : '?',
    typeof name === 'string' ? name : '?',
  );
  const problems: Problem[] = [];
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    problems.push({ object: label, field: 'apiVersion', message: `must be set (${m.at})` });
  }
  if (typeof kind !== 'string' || kind === '') {
    problems.push({ object: label, field: 'kind', message: `must be set (${m.at})` });
  }
  if (typeof name !== 'string' || name === '') {
    problems.push({
      object: label,
      field: 'metadata.name',
      message: `must be set (${m.at}); generateName cannot be applied`,
    });
  }
  const warnings: Problem[] = [];
  let input = m.object;
  for (const field of ['labels', 'annotations'] as const) {
    const map = metadata[field];
    if (map === undefined || map === null) continue;
    // An empty value (`createdAt:` in YAML) is null; decoded into Go's map of strings it is "".
    const nulls = isRecord(map) ? Object.keys(map).filter((k) => map[k] === null) : [];
    const filled = nulls.length > 0 ? { ...(map as Record<string, unknown>) } : map;
    for (const k of nulls) (filled as Record<string, unknown>)[k] = '';
    if (!isStringMap(filled)) {
      problems.push({
        object: label,
        field: `metadata.${field}`,
        message: 'must map strings to strings (quote values like true or 1)',
      });
      continue;
    }
    if (nulls.length > 0) {
      input = { ...input, metadata: { ...(input.metadata as Record<string, unknown>), [field]: filled } };
      for (const k of nulls)
        warnings.push({ object: label, field: `metadata.${field}.${k}`, message: 'has no value; set to ""' });
    }
  }
  if (problems.length > 0) return fail(problems);
  if (kind === 'ClusterServiceVersion' && apiVersion !== CSVApiVersion) {
    // OLM finds the CSV by its kind and reads it into its own type, so the version it says it is
    // does not matter there; it is created as operators.coreos.com/v1alpha1.
    warnings.push({
      object: label,
      field: 'apiVersion',
      message: `${String(apiVersion)} is not where ClusterServiceVersion is served; installed as ${CSVApiVersion}`,
    });
    input = { ...input, apiVersion: CSVApiVersion };
  }

  const upgraded = upgradeManifest(input, { object: label });
  if (!upgraded.ok) return fail(upgraded.errors);
  const object = upgraded.value.object as Record<string, unknown>;
  const served = object.apiVersion as string;
  const { group, version } = splitApiVersion(served);
  const info = kindInfo(kind as string);
  if (info === undefined) {
    const supported = InstallableKinds.map((k) => k.kind).join(', ');
    return fail([
      {
        object: label,
        field: 'kind',
        message: `${kind} is not a kind Bosun installs from a bundle; supported: ${supported}`,
      },
    ]);
  }
  if (info.group !== group) {
    return fail([
      {
        object: label,
        field: 'apiVersion',
        message: `${apiVersion} is not where ${kind} is served; expected group ${info.group === '' ? 'core (v1)' : info.group}`,
      },
    ]);
  }
  if (info.versions !== undefined && !info.versions.includes(version)) {
    const use = info.versions.map((v) => apiVersionFor(info.group, v)).join(' or ');
    return fail([
      {
        object: label,
        field: 'apiVersion',
        message: `${served} is not a version Kubernetes serves ${kind} in; use ${use}`,
      },
    ]);
  }
  return ok({
    object: {
      group,
      version,
      kind: info.kind,
      name: name as string,
      info,
      object: normalise(object, name as string),
      at: m.at,
    },
    warnings: [...warnings, ...upgraded.value.warnings],
    converted: upgraded.value.from !== undefined,
  });
}

/**
 * Keeps what an apply should say about an object: its name, labels and annotations, and its
 * content. Status, uids, resource versions and timestamps in a bundle are leftovers of the
 * cluster it was exported from; the namespace is the install's, decided when planning.
 */
function normalise(obj: Record<string, unknown>, name: string): Resource {
  const { status: _status, metadata, apiVersion, kind, ...rest } = obj;
  const meta = isRecord(metadata) ? metadata : {};
  const out: Resource = { apiVersion: String(apiVersion), kind: String(kind), metadata: { name }, ...rest };
  if (isStringMap(meta.labels)) out.metadata.labels = { ...meta.labels };
  if (isStringMap(meta.annotations)) out.metadata.annotations = { ...meta.annotations };
  return out;
}

export function bundleLabel(bundleName: string): string {
  return `bundle ${bundleName}`;
}

export function objectLabel(bundleName: string, kind: string, name: string): string {
  return `bundle ${bundleName}, ${kind}/${name}`;
}

function isStringMap(v: unknown): v is Record<string, string> {
  return isRecord(v) && Object.values(v).every((x) => typeof x === 'string');
}
