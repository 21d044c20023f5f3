/**
 * Bosun's ClusterCatalog and ClusterExtension CRDs answer as OLM v1's own, on the real API server.
 * operator-controller's CRDs (test/support/olmv1-crds.ts) are installed next to Bosun's under a
 * group of this file's own, and the same manifests are sent to both: a table of valid and invalid
 * ones (each CEL rule, enum, pattern and limit), real image references and package names from the
 * 2021 OperatorHub corpus, random version ranges and image references, updates of the immutable
 * fields, status writes and the printer columns. Both must accept or both refuse, with the same
 * fields at fault and the same messages; where both accept, the object stored (pruned and
 * defaulted) must be the same but for the group.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deepEqual } from '../../../src/apis/crds/compare.js';
import type { KubeObject } from '../../../src/apis/meta.js';
import { type OlmV1Kind, OlmV1Group, V1Resources } from '../../../src/apis/olmv1.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { installCrds } from '../../../src/kube/crds.js';
import { parseApiError } from '../../../src/kube/errors.js';
import type { OlmCrd } from '../../support/olm-crds.js';
import {
  loadOlmV1Crds,
  OperatorControllerModule,
  OperatorControllerVersion,
} from '../../support/olmv1-crds.js';
import { configureProperties, runs } from '../../support/properties.js';
import { connect, installOperatorCrds } from '../kube/helpers.js';

configureProperties();

/** Unique to this file, so no other test's oracle CRDs clash with these. */
const OracleGroup = 'olmv1-parity.oracle.test';
const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io';

const olm = await loadOlmV1Crds();
if (!olm.ok) console.warn(`skipping the parity of Bosun's v1 CRDs with OLM v1's on a cluster: ${olm.reason}`);
const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus) {
  console.warn(
    'skipping the OperatorHub corpus image references and packages against both v1 CRDs: set ' +
      'BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
  );
}

function underOracleGroup(crd: OlmCrd): KubeObject {
  return {
    ...crd,
    metadata: { name: `${crd.spec.names.plural}.${OracleGroup}` },
    spec: { ...crd.spec, group: OracleGroup },
  } as unknown as KubeObject;
}

type Manifest = Record<string, unknown>;

type Outcome =
  | { accepted: true; object: Record<string, unknown> }
  | { accepted: false; code: number; reason: string; causes: string[] };

/** Each cause as `field: reason: message`, so the same rule must fail with the same words. */
function outcomeOf(err: unknown): Outcome {
  const e = parseApiError(err);
  if (!e) throw err;
  const causes = [
    ...new Set((e.causes ?? []).map((c) => `${c.field ?? '<nil>'}: ${c.reason ?? ''}: ${c.message ?? ''}`)),
  ].sort();
  // A refusal without causes must still say the same thing: its message, the group taken out.
  if (causes.length === 0) causes.push(e.message.replaceAll(OracleGroup, OlmV1Group));
  return { accepted: false, code: e.code, reason: e.reason, causes };
}

async function send(
  client: KubeClient,
  group: string,
  kind: OlmV1Kind,
  manifest: Manifest,
  opts: { dryRun?: boolean; method?: 'POST' | 'PUT'; subresource?: string } = {},
): Promise<Outcome> {
  const { plural, version } = V1Resources[kind];
  const name = (manifest.metadata as { name?: string } | undefined)?.name;
  const method = opts.method ?? 'POST';
  const path =
    method === 'POST'
      ? `/apis/${group}/${version}/${plural}`
      : `/apis/${group}/${version}/${plural}/${name}${opts.subresource ? `/${opts.subresource}` : ''}`;
  try {
    const object = await client.request<Record<string, unknown>>({
      method,
      path,
      ...(opts.dryRun === false ? {} : { query: { dryRun: 'All' } }),
      body: { ...manifest, apiVersion: `${group}/${version}`, kind },
      timeoutMs: 60_000,
    });
    return { accepted: true, object };
  } catch (err) {
    return outcomeOf(err);
  }
}

/** The object as stored, without what differs by nature (group, time, uid, version). */
function comparable(object: Record<string, unknown>): unknown {
  const { apiVersion: _, metadata, ...rest } = object;
  const {
    uid: _u,
    creationTimestamp: _c,
    resourceVersion: _r,
    managedFields,
    ...meta
  } = metadata as Record<string, unknown>;
  const fields = (managedFields as Record<string, unknown>[] | undefined)?.map(
    ({ apiVersion: _a, time: _t, ...f }) => f,
  );
  return { ...rest, metadata: { ...meta, managedFields: fields } };
}

