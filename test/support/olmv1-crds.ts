/**
 * OLM v1's own CRDs, the oracle that Bosun's ClusterCatalog and ClusterExtension CRDs are checked
 * against. They are read from operator-controller's Go module (its CRD manifests under
 * config/base), fetched through the Go module proxy with `go mod download` as OLM v0's API module
 * is (test/support/olm-crds.ts): the module cache is the cache, nothing is copied into the
 * repository, and without Go or the proxy `loadOlmV1Crds` says why and tests skip with that reason.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type CrdDifference, deepEqual } from '../../src/apis/crds/compare.js';
import { type OlmV1Kind, V1Resources } from '../../src/apis/olmv1.js';
import { downloadGoModule, type OlmCrd } from './olm-crds.js';

/** The newest release the module proxy serves here. */
export const OperatorControllerModule = 'github.com/operator-framework/operator-controller';
export const OperatorControllerVersion = 'v1.2.0';

/** Where each kind's CRD is in the module. */
const crdFiles: Record<OlmV1Kind, string> = {
  ClusterCatalog: 'config/base/catalogd/crd/bases/olm.operatorframework.io_clustercatalogs.yaml',
  ClusterExtension:
    'config/base/operator-controller/crd/bases/olm.operatorframework.io_clusterextensions.yaml',
};

export type OlmV1Crds =
  { ok: true; moduleDir: string; crds: Record<OlmV1Kind, OlmCrd> } | { ok: false; reason: string };

let loading: Promise<OlmV1Crds> | undefined;

/** OLM v1's CRDs for ClusterCatalog and ClusterExtension, keyed by kind; loaded once per process. */
export function loadOlmV1Crds(): Promise<OlmV1Crds> {
  loading ??= load();
  return loading;
}

async function load(): Promise<OlmV1Crds> {
  const dir = await downloadGoModule(`${OperatorControllerModule}@${OperatorControllerVersion}`);
  if (!dir.ok) return dir;
  const crds = {} as Record<OlmV1Kind, OlmCrd>;
  for (const kind of Object.keys(V1Resources) as OlmV1Kind[]) {
    const file = join(dir.dir, crdFiles[kind]);
    let crd: OlmCrd;
    try {
      crd = parse(await readFile(file, 'utf8')) as OlmCrd;
    } catch (err) {
      return { ok: false, reason: `${file}: cannot read OLM v1's ${kind} CRD: ${(err as Error).message}` };
    }
    if (crd?.kind !== 'CustomResourceDefinition' || crd.spec?.names?.kind !== kind) {
      return { ok: false, reason: `${file}: expected the CustomResourceDefinition of ${kind}` };
    }
    crds[kind] = crd;
  }
  return { ok: true, moduleDir: dir.dir, crds };
}

/**
 * The deliberate differences between Bosun's v1 CRDs and OLM v1's, each with a line in the README.
 * As for v0 (olm-crds.ts), a difference passes only when exactly one allowance names it, and an
 * allowance that matches nothing fails the test.
 */
export interface V1Allowance {
  name: string;
  kinds?: OlmV1Kind[];
  path: string;
  aspect: CrdDifference['aspect'];
  ours: unknown;
  theirs: unknown;
}

export const v1CrdAllowances: V1Allowance[] = [
  {
    // As for v0's kinds: Bosun reports more than v1 (its rollback, its generated dependencies),
    // and a status written by a newer Bosun must survive an older schema.
    name: 'status keeps fields its schema does not list',
    path: '.status',
    aspect: 'preserveUnknownFields',
    ours: { 'x-kubernetes-preserve-unknown-fields': true },
    theirs: undefined,
  },
  // v1's later API has both, behind experimental gates; Bosun serves them without one.
  ...(['config', 'progressDeadlineMinutes'] as const).map((field) => ({
    name: `spec.${field}, from v1's later API`,
    kinds: ['ClusterExtension' as const],
    path: `.spec.${field}`,
    aspect: 'field' as const,
    ours: 'declared',
    theirs: undefined,
  })),
];

/** The CEL rules of those later fields, in Bosun's CRDs only (as `path: rule => message`). */
export const laterV1Rules: Partial<Record<OlmV1Kind, string[]>> = {
  ClusterExtension: [
    ".spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.config: has(self.configType) && self.configType == 'Inline' ?has(self.inline) : !has(self.inline) => inline is required when configType is Inline, and forbidden otherwise",
  ],
};

export function allowsV1(a: V1Allowance, kind: OlmV1Kind, d: CrdDifference): boolean {
  return (
    (a.kinds === undefined || a.kinds.includes(kind)) &&
    a.path === d.path &&
    a.aspect === d.aspect &&
    deepEqual(a.ours, d.ours) &&
    deepEqual(a.theirs, d.theirs)
  );
}
