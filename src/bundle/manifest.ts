/**
 * Reading fields of manifests that arrive as untyped JSON. Bundles are untrusted input: every
 * accessor checks the type it finds and returns undefined otherwise, so validation can say which
 * field is wrong instead of crashing on it.
 */
import type { KubeManifest } from '../apis/bundle.js';
import { isObject } from './yaml.js';
import { isBase64Alphabet } from '../util/base64.js';

export const Kind = {
  CSV: 'ClusterServiceVersion',
  CRD: 'CustomResourceDefinition',
} as const;

export function str(obj: unknown, ...path: string[]): string | undefined {
  const v = at(obj, path);
  return typeof v === 'string' ? v : undefined;
}

export function arr(obj: unknown, ...path: string[]): unknown[] | undefined {
  const v = at(obj, path);
  return Array.isArray(v) ? v : undefined;
}

export function rec(obj: unknown, ...path: string[]): Record<string, unknown> | undefined {
  const v = at(obj, path);
  return isObject(v) ? v : undefined;
}

export function at(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const key of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

export const kindOf = (m: KubeManifest): string | undefined =>
  typeof m.kind === 'string' ? m.kind : undefined;
export const nameOf = (m: KubeManifest): string | undefined => str(m, 'metadata', 'name');

/** `group` of an `apiVersion` (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** `Kind/name` for messages, e.g. `ClusterServiceVersion/etcdoperator.v0.9.4`. */
export function describe(m: KubeManifest): string {
  return `${kindOf(m) ?? '<no kind>'}/${nameOf(m) ?? '<no name>'}`;
}

/**
 * OLM recognises the CSV by kind alone (published bundles exist with a wrong apiVersion group);
 * bundle validation reports a wrong apiVersion.
 */
export function isCSV(m: KubeManifest): boolean {
  return kindOf(m) === Kind.CSV;
}

export function isCRD(m: KubeManifest): boolean {
  return kindOf(m) === Kind.CRD;
}

export const CSVApiVersion = 'operators.coreos.com/v1alpha1';
export const CRDApiVersions: readonly string[] = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'];

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** The group/versions/kind a CRD serves, for both apiextensions v1 and v1beta1. */
export function crdGVKs(crd: KubeManifest): GVK[] {
  const group = str(crd, 'spec', 'group');
  const kind = str(crd, 'spec', 'names', 'kind');
  if (group === undefined || kind === undefined) return [];
  const versions = new Set<string>();
  const single = str(crd, 'spec', 'version');
  if (single) versions.add(single);
  for (const v of arr(crd, 'spec', 'versions') ?? []) {
    const name = str(v, 'name');
    if (name) versions.add(name);
  }
  return [...versions].map((version) => ({ group, version, kind }));
}

/**
 * True when Go's encoding/json would decode `s` as a `[]byte` (standard base64 with padding; line
 * breaks are ignored). opm holds package icons that way and refuses a catalog with a bad one.
 */
export function isGoBase64(s: string): boolean {
  const t = s.replace(/[\r\n]/g, '');
  return t.length % 4 === 0 && isBase64Alphabet(t);
}

/**
 * The CSV's first icon as a package icon. Published CSVs sometimes carry base64 with stray
 * spaces; those are removed. An icon that is still not base64 is dropped, with the reason.
 */
export function csvIcon(csv: KubeManifest): {
  icon?: { base64data: string; mediatype: string };
  problem?: string;
} {
  const icon = arr(csv, 'spec', 'icon')?.[0];
  const data = str(icon, 'base64data');
  const mediatype = str(icon, 'mediatype');
  if (!data || !mediatype) return {};
  if (isGoBase64(data)) return { icon: { base64data: data, mediatype } };
  const cleaned = data.replace(/\s/g, '');
  if (isGoBase64(cleaned))
    return {
      icon: { base64data: cleaned, mediatype },
      problem: 'spec.icon[0].base64data has spaces in its base64; they were removed',
    };
  return { problem: 'spec.icon[0].base64data is not valid base64; the package has no icon' };
}