function disagreement(bosun: Outcome, oracle: Outcome): string | undefined {
  if (bosun.accepted && oracle.accepted) {
    const [a, b] = [comparable(bosun.object), comparable(oracle.object)];
    return deepEqual(a, b)
      ? undefined
      : `stored differently: Bosun ${JSON.stringify(a)} | OLM v1 ${JSON.stringify(b)}`;
  }
  if (!bosun.accepted && !oracle.accepted) {
    if (bosun.code === oracle.code && deepEqual(bosun.causes, oracle.causes)) return undefined;
    return `refused differently: Bosun ${bosun.causes.join(' | ')} || OLM v1 ${oracle.causes.join(' | ')}`;
  }
  const refusal = (bosun.accepted ? oracle : bosun) as Extract<Outcome, { accepted: false }>;
  return `${bosun.accepted ? 'only OLM v1' : 'only Bosun'} refuses: ${refusal.causes.join(' | ')}`;
}

const uniqueName = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

// ---------------------------------------------------------------------------------------------
// The table. Each row: a name, the kind, the spec sent, and whether v1 accepts it (checked, so the
// table keeps both kinds of row and a row cannot pass by both sides silently ignoring the field).

const hex64 = 'a'.repeat(64);
const catalog = (spec: unknown): Manifest => ({ metadata: { name: 'probe' }, spec });
const image = (image: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  catalog({ source: { type: 'Image', image }, ...more });
const extension = (spec: unknown): Manifest => ({ metadata: { name: 'probe' }, spec });
const ext = (
  catalogFilter: Record<string, unknown> | undefined,
  more: Record<string, unknown> = {},
): Manifest =>
  extension({
    namespace: 'argocd',
    serviceAccount: { name: 'argocd-installer' },
    source: { sourceType: 'Catalog', ...(catalogFilter ? { catalog: catalogFilter } : {}) },
    ...more,
  });

type Row = [name: string, kind: OlmV1Kind, manifest: Manifest, accepted: boolean];

const catalogRows: Row[] = [
  // Accepted, with the defaults filled in (priority 0, availabilityMode Available).
  ['tag reference', 'ClusterCatalog', image({ ref: 'quay.io/operatorhubio/catalog:latest' }), true],
  [
    'tag with poll interval, priority and availability',
    'ClusterCatalog',
    image(
      { ref: 'registry.example.com:5000/team/catalogs/ops:v4.18', pollIntervalMinutes: 10 },
      { priority: -100, availabilityMode: 'Unavailable' },
    ),
    true,
  ],
  ['digest reference', 'ClusterCatalog', image({ ref: `quay.io/org/catalog@sha256:${hex64}` }), true],
  ['tag of 127 characters', 'ClusterCatalog', image({ ref: `quay.io/c/d:${'t'.repeat(127)}` }), true],
  [
    'reference of 1000 characters',
    'ClusterCatalog',
    image({ ref: `quay.io/${'a'.repeat(985)}:latest` }),
    true,
  ],
  ['localhost registry with port', 'ClusterCatalog', image({ ref: 'localhost:5000/catalog:1' }), true],
  // Refused: required fields, enums, unions, limits, each CEL rule of a reference.
  ['no spec', 'ClusterCatalog', { metadata: { name: 'probe' } }, false],
  ['no source', 'ClusterCatalog', catalog({ priority: 1 }), false],
  ['no source type', 'ClusterCatalog', catalog({ source: { image: { ref: 'quay.io/c/d:1' } } }), false],
  [
    'unknown source type',
    'ClusterCatalog',
    catalog({ source: { type: 'Git', image: { ref: 'quay.io/c/d:1' } } }),
    false,
  ],
  ['Image without image', 'ClusterCatalog', catalog({ source: { type: 'Image' } }), false],
  ['image without ref', 'ClusterCatalog', image({ pollIntervalMinutes: 5 }), false],
  [
    'reference of 1001 characters',
    'ClusterCatalog',
    image({ ref: `quay.io/${'a'.repeat(986)}:latest` }),
    false,
  ],
  ['no domain', 'ClusterCatalog', image({ ref: '/catalog:latest' }), false],
  ['domain starting with a dash', 'ClusterCatalog', image({ ref: '-quay.io/catalog:latest' }), false],
  ['no repository name', 'ClusterCatalog', image({ ref: 'quay.io:latest' }), false],
  ['upper-case repository name', 'ClusterCatalog', image({ ref: 'quay.io/Catalog:latest' }), false],
  ['neither tag nor digest', 'ClusterCatalog', image({ ref: 'quay.io/org/catalog' }), false],
  ['port but no tag', 'ClusterCatalog', image({ ref: 'localhost:5000/catalog' }), false],
  ['tag of 128 characters', 'ClusterCatalog', image({ ref: `quay.io/c/d:${'t'.repeat(128)}` }), false],
  ['tag starting with a dot', 'ClusterCatalog', image({ ref: 'quay.io/c/d:.v1' }), false],
  ['tag with a plus', 'ClusterCatalog', image({ ref: 'quay.io/c/d:v1+build' }), false],
  [
    'digest algorithm starting with a digit',
    'ClusterCatalog',
    image({ ref: `quay.io/c/d@1sha:${hex64}` }),
    false,
  ],
  [
    'digest of 31 characters',
    'ClusterCatalog',
    image({ ref: `quay.io/c/d@sha256:${'a'.repeat(31)}` }),
    false,
  ],
  ['digest that is not hex', 'ClusterCatalog', image({ ref: `quay.io/c/d@sha256:${'g'.repeat(64)}` }), false],
  [
    'poll interval on a digest',
    'ClusterCatalog',
    image({ ref: `quay.io/c/d@sha256:${hex64}`, pollIntervalMinutes: 5 }),
    false,
  ],
  ['poll interval 0', 'ClusterCatalog', image({ ref: 'quay.io/c/d:1', pollIntervalMinutes: 0 }), false],
  [
    'poll interval as text',
    'ClusterCatalog',
    image({ ref: 'quay.io/c/d:1', pollIntervalMinutes: '5' }),
    false,
  ],
  [
    'unknown availability mode',
    'ClusterCatalog',
    image({ ref: 'quay.io/c/d:1' }, { availabilityMode: 'Paused' }),
    false,
  ],
  ['fractional priority', 'ClusterCatalog', image({ ref: 'quay.io/c/d:1' }, { priority: 1.5 }), false],
  [
    'several faults at once',
    'ClusterCatalog',
    image({ ref: 'quay.io/C', pollIntervalMinutes: -1 }, { availabilityMode: '' }),
    false,
  ],
];

const extensionRows: Row[] = [
  [
    'every field',
    'ClusterExtension',
    ext(
      {
        packageName: 'argocd-operator',
        version: '>=0.5.0, <0.7.0',
        channels: ['alpha', 'stable.v1'],
        selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': 'operatorhubio' } },
        upgradeConstraintPolicy: 'SelfCertified',
      },
      { install: { preflight: { crdUpgradeSafety: { enforcement: 'None' } } } },
    ),
    true,
  ],
  ['the least (default upgrade policy)', 'ClusterExtension', ext({ packageName: 'argocd-operator' }), true],
  ['no spec at all (v1 does not require one)', 'ClusterExtension', { metadata: { name: 'probe' } }, true],
  ...(
    [
      '1.2.x',
      '~1.2 || ^2',
      'v1.0.0',
      '1.0.0-rc.1+build.5',
      '>1, <=3',
      '*',
      '=1.0.0',
      '!=1.1.0',
      '1.2.3 - 2',
    ] as const
  ).map((version): Row => [
    `version ${version}`,
    'ClusterExtension',
    ext({ packageName: 'p', version }),
    version !== '1.2.3 - 2',
  ]),
  [
    'namespace of 63 characters',
    'ClusterExtension',
    extension({
      namespace: 'n'.repeat(63),
      serviceAccount: { name: 'sa' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    true,
  ],
  [
    '256 channels',
    'ClusterExtension',
    ext({ packageName: 'p', channels: Array.from({ length: 256 }, (_, i) => `c${i}`) }),
    true,
  ],
  // Refused.
  [
    'no namespace',
    'ClusterExtension',
    extension({
      serviceAccount: { name: 'sa' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  [
    'namespace of 64 characters',
    'ClusterExtension',
    extension({
      namespace: 'n'.repeat(64),
      serviceAccount: { name: 'sa' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  [
    'namespace with a dot',
    'ClusterExtension',
    extension({
      namespace: 'a.b',
      serviceAccount: { name: 'sa' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  [
    'namespace in capitals',
    'ClusterExtension',
    extension({
      namespace: 'Argo',
      serviceAccount: { name: 'sa' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  [
    'no service account',
    'ClusterExtension',
    extension({ namespace: 'a', source: { sourceType: 'Catalog', catalog: { packageName: 'p' } } }),
    false,
  ],
  [
    'service account without name',
    'ClusterExtension',
    extension({
      namespace: 'a',
      serviceAccount: {},
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  [
    'service account name with underscore',
    'ClusterExtension',
    extension({
      namespace: 'a',
      serviceAccount: { name: 'my_sa' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  [
    'service account name of 254 characters',
    'ClusterExtension',
    extension({
      namespace: 'a',
      serviceAccount: { name: 's'.repeat(254) },
      source: { sourceType: 'Catalog', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  ['no source', 'ClusterExtension', extension({ namespace: 'a', serviceAccount: { name: 'sa' } }), false],
  [
    'no source type',
    'ClusterExtension',
    extension({ namespace: 'a', serviceAccount: { name: 'sa' }, source: { catalog: { packageName: 'p' } } }),
    false,
  ],
  [
    'unknown source type',
    'ClusterExtension',
    extension({
      namespace: 'a',
      serviceAccount: { name: 'sa' },
      source: { sourceType: 'Bundle', catalog: { packageName: 'p' } },
    }),
    false,
  ],
  ['Catalog without catalog', 'ClusterExtension', ext(undefined), false],
  ['no package name', 'ClusterExtension', ext({ version: '1.0.0' }), false],
  ['package name with a space', 'ClusterExtension', ext({ packageName: 'argo cd' }), false],
  ['package name ending with a dash', 'ClusterExtension', ext({ packageName: 'argo-' }), false],
  ['package name of 254 characters', 'ClusterExtension', ext({ packageName: 'p'.repeat(254) }), false],
  ['version latest', 'ClusterExtension', ext({ packageName: 'p', version: 'latest' }), false],
  [
    'version of 65 characters',
    'ClusterExtension',
    ext({ packageName: 'p', version: `1.0.0-${'a'.repeat(59)}` }),
    false,
  ],
  ['version with two operators', 'ClusterExtension', ext({ packageName: 'p', version: '>=<1.0' }), false],
  ['channel with capitals', 'ClusterExtension', ext({ packageName: 'p', channels: ['Stable'] }), false],
  [
    'channel of 254 characters',
    'ClusterExtension',
    ext({ packageName: 'p', channels: ['c'.repeat(254)] }),
    false,
  ],
  [
    '257 channels',
    'ClusterExtension',
    ext({ packageName: 'p', channels: Array.from({ length: 257 }, (_, i) => `c${i}`) }),
    false,
  ],
  [
    'unknown upgrade policy',
    'ClusterExtension',
    ext({ packageName: 'p', upgradeConstraintPolicy: 'Never' }),
    false,
  ],
  [
    'selector expression without operator',
    'ClusterExtension',
    ext({ packageName: 'p', selector: { matchExpressions: [{ key: 'a' }] } }),
    false,
  ],
  ['empty install', 'ClusterExtension', ext({ packageName: 'p' }, { install: {} }), false],
  ['empty preflight', 'ClusterExtension', ext({ packageName: 'p' }, { install: { preflight: {} } }), false],
  [
    'CRD safety without enforcement',
    'ClusterExtension',
    ext({ packageName: 'p' }, { install: { preflight: { crdUpgradeSafety: {} } } }),
    false,
  ],
  [
    'unknown enforcement',
    'ClusterExtension',
    ext({ packageName: 'p' }, { install: { preflight: { crdUpgradeSafety: { enforcement: 'Loose' } } } }),
    false,
  ],
];

describe.skipIf(!olm.ok)(
  `Bosun's v1 CRDs and OLM v1's (${OperatorControllerModule}@${OperatorControllerVersion}) on the API server`,
  () => {
    const { client, applier } = connect();
    const oracleCrds = olm.ok ? Object.values(olm.crds).map(underOracleGroup) : [];
    /** Objects made for real (updates, status, tables), deleted after. */
    const made: [OlmV1Kind, string][] = [];

    beforeAll(async () => {
      await installOperatorCrds();
      await installCrds(applier, client, oracleCrds, { timeoutMs: 120_000 });
    });

    afterAll(async () => {
      for (const [kind, name] of made) {
        for (const group of [OlmV1Group, OracleGroup]) {
          const { plural, version } = V1Resources[kind];
          await client
            .request({ method: 'DELETE', path: `/apis/${group}/${version}/${plural}/${name}` })
            .catch(() => undefined);
        }
      }
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

    const both = async (kind: OlmV1Kind, manifest: Manifest, opts?: Parameters<typeof send>[4]) => {
      const [bosun, oracle] = await Promise.all([
        send(client, OlmV1Group, kind, manifest, opts),
        send(client, OracleGroup, kind, manifest, opts),
      ]);
      return { bosun, oracle, disagreement: disagreement(bosun, oracle) };
    };

    /** Sends every row to both; every row must get the same answer, and the answer the row expects. */
    const checkRows = async (rows: Row[]) => {
      const answers = await Promise.all(rows.map(([, kind, m]) => both(kind, m)));
      const report = answers.map((a, i) => {
        const [name, , , expected] = rows[i]!;
        const got = a.disagreement ?? (a.bosun.accepted ? 'accepted by both' : 'refused by both');
        return `${name}: ${got}${a.disagreement === undefined && a.bosun.accepted !== expected ? ' (unexpected)' : ''}`;
      });
      expect(report.filter((r) => !r.endsWith('by both'))).toEqual([]);
      return answers;
    };

    it('ClusterCatalog: each rule, enum, limit and default answers as OLM v1’s', async () => {
      const answers = await checkRows(catalogRows);
      // The defaults, as stored by both (the comparison above checked they are the same).
      const first = answers[0]!.bosun as Extract<Outcome, { accepted: true }>;
      expect(first.object.spec).toEqual({
        source: { type: 'Image', image: { ref: 'quay.io/operatorhubio/catalog:latest' } },
        priority: 0,
        availabilityMode: 'Available',
      });
      // v1's own words reach the user.
      const digest = answers[catalogRows.findIndex(([n]) => n === 'poll interval on a digest')]!.bosun;
      expect(JSON.stringify(digest)).toContain(
        'cannot specify pollIntervalMinutes while using digest-based image',
      );
    });

    it('ClusterExtension: each rule, enum, limit and default answers as OLM v1’s', async () => {
      const answers = await checkRows(extensionRows);
      const least = answers[1]!.bosun as Extract<Outcome, { accepted: true }>;
      expect((least.object.spec as { source: unknown }).source).toEqual({
        sourceType: 'Catalog',
        catalog: { packageName: 'argocd-operator', upgradeConstraintPolicy: 'CatalogProvided' },
      });
      const version = answers[extensionRows.findIndex(([n]) => n === 'version latest')]!.bosun;
      expect(JSON.stringify(version)).toContain('invalid version expression');
    });

    it('random version ranges and image references get the same answer from both', async () => {
      const version = fc.stringMatching(/^[0-9xX*^~<>=!|, v.+a-]{0,20}$/);
      const ref = fc
        .tuple(
          fc.stringMatching(/^[a-zA-Z0-9.:-]{0,12}$/),
          fc.stringMatching(/^[a-z0-9/._A-]{0,12}$/),
          fc.oneof(
            fc.stringMatching(/^:[\w.+-]{0,8}$/),
            fc.stringMatching(/^@[a-z0-9:]{0,6}[0-9a-fA-G]{28,36}$/),
          ),
        )
        .map(([domain, path, tail]) => `${domain}${path}${tail}`);
      const seen = { accepted: 0, refused: 0 };
      await fc.assert(
        fc.asyncProperty(version, ref, async (v, r) => {
          const e = await both('ClusterExtension', ext({ packageName: 'p', version: v }));
          const c = await both('ClusterCatalog', image({ ref: r }));
          expect(e.disagreement, `version ${JSON.stringify(v)}`).toBeUndefined();
          expect(c.disagreement, `ref ${JSON.stringify(r)}`).toBeUndefined();
          for (const a of [e, c]) seen[a.bosun.accepted ? 'accepted' : 'refused']++;
        }),
        runs(150),
      );
      // Both kinds of answer occurred, so refusals were compared as well as acceptances.
      expect(seen.accepted).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    });

    it('immutable fields: changing one is refused by both with v1’s message; changing the version is accepted', async () => {
      const name = uniqueName('parity-immutable');
      const base = ext({ packageName: 'argocd-operator', version: '0.6.x' });
      const manifest: Manifest = { ...base, metadata: { name } };
      const created = await both('ClusterExtension', manifest, { dryRun: false });
      made.push(['ClusterExtension', name]);
      expect(created.disagreement).toBeUndefined();
      expect(created.bosun.accepted).toBe(true);
      const spec = manifest.spec as Record<string, Record<string, unknown>>;
      const changes: [string, Manifest][] = [
        ['namespace', { ...manifest, spec: { ...spec, namespace: 'other' } }],
        ['serviceAccount.name', { ...manifest, spec: { ...spec, serviceAccount: { name: 'other' } } }],
        [
          'packageName',
          {
            ...manifest,
            spec: { ...spec, source: { sourceType: 'Catalog', catalog: { packageName: 'other' } } },
          },
        ],
        // The version may change: it is how a user upgrades.
        [
          'version',
          {
            ...manifest,
            spec: {
              ...spec,
              source: {
                sourceType: 'Catalog',
                catalog: { packageName: 'argocd-operator', version: '0.7.x' },
              },
            },
          },
        ],
      ];
      const report: string[] = [];
      for (const [field, changed] of changes) {
        // An update names the resourceVersion it read; each side has its own.
        const answers = await Promise.all(
          [OlmV1Group, OracleGroup].map(async (group) => {
            const { plural, version } = V1Resources.ClusterExtension;
            const current = await client.request<{ metadata: { resourceVersion: string } }>({
              path: `/apis/${group}/${version}/${plural}/${name}`,
            });
            const body = {
              ...changed,
              metadata: { name, resourceVersion: current.metadata.resourceVersion },
            };
            return send(client, group, 'ClusterExtension', body, { method: 'PUT' });
          }),
        );
        const d = disagreement(answers[0]!, answers[1]!);
        report.push(`${field}: ${d ?? (answers[0]!.accepted ? 'accepted' : answers[0]!.causes.join(' | '))}`);
      }
      expect(report).toEqual([
        expect.stringMatching(/^namespace: spec\.namespace: FieldValueInvalid: .*namespace is immutable$/),
        expect.stringMatching(
          /^serviceAccount\.name: spec\.serviceAccount\.name: FieldValueInvalid: .*name is immutable$/,
        ),
        expect.stringMatching(
          /^packageName: spec\.source\.catalog\.packageName: FieldValueInvalid: .*packageName is immutable$/,
        ),
        'version: accepted',
      ]);
    });

    it('status: what the status subresource accepts, and the printer columns, are v1’s', async () => {
      // Long ago, so the table's age of it reads the same for both whenever each is printed.
      const now = '2021-03-01T12:00:00Z';
      const condition = (type: string, status: string, reason = 'Succeeded') => ({
        type,
        status,
        reason,
        message: '',
        lastTransitionTime: now,
      });
      const catalogName = uniqueName('parity-catalog');
      const extensionName = uniqueName('parity-extension');
      const catalogObject = {
        ...image({ ref: 'quay.io/operatorhubio/catalog:latest' }),
        metadata: { name: catalogName },
      };
      const extensionObject = {
        ...ext({ packageName: 'argocd-operator' }),
        metadata: { name: extensionName },
      };
      for (const [kind, m] of [
        ['ClusterCatalog', catalogObject],
        ['ClusterExtension', extensionObject],
      ] as const) {
        const created = await both(kind, m, { dryRun: false });
        made.push([kind, m.metadata.name]);
        expect(created.disagreement).toBeUndefined();
      }

      const writeStatus = async (kind: OlmV1Kind, m: Manifest, status: unknown, dryRun: boolean) => {
        const answers = await Promise.all(
          [OlmV1Group, OracleGroup].map(async (group) => {
            const { plural, version } = V1Resources[kind];
            const name = (m.metadata as { name: string }).name;
            const current = await client.request<Manifest>({
              path: `/apis/${group}/${version}/${plural}/${name}`,
            });
            return send(
              client,
              group,
              kind,
              { ...current, status },
              { method: 'PUT', subresource: 'status', dryRun },
            );
          }),
        );
        return { bosun: answers[0]!, disagreement: disagreement(answers[0]!, answers[1]!) };
      };

      const digestRef = `quay.io/operatorhubio/catalog@sha256:${'b'.repeat(64)}`;
      const goodCatalogStatus = {
        // Progressing differs from Serving (and from Installed below), so a column reading the
        // wrong condition shows.
        conditions: [
          condition('Serving', 'True', 'Available'),
          condition('Progressing', 'False', 'Succeeded'),
        ],
        resolvedSource: { type: 'Image', image: { ref: digestRef } },
        urls: { base: `https://catalogd-service.olmv1-system.svc/catalogs/${catalogName}` },
        lastUnpacked: now,
      };
      const goodExtensionStatus = {
        conditions: [condition('Installed', 'True'), condition('Progressing', 'False')],
        install: { bundle: { name: 'argocd-operator.v0.6.0', version: '0.6.0' } },
      };
      const statusRows: [string, OlmV1Kind, Manifest, unknown, boolean][] = [
        ['catalog status', 'ClusterCatalog', catalogObject, goodCatalogStatus, true],
        [
          'resolved tag, not digest',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, resolvedSource: { type: 'Image', image: { ref: 'quay.io/c/d:1' } } },
          false,
        ],
        [
          'resolved source without image',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, resolvedSource: { type: 'Image' } },
          false,
        ],
        [
          'base that is no URL',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, urls: { base: 'not a url' } },
          false,
        ],
        [
          'base with ftp scheme',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, urls: { base: 'ftp://catalogd/x' } },
          false,
        ],
        [
          'base of 526 characters',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, urls: { base: `https://c/${'a'.repeat(516)}` } },
          false,
        ],
        [
          'condition with a bad reason',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, conditions: [condition('Serving', 'True', 'not ok')] },
          false,
        ],
        [
          'condition with a bad status',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, conditions: [condition('Serving', 'Yes')] },
          false,
        ],
        [
          'two conditions of one type',
          'ClusterCatalog',
          catalogObject,
          { ...goodCatalogStatus, conditions: [condition('Serving', 'True'), condition('Serving', 'False')] },
          false,
        ],
        ['extension status', 'ClusterExtension', extensionObject, goodExtensionStatus, true],
        [
          'bundle name with capitals',
          'ClusterExtension',
          extensionObject,
          { ...goodExtensionStatus, install: { bundle: { name: 'Argo', version: '0.6.0' } } },
          false,
        ],
        [
          'bundle version not semver',
          'ClusterExtension',
          extensionObject,
          { ...goodExtensionStatus, install: { bundle: { name: 'argo', version: 'v0.6' } } },
          false,
        ],
        [
          'install without bundle',
          'ClusterExtension',
          extensionObject,
          { ...goodExtensionStatus, install: {} },
          false,
        ],
      ];
      const report: string[] = [];
      for (const [name, kind, m, status, expected] of statusRows) {
        const a = await writeStatus(kind, m, status, true);
        const got = a.disagreement ?? (a.bosun.accepted ? 'accepted by both' : 'refused by both');
        report.push(
          `${name}: ${got}${a.disagreement === undefined && a.bosun.accepted !== expected ? ' (unexpected)' : ''}`,
        );
      }
      expect(report.filter((r) => !r.endsWith('by both'))).toEqual([]);

      // Written for real, then read as kubectl reads a table.
      for (const [kind, m, status] of [
        ['ClusterCatalog', catalogObject, goodCatalogStatus],
        ['ClusterExtension', extensionObject, goodExtensionStatus],
      ] as const) {
        expect((await writeStatus(kind, m, status, false)).disagreement).toBeUndefined();
      }
      const table = async (group: string, kind: OlmV1Kind, name: string) => {
        const { plural, version } = V1Resources[kind];
        const t = await client.request<{
          columnDefinitions: Record<string, unknown>[];
          rows: { cells: unknown[] }[];
        }>({
          path: `/apis/${group}/${version}/${plural}/${name}`,
          accept: tableAccept,
        });
        const columns = t.columnDefinitions.map(({ description: _, ...c }) => c);
        // The last cell is the age, which may be a second apart between the two objects.
        return { columns, cells: t.rows[0]!.cells.slice(0, -1) };
      };
      for (const [kind, name] of [
        ['ClusterCatalog', catalogName],
        ['ClusterExtension', extensionName],
      ] as const) {
        expect(await table(OlmV1Group, kind, name), kind).toEqual(await table(OracleGroup, kind, name));
      }
      expect((await table(OlmV1Group, 'ClusterCatalog', catalogName)).cells).toEqual([
        catalogName,
        expect.stringMatching(/^\d+y/), // lastUnpacked, shown as an age
        'True',
      ]);
      expect((await table(OlmV1Group, 'ClusterExtension', extensionName)).cells).toEqual([
        extensionName,
        'argocd-operator.v0.6.0',
        '0.6.0',
        'True',
        'False',
      ]);
    });

    it.skipIf(!haveCorpus)(
      'the corpus: every image reference as a catalog, every package and version as an extension, answered alike',
      async () => {
        const { refs, packages } = await corpusInputs(corpus!);
        expect(refs.length).toBeGreaterThan(500);
        expect(packages.length).toBeGreaterThan(150);
        // Real data is not all valid (placeholders, refs without a tag): the rows' expectation is
        // not checked here, only that both answer alike; the refusals are printed.
        const rows: Row[] = [
          ...refs.map((ref): Row => [`ref ${ref}`, 'ClusterCatalog', image({ ref }), true]),
          ...packages.flatMap(({ name, channels, versions }) =>
            versions.map((version): Row => [
              `package ${name} ${version}`,
              'ClusterExtension',
              ext({ packageName: name, version, channels }),
              true,
            ]),
          ),
        ];
        const results: { row: Row; disagreement?: string; accepted: boolean; causes: string[] }[] = [];
        for (let i = 0; i < rows.length; i += 16) {
          const batch = rows.slice(i, i + 16);
          const answers = await Promise.all(batch.map(([, kind, m]) => both(kind, m)));
          answers.forEach((a, j) =>
            results.push({
              row: batch[j]!,
              disagreement: a.disagreement,
              accepted: a.bosun.accepted,
              causes: a.bosun.accepted ? [] : a.bosun.causes,
            }),
          );
        }
        const disagreements = results
          .filter((r) => r.disagreement)
          .map((r) => `${r.row[0]}: ${r.disagreement}`);
        const refused = results.filter((r) => !r.disagreement && !r.accepted);
        console.log(
          `corpus: ${refs.length} image references and ${rows.length - refs.length} package versions sent to both; ` +
            `refused by both ${refused.length}, disagreements ${disagreements.length}\n` +
            refused.map((r) => `  refused by both: ${r.row[0]}: ${r.causes.join(' | ')}`).join('\n'),
        );
        expect(disagreements).toEqual([]);
      },
      600_000,
    );
  },
);

/**
 * Real inputs from the corpus: each distinct image reference its manifests name (a catalog would
 * be named the same way), and each package with its channels and the versions its folders hold.
 */
async function corpusInputs(
  root: string,
): Promise<{ refs: string[]; packages: { name: string; channels: string[]; versions: string[] }[] }> {
  const refs = new Set<string>();
  const packages: { name: string; channels: string[]; versions: string[] }[] = [];
  const imagePattern = /(?:image|containerImage):\s*["']?([^\s"'#]+)/g;
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) await walk(path);
      else if (/\.ya?ml$/.test(e.name)) {
        for (const m of (await readFile(path, 'utf8')).matchAll(imagePattern)) refs.add(m[1]!);
      }
    }
  };
  for (const pkg of (await readdir(root)).sort()) {
    const dir = join(root, pkg);
    await walk(dir);
    const entries = await readdir(dir, { withFileTypes: true });
    const packageFile = entries.find((e) => e.isFile() && e.name.endsWith('.package.yaml'));
    const versions = entries.filter((e) => e.isDirectory()).map((e) => e.name);
    if (packageFile) {
      const p = parse(await readFile(join(dir, packageFile.name), 'utf8')) as {
        packageName: string;
        channels: { name: string }[];
      };
      packages.push({ name: p.packageName, channels: p.channels.map((c) => c.name), versions });
    }
  }
  return { refs: [...refs].sort(), packages };
}
