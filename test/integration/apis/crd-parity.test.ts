/**
 * Bosun's CRDs accept exactly what OLM's accept, on the real API server. OLM's published CRDs
 * (test/support/olm-crds.ts) are installed next to Bosun's under another group, `olm.oracle.test`,
 * and the same objects are sent to both as OLM sends them: a plain create (here a server-side dry
 * run). Both must accept or both refuse, refusing the same fields; where both accept, the object
 * the API server would store (pruned and defaulted, with its managed fields) must be the same but
 * for the group. Every CSV of the 2021 OperatorHub corpus is checked (BOSUN_CORPUS_DIR), then the
 * other kinds' real manifests and the named allowances, which must behave as the README says.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deepEqual } from '../../../src/apis/crds/compare.js';
import type { KubeObject } from '../../../src/apis/meta.js';
import { type OperatorsKind, Resources } from '../../../src/apis/operators.js';
import type { KubeManifest } from '../../../src/apis/bundle.js';
import { isPackageManifestDir, readPackageManifestDir } from '../../../src/bundle/package-manifest.js';
import { readBundleDir } from '../../../src/bundle/read.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { installCrds } from '../../../src/kube/crds.js';
import { parseApiError } from '../../../src/kube/errors.js';
import { configureProperties, runs } from '../../support/properties.js';
import { loadOlmCrds, OlmApiModule, OlmApiVersion, type OlmCrd } from '../../support/olm-crds.js';
import { connect, installOperatorCrds } from '../kube/helpers.js';
import { freshNamespace } from '../support.js';

// The unit tests' fixed seed (and exploring scale), so the release property is reproducible too.
configureProperties();

const OracleGroup = 'olm.oracle.test';
/** The field of the API server's note that CEL rules were skipped because the object was invalid. */
const noField = '<nil>';
const BosunGroup = Resources.ClusterServiceVersion.group;

const olm = await loadOlmCrds();
if (!olm.ok) console.warn(`skipping the parity of Bosun's CRDs with OLM's on a cluster: ${olm.reason}`);
const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus) {
  console.warn(
    'skipping the OperatorHub corpus CSVs against both CRDs: set BOSUN_CORPUS_DIR to ' +
      'shared/corpus/operatorhub-2021/upstream-community-operators',
  );
}

/** OLM's CRD moved to the oracle group, so it can live next to Bosun's for the same kind. */
function underOracleGroup(crd: OlmCrd): KubeObject {
  const { plural } = crd.spec.names;
  return {
    ...crd,
    metadata: { name: `${plural}.${OracleGroup}` },
    spec: { ...crd.spec, group: OracleGroup },
  } as unknown as KubeObject;
}

/** What the API server answered to a dry-run create. */
type Outcome =
  | { accepted: true; object: Record<string, unknown> }
  | { accepted: false; code: number; reason: string; message: string; causes: string[] };

