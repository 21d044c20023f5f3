/**
 * Shared by the Operator and provided-API role tests: the sample operator's catalog with the
 * operator's API moved to a group of the test's own (so a test may delete the CRD, or have it
 * deleted, without touching any other test), installing it, and the real kubectl, run as the
 * test's admin or as another user (`--as`, the API server's impersonation).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../src/apis/meta.js';
import type {
  ClusterServiceVersion,
  InstallPlan,
  Operator,
  Subscription,
} from '../../../src/apis/operators.js';
import { eventually } from '../support.js';
import { create, get, list, mergePatch, Resources, subscription } from './support.js';

export const SamplePackage = 'bosun-sample';
const sampleGroup = 'sample.bosun.dev';
const catalogFile = join(import.meta.dirname, '../../../catalogs/bosun-samples/bosun-sample/catalog.yaml');
const dashboardCatalogFile = join(
  import.meta.dirname,
  '../../../catalogs/bosun-samples/bosun-sample-dashboard/catalog.yaml',
);

/** A group for one test's copy of the sample operator's API, e.g. `w3f2a91c0.sample.bosun.dev`. */
export function uniqueGroup(): string {
  return `w${randomBytes(4).toString('hex')}.${sampleGroup}`;
}

/**
 * The `bosun-sample` package of catalogs/bosun-samples (or the package of another catalog file,
 * such as bosun-sample-dashboard's) as a JSON stream, with every mention of the sample API group
 * (in the CRDs, CSVs, examples and `olm.gvk` properties, inline manifests decoded) moved to `group`.
 */
export async function sampleCatalogJson(group: string, file = catalogFile): Promise<string> {
  const docs = parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJSON() as KubeObject);
  const moved = (text: string) => text.replaceAll(sampleGroup, group);
  return docs
    .map((doc) => {
      const d = doc as { schema?: string; properties?: { type: string; value: unknown }[] };
      if (d.schema !== 'olm.bundle') return JSON.parse(moved(JSON.stringify(d))) as unknown;
      const properties = (d.properties ?? []).map((p) => {
        if (p.type !== 'olm.bundle.object') return JSON.parse(moved(JSON.stringify(p))) as unknown;
        const data = Buffer.from((p.value as { data: string }).data, 'base64').toString('utf8');
        return { ...p, value: { data: Buffer.from(moved(data)).toString('base64') } };
      });
      return { ...d, properties };
    })
    .map((d) => JSON.stringify(d))
    .join('\n');
}

/**
 * Both packages of catalogs/bosun-samples as a catalog ConfigMap's data, the sample API group
 * moved to `group`: for tests that install the newest bosun-sample on the shared control plane,
 * whose 0.2 CRD (it adds a field) would otherwise refuse any later install of 0.1.x elsewhere.
 */
export async function sampleCatalogsData(group: string): Promise<Record<string, string>> {
  return {
    'bosun-sample.json': await sampleCatalogJson(group),
    'bosun-sample-dashboard.json': await sampleCatalogJson(group, dashboardCatalogFile),
  };
}

export const crdName = (group: string) => `widgets.${group}`;

/** Subscribes to the sample operator from CatalogSource `testop` of the namespace. */
export async function subscribeSample(
  ns: string,
  spec: Partial<Subscription['spec']> = {},
): Promise<Subscription> {
  return create(
    Resources.Subscription,
    ns,
    subscription(ns, SamplePackage, { name: SamplePackage, source: 'testop', channel: 'stable', ...spec }),
  );
}

export function csvSucceeded(ns: string, name?: string, timeoutMs = 180_000): Promise<ClusterServiceVersion> {
  return eventually(
    `a Succeeded CSV${name ? ` ${name}` : ''} in ${ns}`,
    async () => {
      const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
      return csvs.find(
        (c) => (name === undefined || c.metadata.name === name) && c.status?.phase === 'Succeeded',
      );
    },
    timeoutMs,
  );
}

/** Approves the InstallPlan of `ns` that waits for approval and names `csv` (any CSV when not given). */
export async function approvePlan(ns: string, csv?: string): Promise<InstallPlan> {
  const plan = await eventually(
    `an InstallPlan waiting for approval in ${ns}`,
    async () =>
      (await list<InstallPlan>(Resources.InstallPlan, ns)).find(
        (p) =>
          p.status?.phase === 'RequiresApproval' &&
          (csv === undefined || p.spec.clusterServiceVersionNames.includes(csv)),
      ),
    120_000,
  );
  await mergePatch(Resources.InstallPlan, ns, plan.metadata.name!, { spec: { approved: true } });
  return plan;
}

export const operatorNameFor = (ns: string) => `${SamplePackage}.${ns}`;

export function getOperator(name: string): Promise<Operator | undefined> {
  return get<Operator>(Resources.Operator, '', name);
}

/** `kind/name` (or `kind/namespace/name`) of each component an Operator lists. */
export function refsOf(op: Operator | undefined): string[] {
  return (op?.status?.components?.refs ?? [])
    .map((r) => [r.kind, r.namespace, r.name].filter((x) => x).join('/'))
    .sort();
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program to completion with `input` on stdin. */
export function run(
  cmd: string,
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** The real kubectl against the test cluster, as its admin or, with `as`, as that user (impersonated). */
export function kubectl(args: string[], opts: { as?: string; input?: string } = {}): Promise<Run> {
  const identity = opts.as ? ['--as', opts.as] : [];
  return run('kubectl', ['--kubeconfig', inject('kubeconfig'), ...identity, ...args], { input: opts.input });
}
