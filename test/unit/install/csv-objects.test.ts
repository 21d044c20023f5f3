/**
 * `desiredCSVObjects`: a CSV, its OperatorGroup's targets and its Subscription's config in, the
 * exact objects the CSV controller applies (and the RBAC it deletes) out, compared with golden
 * files: one for the sample bundle, one for a real CSV of the OperatorHub corpus
 * (BOSUN_CORPUS_DIR; skipped when it is not set).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { ClusterServiceVersion, SubscriptionConfig } from '../../../src/apis/operators.js';
import {
  type CSVObjects,
  type CSVObjectsInput,
  desiredCSVObjects,
  operatorConditionObjects,
  type OperatorGroupTargets,
} from '../../../src/install/index.js';
import { formatProblem } from '../../../src/util/result.js';
import { CSVUid, liveCSV, planSample } from './render.js';
import { fixtures } from './support.js';

const NS = 'operators';

function desired(input: CSVObjectsInput): CSVObjects {
  const r = desiredCSVObjects(input);
  if (!r.ok) throw new Error(r.errors.map(formatProblem).join('; '));
  return r.value;
}

/** One YAML document per object, in apply order, then what is deleted. */
function renderObjects(title: string, objects: CSVObjects): string {
  const parts = [`# ${title}\n`];
  const doc = (label: string, o: unknown) => parts.push(`---\n# ${label}\n${stringify(o)}`);
  for (const o of objects.rbac) doc(`rbac: ${o.kind}/${o.metadata.name}`, o);
  for (const o of objects.operatorCondition) doc(`operatorCondition: ${o.kind}/${o.metadata.name}`, o);
  for (const d of objects.deployments) doc(`deployment: ${d.metadata?.name}`, d);
  parts.push(`---\n# prune\n${stringify(objects.prune)}`);
  return parts.join('');
}

const config: SubscriptionConfig = {
  env: [{ name: 'LOG_LEVEL', value: 'debug' }],
  tolerations: [{ key: 'node-role.kubernetes.io/infra', operator: 'Exists', effect: 'NoSchedule' }],
  resources: { requests: { cpu: '100m', memory: '256Mi' } },
  annotations: { 'example.com/team': 'storage' },
};

describe('desiredCSVObjects golden files', () => {
  it('renders the sample CSV targeting two namespaces, with a Subscription config, as in golden/csv-objects-sample.yaml', async () => {
    const targets: OperatorGroupTargets = { operatorGroup: 'sample-og', namespaces: ['team-a', 'team-b'] };
    const csv = liveCSV(planSample(NS, targets));
    // The group targeted team-old before: its copies are deleted.
    const copiedRbac = [
      { kind: 'Role' as const, namespace: 'team-old', name: 'sample-operator.v0.2.0-sample-operator-old' },
      { kind: 'Role' as const, namespace: 'team-a', name: 'sample-operator.v0.2.0-sample-operator-old' },
    ];
    const text = renderObjects(
      'The sample CSV: OperatorGroup sample-og in operators targeting team-a and team-b, earlier team-old',
      desired({ csv, targets, config, copiedRbac }),
    );
    await expect(text).toMatchFileSnapshot(`${fixtures}golden/csv-objects-sample.yaml`);
  });

  const corpus = process.env.BOSUN_CORPUS_DIR;
  const file = corpus
    ? join(
        corpus,
        'deployment-validation-operator/0.0.10/deploymentvalidationoperator.0.0.10.clusterserviceversion.yaml',
      )
    : undefined;
  const present = file !== undefined && existsSync(file);
  if (!present) {
    console.warn(
      'desiredCSVObjects corpus golden skipped: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
    );
  }
  it.skipIf(!present)(
    'renders deployment-validation-operator 0.0.10 of the corpus for all namespaces as in golden/csv-objects-corpus-dvo.yaml',
    async () => {
      const source = parse(readFileSync(file as string, 'utf8')) as ClusterServiceVersion;
      const csv: ClusterServiceVersion = {
        ...source,
        metadata: { ...source.metadata, namespace: NS, uid: CSVUid },
      };
      const targets: OperatorGroupTargets = { operatorGroup: 'global-operators', namespaces: [''] };
      const text = renderObjects(
        'deployment-validation-operator.v0.0.10 (corpus): OperatorGroup global-operators in operators targeting all namespaces',
        desired({ csv, targets, config }),
      );
      await expect(text).toMatchFileSnapshot(`${fixtures}golden/csv-objects-corpus-dvo.yaml`);
    },
  );
});

describe('desiredCSVObjects', () => {
  const targets: OperatorGroupTargets = { operatorGroup: 'sample-og', namespaces: [NS] };

  it('an invalid install strategy is a problem naming the CSV and the field', () => {
    const csv = liveCSV(planSample(NS, targets));
    const broken = {
      ...csv,
      spec: { ...csv.spec, install: { strategy: 'deployment', spec: { deployments: [{ name: 'x' }] } } },
    } as unknown as ClusterServiceVersion;
    const r = desiredCSVObjects({ csv: broken, targets });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]?.object).toBe('ClusterServiceVersion/sample-operator.v0.2.0');
  });

  it('an OwnNamespace group adds no RBAC: the InstallPlan created the operator namespace’s', () => {
    const objects = desired({ csv: liveCSV(planSample(NS, targets)), targets });
    expect(objects.rbac).toEqual([]);
    expect(objects.deployments.map((d) => d.metadata?.name)).toEqual([
      'sample-operator-controller',
      'sample-operator-webhook',
    ]);
  });
});

describe('operatorConditionObjects', () => {
  const csv: ClusterServiceVersion = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'op.v1', namespace: 'ops', uid: 'u-1' },
    spec: {
      displayName: 'op',
      install: {
        strategy: 'deployment',
        spec: { deployments: [], permissions: [{ serviceAccountName: 'op', rules: [] }] },
      },
    },
  };

  it('names the OperatorCondition after the CSV, owned by it, and lets the operator’s accounts update it', () => {
    const [condition, role, binding] = operatorConditionObjects(csv, [
      { metadata: { name: 'op-controller' } },
    ]);
    expect(condition).toMatchObject({
      kind: 'OperatorCondition',
      metadata: {
        name: 'op.v1',
        namespace: 'ops',
        ownerReferences: [{ kind: 'ClusterServiceVersion', uid: 'u-1' }],
      },
      spec: { serviceAccounts: ['op'], deployments: ['op-controller'] },
    });
    expect(role).toMatchObject({
      kind: 'Role',
      rules: [{ resources: ['operatorconditions', 'operatorconditions/status'], resourceNames: ['op.v1'] }],
    });
    expect(binding).toMatchObject({ subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'ops' }] });
  });

  it('a CSV without permissions gets only the OperatorCondition', () => {
    const bare = {
      ...csv,
      spec: { ...csv.spec, install: { strategy: 'deployment', spec: { deployments: [] } } },
    };
    expect(operatorConditionObjects(bare, []).map((o) => o.kind)).toEqual(['OperatorCondition']);
  });
});
