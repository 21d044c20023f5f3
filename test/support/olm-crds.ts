/**
 * OLM's own CRDs, the oracle that Bosun's CRDs are checked against. They are read from the Go
 * module github.com/operator-framework/api (folder `crds/`), fetched through the Go module proxy
 * with `go mod download`; the Go module cache is the cache, so only the first run goes to the
 * network (about a second) and nothing is copied into the repository. Without Go or the proxy,
 * `loadOlmCrds` says why, and tests skip with that reason.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { type CrdDifference, type CrdShape, deepEqual } from '../../src/apis/crds/compare.js';
import { Resources, type OperatorsKind } from '../../src/apis/operators.js';

/** The API module of OLM v0.46.0 (its go.mod requires this version). */
export const OlmApiModule = 'github.com/operator-framework/api';
export const OlmApiVersion = 'v0.45.0';

/** A CRD as OLM publishes it: the comparable shape plus everything else in the file. */
export type OlmCrd = CrdShape & { apiVersion: string; kind: string; metadata: { name: string } };

export type OlmCrds =
  { ok: true; moduleDir: string; crds: Record<OperatorsKind, OlmCrd> } | { ok: false; reason: string };

let loading: Promise<OlmCrds> | undefined;

/** OLM's CRDs for the kinds Bosun serves (every one of `Resources`), keyed by kind; loaded once per process. */
export function loadOlmCrds(): Promise<OlmCrds> {
  loading ??= load();
  return loading;
}

async function load(): Promise<OlmCrds> {
  const dir = await downloadGoModule(`${OlmApiModule}@${OlmApiVersion}`);
  if (!dir.ok) return dir;
  const crds = {} as Record<OperatorsKind, OlmCrd>;
  for (const [kind, res] of Object.entries(Resources) as [
    OperatorsKind,
    (typeof Resources)[OperatorsKind],
  ][]) {
    const file = join(dir.dir, 'crds', `${res.group}_${res.plural}.yaml`);
    let crd: OlmCrd;
    try {
      crd = parse(await readFile(file, 'utf8')) as OlmCrd;
    } catch (err) {
      return { ok: false, reason: `${file}: cannot read OLM's ${kind} CRD: ${(err as Error).message}` };
    }
    if (crd?.kind !== 'CustomResourceDefinition' || crd.spec?.names?.kind !== kind) {
      return { ok: false, reason: `${file}: expected the CustomResourceDefinition of ${kind}` };
    }
    crds[kind] = crd;
  }
  return { ok: true, moduleDir: dir.dir, crds };
}

/**
 * `go mod download -json module@version` prints the module's folder in the module cache (also
 * used for OLM v1's CRDs, test/support/olmv1-crds.ts).
 */
export async function downloadGoModule(
  target: string,
): Promise<{ ok: true; dir: string } | { ok: false; reason: string }> {
  let stdout: string;
  try {
    // Outside any Go module or workspace, so the project's own go.mod files play no part.
    ({ stdout } = await promisify(execFile)('go', ['mod', 'download', '-json', target], {
      cwd: tmpdir(),
      env: { ...process.env, GOWORK: 'off', GOFLAGS: '-mod=mod' },
      timeout: 300_000,
      maxBuffer: 1024 * 1024,
    }));
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === 'ENOENT')
      return { ok: false, reason: `Go is not installed (no "go" on PATH), needed to fetch ${target}` };
    // With -json, go reports a failed download in the Error field of its output.
    const reported = safeJson(e.stdout)?.Error ?? e.stderr?.trim() ?? e.message;
    return { ok: false, reason: `cannot fetch ${target} through the Go module proxy: ${String(reported)}` };
  }
  const info = safeJson(stdout);
  if (typeof info?.Dir !== 'string') {
    return {
      ok: false,
      reason: `go mod download ${target} did not say where the module is: ${stdout.slice(0, 200)}`,
    };
  }
  return { ok: true, dir: info.Dir };
}

function safeJson(text: string | undefined): Record<string, unknown> | undefined {
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The deliberate differences between Bosun's CRDs and OLM's. Each has a line in the README
// ("Where Bosun's CRDs differ from OLM's"). The parity tests accept a difference only when exactly
// one allowance names it, and fail when an allowance no longer matches anything, so the list stays
// exact.

export interface Allowance {
  name: string;
  /** Which kinds it covers; every kind when absent. */
  kinds?: OperatorsKind[];
  path: string;
  aspect: CrdDifference['aspect'];
  /** What Bosun's CRD has there, exactly (checked, so a change to the difference is noticed). */
  ours: unknown;
  theirs: unknown;
}

export const crdAllowances: Allowance[] = [
  {
    name: 'status keeps fields its schema does not list',
    path: '.status',
    aspect: 'preserveUnknownFields',
    ours: { 'x-kubernetes-preserve-unknown-fields': true },
    theirs: undefined,
  },
  {
    name: 'installPlanApproval is Automatic or Manual',
    kinds: ['Subscription'],
    path: '.spec.installPlanApproval',
    aspect: 'enum',
    ours: { enum: ['Automatic', 'Manual'] },
    theirs: undefined,
  },
  {
    name: 'an InstallPlan approval is Automatic or Manual',
    kinds: ['InstallPlan'],
    path: '.spec.approval',
    aspect: 'enum',
    ours: { enum: ['Automatic', 'Manual'] },
    theirs: undefined,
  },
  {
    // The accepted values are the same: the integration test sends both CRDs the same releases.
    name: 'spec.release is checked by a rule of Bosun’s own wording',
    kinds: ['ClusterServiceVersion'],
    path: '.spec.release',
    aspect: 'validations',
    ours: 'any',
    theirs: 'any',
  },
  {
    name: 'a Subscription remembers the versions it installed',
    kinds: ['Subscription'],
    path: '.status.history',
    aspect: 'field',
    ours: 'declared',
    theirs: undefined,
  },
  {
    name: 'a Subscription shows its last rollback',
    kinds: ['Subscription'],
    path: '.status.rollback',
    aspect: 'field',
    ours: 'declared',
    theirs: undefined,
  },
  {
    name: 'a Subscription names the versions it holds back',
    kinds: ['Subscription'],
    path: '.status.heldBack',
    aspect: 'field',
    ours: 'declared',
    theirs: undefined,
  },
  {
    name: 'an InstallPlan summarises what it will do',
    kinds: ['InstallPlan'],
    path: '.status.summary',
    aspect: 'field',
    ours: 'declared',
    theirs: undefined,
  },
];

export function allows(a: Allowance, kind: OperatorsKind, d: CrdDifference): boolean {
  return (
    (a.kinds === undefined || a.kinds.includes(kind)) &&
    a.path === d.path &&
    a.aspect === d.aspect &&
    (a.ours === 'any' || deepEqual(a.ours, d.ours)) &&
    (a.theirs === 'any' || deepEqual(a.theirs, d.theirs))
  );
}
