/**
 * Real operators install: a fixed sample of OperatorHub corpus packages (BOSUN_CORPUS_DIR),
 * subscribed as a new user would (default channel, a namespace each, an OperatorGroup by the head
 * CSV's install modes) from the whole corpus imported and served over http, through a running
 * manager on the real control plane. Every package must reach Succeeded, and together they must
 * cover each class of real-world trouble Bosun handles: v1beta1 CRDs and other removed APIs,
 * fields their schema does not declare, CSVs that need OLM's typed decoding (nulls, missing
 * required fields), webhooks, dependencies on other packages, and AllNamespaces-only operators.
 * The corpus-install benchmark does the same for every package.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleDoc, DeclarativeConfig } from '../../../src/apis/fbc.js';
import type { InstallPlan } from '../../../src/apis/operators.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { DefaultGlobalNamespace } from '../../../src/manager/defaults.js';
import {
  type Outcome,
  outcomeOf,
  type PackagePlan,
  planPackages,
  subscribe,
  ClusterView,
} from '../../support/corpus-install.js';
import { eventually } from '../support.js';
import { client, serveCorpusCatalog, startTestManager } from './support.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus) {
  console.warn('corpus sample test skipped: set BOSUN_CORPUS_DIR to the OperatorHub corpus to run it');
}

/** The sample, each with the trouble it was picked for (the test checks the classes from the data). */
const Sample = [
  'etcd', // v1beta1 CRDs; owned resources without a name (zero values)
  'prometheus-exporter-operator', // v1beta1 CRDs
  'snapscheduler', // v1beta1 CRDs, AllNamespaces only
  'kubestone', // v1beta1 CRDs, AllNamespaces only
  'integrity-shield-operator', // an rbac.authorization.k8s.io/v1beta1 ClusterRole
  'strimzi-kafka-operator', // undeclared CSV field spec.MinKubeVersion
  'ibm-block-csi-operator-community', // undeclared CSV field owned[].group
  'starboard-operator', // undeclared CSV field spec.miniKubeVersion
  'grafana-operator', // args: null in a Deployment spec
  'hazelcast-operator', // annotations without a value
  'universal-crossplane', // a CSV under the wrong apiVersion; many bundle kinds; AllNamespaces only
  'opentelemetry-operator', // webhooks
  'cloud-native-postgresql', // webhooks
  'hawkbit-operator', // requires Keycloak's API from another package
  'awss3-operator-registry', // requires another package's API
  'keda', // AllNamespaces only
  'tektoncd-operator', // AllNamespaces only
  'kubernetes-nmstate-operator', // pinned to node-role.kubernetes.io/master
  'mongodb-atlas-kubernetes', // AllNamespaces only, bundle ClusterRole and Service
  'kiali', // owned resources without a name (zero values)
] as const;

const globalNs = DefaultGlobalNamespace;
const source = { name: `corpus-sample-${process.pid}`, namespace: globalNs };

/** What a package's head bundle and its InstallPlans show it needed. */
function classesOf(bundle: BundleDoc | undefined, plans: readonly InstallPlan[], csvCount: number): string[] {
  const objects = (bundle?.properties ?? [])
    .filter((p) => p.type === 'olm.bundle.object')
    .map((p) => JSON.parse(Buffer.from((p.value as { data: string }).data, 'base64').toString()) as Obj);
  const csv = objects.find((o) => o.kind === 'ClusterServiceVersion');
  const modes = (csv?.spec?.installModes ?? []).filter((m) => m.supported).map((m) => m.type);
  const conditions = plans.flatMap((p) => p.status?.conditions ?? []);
  const classes: string[] = [];
  if (objects.some((o) => o.kind === 'CustomResourceDefinition' && o.apiVersion?.endsWith('/v1beta1')))
    classes.push('v1beta1 CRDs');
  if (objects.some((o) => o.kind !== 'CustomResourceDefinition' && /\/v1beta1$/.test(o.apiVersion ?? '')))
    classes.push('other removed APIs');
  if (conditions.some((c) => c.type === 'Pruned')) classes.push('undeclared fields');
  if (
    conditions.some(
      (c) => c.type === 'BundleWarnings' && /typed decoding|no value|is not where/.test(c.message ?? ''),
    )
  )
    classes.push('typed decoding');
  if ((csv?.spec?.webhookdefinitions ?? []).length > 0) classes.push('webhooks');
  if (csvCount > 1) classes.push('dependencies');
  if (modes.length === 1 && modes[0] === 'AllNamespaces') classes.push('AllNamespaces only');
  return classes;
}

interface Obj {
  apiVersion?: string;
  kind?: string;
  spec?: {
    installModes?: { type: string; supported: boolean }[];
    webhookdefinitions?: unknown[];
  };
}

describe.skipIf(!corpus)('real operators of the OperatorHub corpus', () => {
  let manager: RunningManager;
  let served: { url: string; close(): void };
  let config: DeclarativeConfig;
  let plans: PackagePlan[];

  beforeAll(async () => {
    manager = await startTestManager();
    ({ config, served } = await serveCorpusCatalog(corpus!, globalNs, source.name));
    plans = planPackages(config, `cs${process.pid % 10000}`).filter((p) =>
      (Sample as readonly string[]).includes(p.package),
    );
  }, 600_000);

  afterAll(async () => {
    const c = client();
    for (const p of plans ?? []) {
      for (const ns of [p.namespace, ...p.extraNamespaces]) {
        await c.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => undefined);
      }
    }
    await c
      .request({
        method: 'DELETE',
        path: `/apis/operators.coreos.com/v1alpha1/namespaces/${globalNs}/catalogsources/${source.name}`,
      })
      .catch(() => undefined);
    c.close();
    served?.close();
    await manager?.stop();
  });

  it('installs every package of the sample, covering each class of trouble', async () => {
    expect(plans.map((p) => p.package).sort()).toEqual([...Sample].sort());
    const c = client();
    for (const p of plans) await subscribe(c, p, source);

    const outcomes = new Map<string, Outcome>();
    const cluster = new ClusterView(c);
    await cluster.start();
    await eventually(
      'every sample package to reach a final outcome',
      async () => {
        for (const p of plans) {
          if (outcomes.get(p.package)?.kind === 'Succeeded') continue;
          outcomes.set(p.package, outcomeOf(p, cluster.view(p.namespace)));
        }
        return [...outcomes.values()].every((o) => o.kind !== 'Pending') ? true : undefined;
      },
      420_000,
    ).catch(() => undefined);

    const failed = plans
      .map((p) => ({ package: p.package, outcome: outcomes.get(p.package) }))
      .filter((x) => x.outcome?.kind !== 'Succeeded');
    expect(failed).toEqual([]);

    const covered = new Set<string>();
    for (const p of plans) {
      const view = cluster.view(p.namespace);
      const bundle = config.bundles.find((b) => b.package === p.package && b.name === p.head);
      for (const k of classesOf(bundle, view.installPlans, view.csvs.length)) covered.add(k);
    }
    expect([...covered].sort()).toEqual(
      [
        'AllNamespaces only',
        'dependencies',
        'other removed APIs',
        'typed decoding',
        'undeclared fields',
        'v1beta1 CRDs',
        'webhooks',
      ].sort(),
    );
    await cluster.stop();
    c.close();
  }, 900_000);
});
