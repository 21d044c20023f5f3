import type { V1DeploymentSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { deploymentSpecHash, renderDeployments } from '../../../src/install/index.js';
import { formatProblem } from '../../../src/util/result.js';
import { liveCSV, planSample } from './render.js';

const targets = { operatorGroup: 'sample-og', namespaces: ['team-a'] };

function render(csv: ClusterServiceVersion, t = targets) {
  const r = renderDeployments({ csv, targets: t });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

describe('renderDeployments', () => {
  const csv = liveCSV(planSample('operators', targets));

  it('renders one Deployment per strategy entry, in the CSV namespace', () => {
    expect(render(csv).map((d) => `${d.metadata?.namespace}/${d.metadata?.name}`)).toEqual([
      'operators/sample-operator-controller',
      'operators/sample-operator-webhook',
    ]);
  });

  it("overlays the pod template's annotations with the CSV's", () => {
    const annotations = render(csv)[0]?.spec?.template.metadata?.annotations ?? {};
    // the template's own key survives, a key the CSV also sets takes the CSV's value
    expect(annotations['kubectl.kubernetes.io/default-container']).toBe('manager');
    expect(annotations.capabilities).toBe('Basic Install');
  });

  it('takes the OperatorGroup annotations from the targets when given, over stale ones on the CSV', () => {
    const stale = {
      ...csv,
      metadata: {
        ...csv.metadata,
        annotations: { ...csv.metadata.annotations, 'olm.targetNamespaces': 'old' },
      },
    };
    const now = render(stale, { operatorGroup: 'sample-og', namespaces: ['team-b', 'team-c'] });
    expect(now[0]?.spec?.template.metadata?.annotations?.['olm.targetNamespaces']).toBe('team-b,team-c');
    const trusted = renderDeployments({ csv: stale });
    if (!trusted.ok) throw new Error('render failed');
    expect(trusted.value[0]?.spec?.template.metadata?.annotations?.['olm.targetNamespaces']).toBe('old');
  });

  it("labels the Deployment with the strategy's labels, then the owner labels and the spec hash", () => {
    const d = render(csv)[1];
    expect(d?.metadata?.labels).toEqual({
      'app.kubernetes.io/name': 'sample-operator',
      'app.kubernetes.io/component': 'webhook',
      'olm.managed': 'true',
      'olm.owner': 'sample-operator.v0.2.0',
      'olm.owner.kind': 'ClusterServiceVersion',
      'olm.owner.namespace': 'operators',
      'olm.deployment-spec-hash': deploymentSpecHash(d?.spec as V1DeploymentSpec),
    });
  });

  it('leaves the ownerReference out until the CSV has a uid', () => {
    const { uid: _uid, ...metadata } = csv.metadata;
    const r = renderDeployments({ csv: { ...csv, metadata }, targets });
    if (!r.ok) throw new Error('render failed');
    expect(r.value[0]?.metadata?.ownerReferences).toBeUndefined();
    expect(render(csv)[0]?.metadata?.ownerReferences?.[0]?.uid).toBe(csv.metadata.uid);
  });

  it('keeps one revision of history, as OLM does', () => {
    for (const d of render(csv)) expect(d.spec?.revisionHistoryLimit).toBe(1);
  });

  it('does not change the CSV it renders from', () => {
    const before = structuredClone(csv);
    render(csv);
    expect(csv).toEqual(before);
  });

  it('gives the same hash for the same inputs, and a new one when the OperatorGroup targets change', () => {
    const hashes = (t: typeof targets) =>
      render(csv, t).map((d) => d.metadata?.labels?.['olm.deployment-spec-hash']);
    expect(hashes(targets)).toEqual(hashes({ ...targets }));
    expect(hashes(targets)).not.toEqual(hashes({ operatorGroup: 'sample-og', namespaces: [''] }));
  });

  it('refuses a CSV without a namespace or with a broken strategy, naming the field', () => {
    const broken = {
      ...csv,
      metadata: { ...csv.metadata, namespace: undefined },
      spec: { ...csv.spec, install: { strategy: 'deployment', spec: { deployments: [{ name: 'x' }] } } },
    } as unknown as ClusterServiceVersion;
    const r = renderDeployments({ csv: broken });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map(formatProblem)).toEqual([
      'ClusterServiceVersion/sample-operator.v0.2.0: metadata.namespace: must be set',
      'ClusterServiceVersion/sample-operator.v0.2.0: spec.install.spec.deployments[0].spec: is required (an apps/v1 DeploymentSpec)',
    ]);
  });

  // OLM's install fails such a CSV, because the API server refuses the Deployment; Bosun refuses
  // it before creating anything.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a DeploymentSpec under test
  type Loose = Record<string, any>;
  it.each<[string, (spec: Loose) => void, string]>([
    ['no selector', (spec) => delete spec.selector, 'spec.selector: is required'],
    [
      "template labels without the selector's",
      (spec) => (spec.template.metadata.labels = {}),
      "spec.template.metadata.labels: must include the selector's label",
    ],
    [
      'no containers',
      (spec) => (spec.template.spec.containers = []),
      'spec.template.spec.containers: is required',
    ],
    [
      'a container without a name',
      (spec) => delete spec.template.spec.containers[0].name,
      'spec.template.spec.containers[0].name: is required',
    ],
  ])('refuses a strategy Deployment with %s', (_, mutate, want) => {
    const broken = structuredClone(csv);
    mutate(broken.spec.install.spec!.deployments[0]!.spec as never);
    const r = renderDeployments({ csv: broken });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.length).toBeGreaterThan(0);
    for (const e of r.errors.map(formatProblem))
      expect(e).toContain(
        `ClusterServiceVersion/sample-operator.v0.2.0: spec.install.spec.deployments[0].${want}`,
      );
  });

  // OLM installs a CSV without Deployments: nothing runs, and the CSV still succeeds.
  it.each<[string, unknown]>([
    ['no deployments list', { strategy: 'deployment', spec: {} }],
    ['no strategy details', { strategy: 'deployment' }],
  ])('renders no Deployments for a strategy with %s', (_, install) => {
    const r = renderDeployments({
      csv: { ...csv, spec: { ...csv.spec, install } } as unknown as ClusterServiceVersion,
    });
    expect(r).toEqual({ ok: true, value: [] });
  });
});
