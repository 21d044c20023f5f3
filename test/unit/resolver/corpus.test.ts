/**
 * The resolver on real data: the OperatorHub community catalog of July 2021 (see
 * ../shared/corpus/README.md), imported into one file-based catalog. A fresh Subscription to
 * every package's default channel, each alone in a namespace; a few dependency chains checked
 * by hand against the CSVs; and real conflicts. Skips when BOSUN_CORPUS_DIR is not set.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeclarativeConfig } from '../../../src/apis/fbc.js';
import { importOperatorsDir } from '../../../src/catalog/import.js';
import {
  type Catalog,
  type ResolutionResult,
  resolve,
  type SubscriptionInput,
} from '../../../src/resolver/index.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
const present = corpus !== undefined && existsSync(corpus);
if (!present) {
  console.warn(
    'resolver corpus tests skipped: set BOSUN_CORPUS_DIR to the upstream-community-operators folder of the corpus',
  );
}

const subscribe = (pkg: string, channel = ''): SubscriptionInput => ({
  name: pkg,
  namespace: 'operators',
  package: pkg,
  channel,
  source: 'community',
  sourceNamespace: 'olm',
});

const stepsOf = (r: ResolutionResult) => {
  if (!r.ok) throw new Error(r.message);
  return r.steps.map((s) => `${s.bundle} ${s.reason} ${s.channel}`);
};

describe.skipIf(!present)('resolving the OperatorHub 2021 corpus', () => {
  let config: DeclarativeConfig;
  let community: Catalog;

  beforeAll(async () => {
    const imported = await importOperatorsDir(corpus!);
    config = imported.config;
    community = { name: 'community', namespace: 'olm', priority: 0, config };
  }, 180_000);

  const alone = (sub: SubscriptionInput, catalogs = [community]) =>
    resolve({ namespace: 'operators', catalogs, installed: [], subscriptions: [sub] });

  it("resolves a fresh Subscription to every package's default channel, each alone in a namespace", () => {
    const resolved: string[] = [];
    const withDependencies: string[] = [];
    const unsatisfiable: string[] = [];
    for (const p of config.packages) {
      const r = alone(subscribe(p.name));
      if (!r.ok) {
        unsatisfiable.push(`${p.name}: ${r.reason}: ${r.message}`);
        continue;
      }
      resolved.push(p.name);
      expect(r.steps.at(-1)).toMatchObject({
        package: p.name,
        reason: 'subscription',
        channel: p.defaultChannel,
      });
      if (r.steps.length > 1)
        withDependencies.push(
          `${p.name} <- ${r.steps
            .slice(0, -1)
            .map((s) => s.bundle)
            .join(', ')}`,
        );
    }
    console.info(
      `corpus: ${config.packages.length} packages; ${resolved.length} resolve (${withDependencies.length} with dependencies), ` +
        `${unsatisfiable.length} unsatisfiable\n  ${[...withDependencies, ...unsatisfiable].join('\n  ')}`,
    );
    // Every package of the 2021 catalog resolves on its own: each GVK a default-channel head
    // requires is provided by some other package of the same catalog.
    expect(unsatisfiable).toEqual([]);
    expect(withDependencies.sort()).toEqual([
      'awss3-operator-registry <- lib-bucket-provisioner.v1.0.0',
      'hawkbit-operator <- keycloak-operator.v14.0.0',
      'iot-simulator <- prometheusoperator.0.47.0',
      'node-healthcheck-operator <- poison-pill.v0.1.0',
      'noobaa-operator <- lib-bucket-provisioner.v1.0.0',
      'shipwright-operator <- tektoncd-operator.v0.23.0-2',
    ]);
  });

  // Checked by hand against the CSVs' spec.customresourcedefinitions.required and the
  // providers' owned CRDs in the corpus.
  it.each([
    // awss3operator.v1.0.1 requires objectbucket.io/v1alpha1 ObjectBucket and ObjectBucketClaim.
    [
      'awss3-operator-registry',
      ['lib-bucket-provisioner.v1.0.0 dependency alpha', 'awss3operator.v1.0.1 subscription alpha'],
    ],
    // hawkbit-operator.v0.1.4 requires four keycloak.org/v1alpha1 kinds; keycloak-operator owns them.
    [
      'hawkbit-operator',
      ['keycloak-operator.v14.0.0 dependency alpha', 'hawkbit-operator.v0.1.4 subscription alpha'],
    ],
    // node-healthcheck's metadata/dependencies.yaml asks for PoisonPillRemediation.
    [
      'node-healthcheck-operator',
      ['poison-pill.v0.1.0 dependency alpha', 'node-healthcheck-operator.v0.0.2 subscription alpha'],
    ],
    // shipwright-operator.v0.1.0 requires operator.tekton.dev/v1alpha1 TektonPipeline.
    [
      'shipwright-operator',
      ['tektoncd-operator.v0.23.0-2 dependency alpha', 'shipwright-operator.v0.1.0 subscription alpha'],
    ],
  ])('%s pulls in its provider', (pkg, steps) => {
    expect(stepsOf(alone(subscribe(pkg)))).toEqual(steps);
  });

  it('resolves kogito-operator v0.11.0 by startingCSV with its Infinispan, Kafka and Keycloak providers', () => {
    const r = alone({ ...subscribe('kogito-operator', 'alpha'), startingCSV: 'kogito-operator.v0.11.0' });
    if (!r.ok) throw new Error(r.message);
    expect(r.steps.at(-1)).toMatchObject({ bundle: 'kogito-operator.v0.11.0', reason: 'subscription' });
    expect(
      r.steps
        .filter((s) => s.reason === 'dependency')
        .map((s) => s.package)
        .sort(),
    ).toEqual(['infinispan', 'keycloak-operator', 'strimzi-kafka-operator'].sort());
  });

  it('falls back below the channel head when the head needs a provider the catalog lacks, and explains the head', () => {
    const withoutKeycloak: Catalog = {
      ...community,
      config: {
        ...config,
        packages: config.packages.filter((p) => p.name !== 'keycloak-operator'),
        channels: config.channels.filter((c) => c.package !== 'keycloak-operator'),
        bundles: config.bundles.filter((b) => b.package !== 'keycloak-operator'),
      },
    };
    // hawkbit-operator.v0.1.4 is the only one of its channel that requires the keycloak.org kinds.
    const r = resolve(
      {
        namespace: 'operators',
        catalogs: [withoutKeycloak],
        installed: [],
        subscriptions: [subscribe('hawkbit-operator')],
      },
      { explain: true },
    );
    expect(stepsOf(r)).toEqual(['hawkbit-operator.v0.1.3 subscription alpha']);
    if (!r.ok) return;
    const passed = r.explanation?.subscriptions[0]?.passedOver ?? [];
    expect(passed.map((p) => p.candidate.bundle)).toEqual(['hawkbit-operator.v0.1.4']);
    expect(passed[0]?.why).toContain('keycloak.org/v1alpha1 Keycloak');
  });

  it('refuses two operators that provide the same API in one namespace: argocd-operator and argocd-operator-helm', () => {
    const r = resolve({
      namespace: 'operators',
      catalogs: [community],
      installed: [],
      subscriptions: [subscribe('argocd-operator'), subscribe('argocd-operator-helm')],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // Every bundle of argocd-operator-helm's channel provides ArgoCD, so falling back down the
    // channel cannot help.
    expect(r.message).toBe(
      'subscription argocd-operator-helm: none of its 6 candidates can be used: ' +
        'argocd-operator-helm.v0.0.7 provides argoproj.io/v1alpha1 ArgoCD, which argocd-operator.v0.0.15 already provides: a namespace can have only one provider of an API; ' +
        'argocd-operator-helm.v0.0.6 provides argoproj.io/v1alpha1 ArgoCD, which argocd-operator.v0.0.15 already provides: a namespace can have only one provider of an API; ' +
        'argocd-operator-helm.v0.0.5 provides argoproj.io/v1alpha1 ArgoCD, which argocd-operator.v0.0.15 already provides: a namespace can have only one provider of an API; ' +
        'and 3 more',
    );
    expect(r.explanation.conflict?.map((c) => c.kind)).toEqual([
      'subscription',
      'subscription',
      'one-provider-per-api',
    ]);
  });
});