async function dryRunCreate(
  client: KubeClient,
  group: string,
  kind: OperatorsKind,
  namespace: string,
  manifest: KubeManifest,
  version: string = Resources[kind].version,
): Promise<Outcome> {
  const { plural } = Resources[kind];
  const meta = (manifest.metadata ?? {}) as Record<string, unknown>;
  const body = { ...manifest, apiVersion: `${group}/${version}`, metadata: { ...meta, namespace } };
  try {
    const object = await client.request<Record<string, unknown>>({
      method: 'POST',
      path: `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
      query: { dryRun: 'All' },
      body,
      timeoutMs: 120_000,
    });
    return { accepted: true, object };
  } catch (err) {
    const e = parseApiError(err);
    if (!e) throw err;
    // Messages may name the group; the fields at fault and the kind of fault may not differ.
    // Each field at fault once: OLM's two rules on spec.release may both fail where Bosun's one does.
    const causes = [
      ...new Set((e.causes ?? []).map((c) => `${c.field ?? noField}: ${c.reason ?? ''}`)),
    ].sort();
    return { accepted: false, code: e.code, reason: e.reason, message: e.message, causes };
  }
}

/** The object as stored, with what differs by nature (the group, the moment, the uid) taken out. */
function comparable(object: Record<string, unknown>): unknown {
  const { apiVersion: _, metadata, ...rest } = object;
  const { uid: _u, creationTimestamp: _c, managedFields, ...meta } = metadata as Record<string, unknown>;
  const fields = (managedFields as Record<string, unknown>[] | undefined)?.map(
    ({ apiVersion: _a, time: _t, ...f }) => f,
  );
  return { ...rest, metadata: { ...meta, managedFields: fields } };
}

const nameOf = (m: KubeManifest) => String((m.metadata as { name?: unknown } | undefined)?.name);

/** Where two JSON values differ, as `path: Bosun value / OLM value`, depth first. */
function differingPaths(a: unknown, b: unknown, at = ''): string[] {
  if (deepEqual(a, b)) return [];
  const bothObjects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null;
  if (!bothObjects || Array.isArray(a) !== Array.isArray(b)) {
    const show = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v).slice(0, 80));
    return [`${at || '.'}: ${show(a)} / ${show(b)}`];
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) =>
    differingPaths((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}.${k}`),
  );
}

/** Why two outcomes disagree, or undefined when they agree. */
function disagreement(bosun: Outcome, oracle: Outcome): string | undefined {
  if (bosun.accepted && oracle.accepted) {
    const paths = differingPaths(comparable(bosun.object), comparable(oracle.object));
    return paths.length === 0 ? undefined : `stored differently at ${paths.slice(0, 5).join('; ')}`;
  }
  if (!bosun.accepted && !oracle.accepted) {
    if (bosun.code === oracle.code && deepEqual(bosun.causes, oracle.causes)) return undefined;
    return `refused differently: Bosun ${bosun.message} | OLM ${oracle.message}`;
  }
  const refusal = (bosun.accepted ? oracle : bosun) as Extract<Outcome, { accepted: false }>;
  return `${bosun.accepted ? 'only OLM' : 'only Bosun'} refuses: ${refusal.message}`;
}

/** Every CSV of the corpus, in both layouts, read as Bosun reads published operators. */
async function corpusCsvs(root: string): Promise<{ file: string; csv: KubeManifest }[]> {
  const out: { file: string; csv: KubeManifest }[] = [];
  const problems: string[] = [];
  const take = (dir: string, manifests: { file: string; object: KubeManifest }[]) => {
    for (const m of manifests) {
      if (m.object.kind === 'ClusterServiceVersion') {
        out.push({ file: relative(root, join(dir, m.file)), csv: m.object });
      }
    }
  };
  for (const pkg of (await readdir(root)).sort()) {
    const dir = join(root, pkg);
    if (await isPackageManifestDir(dir)) {
      const read = await readPackageManifestDir(dir);
      for (const b of read.bundles) take(b.source, b.manifests);
      problems.push(...read.problems.map((p) => `${p.file}: ${p.message}`));
      continue;
    }
    for (const e of (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory())) {
      const read = await readBundleDir(join(dir, e.name), { lenient: true });
      if (read.ok) take(read.value.source, read.value.manifests);
      else problems.push(...read.errors.map((p) => `${p.file}: ${p.message}`));
    }
  }
  expect(problems, 'corpus files the bundle readers could not read').toEqual([]);
  return out;
}

/** Runs `fn` over `items`, `width` at a time, keeping their order. */
async function inParallel<T, R>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

describe.skipIf(!olm.ok)(
  `Bosun's CRDs and OLM's (${OlmApiModule}@${OlmApiVersion}) on the API server`,
  () => {
    const { client, applier } = connect();
    const oracleCrds = olm.ok ? Object.values(olm.crds).map(underOracleGroup) : [];
    let ns = '';

    beforeAll(async () => {
      await installOperatorCrds();
      await installCrds(applier, client, oracleCrds, { timeoutMs: 120_000 });
    });

    // A fresh namespace per test: freshNamespace deletes it after the test.
    beforeEach(async () => {
      ns = await freshNamespace('parity');
    });

    afterAll(async () => {
      for (const crd of oracleCrds) {
        await client
          .request({
            method: 'DELETE',
            path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name!}`,
          })
          .catch(() => undefined);
      }
      client.close();
    });

    /** Sends `manifest` to both and returns both outcomes. */
    const both = async (kind: OperatorsKind, manifest: KubeManifest, version?: string) => {
      const [bosun, oracle] = await Promise.all([
        dryRunCreate(client, BosunGroup, kind, ns, manifest, version),
        dryRunCreate(client, OracleGroup, kind, ns, manifest, version),
      ]);
      return { bosun, oracle, disagreement: disagreement(bosun, oracle) };
    };

    it.skipIf(!haveCorpus)(
      'every CSV of the OperatorHub corpus is accepted or refused by both, and stored alike',
      async () => {
        const started = Date.now();
        const csvs = await corpusCsvs(corpus!);
        // The corpus README counts 1008 ClusterServiceVersions; a reader that missed some would hide them.
        expect(csvs).toHaveLength(1008);
        const results = await inParallel(csvs, 4, async ({ file, csv }) => ({
          file,
          csv,
          ...(await both('ClusterServiceVersion', csv)),
        }));
        const seconds = ((Date.now() - started) / 1000).toFixed(1);

        const disagreements = results
          .filter((r) => r.disagreement)
          .map((r) => `${r.file}: ${r.disagreement}`);
        const refusals = results.flatMap((r) =>
          !r.bosun.accepted && !r.disagreement
            ? [{ file: r.file, name: nameOf(r.csv), causes: r.bosun.causes }]
            : [],
        );
        const accepted = results.filter((r) => r.bosun.accepted && !r.disagreement).length;
        console.log(
          `corpus CSVs: ${csvs.length} sent to both in ${seconds} s; accepted by both ${accepted}, ` +
            `refused by both ${refusals.length}, disagreements ${disagreements.length}\n` +
            refusals.map((r) => `  refused by both: ${r.file}: ${r.causes.join(', ')}`).join('\n'),
        );
        expect(disagreements).toEqual([]);

        // What OLM's CRD refuses in the corpus, by fault (list indexes left out): CSVs per fault.
        const byFault = new Map<string, number>();
        for (const r of refusals) {
          const faults = new Set(
            r.causes.filter((c) => !c.startsWith(noField)).map((c) => c.replace(/\[\d+\]/g, '[]')),
          );
          expect(faults.size, `${r.file}: refused for no field`).toBeGreaterThan(0);
          for (const f of faults) byFault.set(f, (byFault.get(f) ?? 0) + 1);
        }
        expect(Object.fromEntries(byFault)).toEqual({
          'spec.customresourcedefinitions.owned[].resources[].name: FieldValueRequired': 222,
          'spec.customresourcedefinitions.owned[].resources[].version: FieldValueRequired': 22,
          'spec.install.spec.deployments[].spec.template.spec.containers[].env[]: FieldValueDuplicate': 17,
          'spec.customresourcedefinitions.owned[].resources[].kind: FieldValueRequired': 3,
          'spec.customresourcedefinitions.owned[].specDescriptors[].value: FieldValueTypeInvalid': 2,
          'spec.relatedImages[].image: FieldValueRequired': 2,
          'spec.install.spec.permissions[].serviceAccountName: FieldValueRequired': 1,
        });
        // Among them the channel heads an install of the corpus was refused for (issue 9).
        const refusedNames = new Set(refusals.map((r) => r.name));
        for (const head of [
          'prometheusoperator.0.47.0',
          'hpe-csi-operator.v2.0.0',
          'redis-operator.v0.6.0',
        ]) {
          expect(refusedNames, head).toContain(head);
        }
      },
      900_000,
    );

    const probeCsv = (spec: Record<string, unknown> = {}): KubeManifest => ({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: { name: 'probe.v1.0.0' },
      spec: { displayName: 'Probe', install: { strategy: 'deployment', spec: { deployments: [] } }, ...spec },
    });

    it('spec.release: the values OLM’s rules accept are exactly those Bosun’s rule accepts', async () => {
      const table = [
        '1',
        '0',
        '01',
        '1.0',
        '1.01',
        'rc-1',
        '0a',
        '00a',
        '2.rc-1',
        'a..b',
        '.a',
        'a.',
        '',
        '-',
      ];
      const edges = [...table, 'a_b', 'x'.repeat(20), 'x'.repeat(21), '1.2.3.4.5', 'é', 'A-Z.0-9', '-0.-01'];
      const answers = await Promise.all(
        edges.map((release) => both('ClusterServiceVersion', probeCsv({ release }))),
      );
      expect(
        answers.flatMap((a, i) => (a.disagreement ? [`${JSON.stringify(edges[i])}: ${a.disagreement}`] : [])),
      ).toEqual([]);
      // Both kinds of answer occur, so the check above compared refusals as well as acceptances.
      const accepted = edges.filter((_, i) => answers[i]!.bosun.accepted);
      expect(accepted).toEqual([
        '1',
        '0',
        '1.0',
        'rc-1',
        '0a',
        '00a',
        '2.rc-1',
        '-',
        'x'.repeat(20),
        '1.2.3.4.5',
        'A-Z.0-9',
        '-0.-01',
      ]);

      // Random releases over the characters that matter: digits (with zeros), letters, '-', '.', '_'.
      const release = fc.stringMatching(/^[01a9Z._-]{0,22}$/);
      await fc.assert(
        fc.asyncProperty(release, async (r) => {
          const answer = await both('ClusterServiceVersion', probeCsv({ release: r }));
          expect(answer.disagreement, JSON.stringify(r)).toBeUndefined();
        }),
        runs(150),
      );
    });

    it('the other kinds: real manifests and OLM’s documented shapes get the same answer from both', async () => {
      const file = async (path: string) =>
        parse(await readFile(join(import.meta.dirname, path), 'utf8')) as KubeManifest;
      const cases: [OperatorsKind, string | undefined, KubeManifest][] = [
        ['Subscription', undefined, await file('../../../deploy/examples/subscription-bosun-sample.yaml')],
        ['Subscription', undefined, await file('../kube/fixtures/subscription-operatorhub.yaml')],
        [
          'CatalogSource',
          undefined,
          {
            kind: 'CatalogSource',
            metadata: { name: 'operatorhubio-catalog' },
            spec: {
              sourceType: 'grpc',
              image: 'quay.io/operatorhubio/catalog:latest',
              displayName: 'Community Operators',
              publisher: 'OperatorHub.io',
              grpcPodConfig: {
                nodeSelector: { 'kubernetes.io/os': 'linux' },
                tolerations: [
                  { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
                ],
                memoryTarget: '30Mi',
                securityContextConfig: 'restricted',
                priorityClassName: 'system-cluster-critical',
              },
              updateStrategy: { registryPoll: { interval: '10m' } },
            },
          },
        ],
        [
          'CatalogSource',
          undefined,
          {
            kind: 'CatalogSource',
            metadata: { name: 'served' },
            spec: { sourceType: 'http', address: 'http://c:8080' },
          },
        ],
        ['OperatorGroup', undefined, { kind: 'OperatorGroup', metadata: { name: 'global' } }],
        [
          'OperatorGroup',
          undefined,
          { kind: 'OperatorGroup', metadata: { name: 'own' }, spec: { targetNamespaces: ['a', 'b'] } },
        ],
        [
          'OperatorGroup',
          'v1alpha2',
          {
            kind: 'OperatorGroup',
            metadata: { name: 'old' },
            spec: { selector: { matchLabels: { team: 'storage' } }, serviceAccountName: 'scoped' },
          },
        ],
        [
          'OperatorCondition',
          undefined,
          {
            kind: 'OperatorCondition',
            metadata: { name: 'etcd.v0.9.4' },
            spec: {
              deployments: ['etcd-operator'],
              serviceAccounts: ['etcd-operator'],
              // As OLM documents overrides: no lastTransitionTime.
              overrides: [
                { type: 'Upgradeable', status: 'True', reason: 'UpgradeIsSafe', message: 'known issue' },
              ],
            },
          },
        ],
        [
          'OperatorCondition',
          'v1',
          {
            kind: 'OperatorCondition',
            metadata: { name: 'old' },
            spec: { overrides: [{ type: 'Upgradeable', status: 'False', reason: 'Migrating', message: '' }] },
          },
        ],
        [
          'InstallPlan',
          undefined,
          {
            kind: 'InstallPlan',
            metadata: { name: 'install-abcde' },
            spec: {
              clusterServiceVersionNames: ['etcdoperator.v0.9.4'],
              approval: 'Manual',
              approved: false,
            },
          },
        ],
        // A status sent with a create is dropped by both (status is a subresource), so keeping
        // unknown status fields does not change what users create.
        [
          'ClusterServiceVersion',
          undefined,
          { ...probeCsv(), status: { phase: 'Succeeded', bosunExtra: 1 } },
        ],
      ];
      const answers = await Promise.all(cases.map(([kind, version, m]) => both(kind, m, version)));
      const report = answers.map((a, i) => {
        const [kind, version, m] = cases[i]!;
        const name = `${kind} ${version ?? Resources[kind].version} ${(m.metadata as { name: string }).name}`;
        return `${name}: ${a.disagreement ?? (a.bosun.accepted ? 'accepted by both' : 'refused by both')}`;
      });
      expect(report.filter((r) => !r.endsWith('by both'))).toEqual([]);
      expect(report.filter((r) => r.endsWith('refused by both'))).toEqual([]);
    });

    it('the deliberate differences are exactly as the README says', async () => {
      // installPlanApproval / approval: OLM takes a typo as Automatic; Bosun refuses it.
      const sub = await both('Subscription', {
        kind: 'Subscription',
        metadata: { name: 'typo' },
        spec: { name: 'etcd', source: 'c', sourceNamespace: 'olm', installPlanApproval: 'manual' },
      });
      expect(sub.oracle.accepted).toBe(true);
      expect(sub.bosun).toMatchObject({
        accepted: false,
        causes: ['spec.installPlanApproval: FieldValueNotSupported'],
      });
      const ip = await both('InstallPlan', {
        kind: 'InstallPlan',
        metadata: { name: 'install-typo' },
        spec: { clusterServiceVersionNames: ['a.v1'], approval: 'automatic', approved: true },
      });
      expect(ip.oracle.accepted).toBe(true);
      expect(ip.bosun).toMatchObject({ accepted: false, causes: ['spec.approval: FieldValueNotSupported'] });
    });
  },
);
