import { describe, expect, it } from 'vitest';
import { RemovedApis, removedApi, upgradeManifest } from '../../../../src/bundle/upgrade/index.js';
import { formatProblem } from '../../../../src/util/result.js';

const where = { file: 'manifests/x.yaml', object: 'bundle b.v1, Kind/x' };

function converted(manifest: Record<string, unknown>) {
  const r = upgradeManifest(manifest, where);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

describe('upgradeManifest', () => {
  it('returns served manifests unchanged, without warnings', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } };
    const r = converted(cm);
    expect(r.object).toBe(cm);
    expect(r.from).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });

  it.each([
    ['rbac.authorization.k8s.io/v1beta1', 'ClusterRole', 'rbac.authorization.k8s.io/v1', '1.22'],
    ['rbac.authorization.k8s.io/v1beta1', 'RoleBinding', 'rbac.authorization.k8s.io/v1', '1.22'],
    ['scheduling.k8s.io/v1beta1', 'PriorityClass', 'scheduling.k8s.io/v1', '1.22'],
    ['extensions/v1beta1', 'NetworkPolicy', 'networking.k8s.io/v1', '1.16'],
  ])('%s %s has the same fields under %s', (from, kind, to, release) => {
    const input = {
      apiVersion: from,
      kind,
      metadata: { name: 'x' },
      rules: [{ verbs: ['get'] }],
      value: 1000,
    };
    const r = converted(input);
    expect(r.object).toEqual({ ...input, apiVersion: to });
    expect(r.from).toBe(from);
    expect(r.warnings.map(formatProblem)).toEqual([
      `manifests/x.yaml: bundle b.v1, Kind/x: apiVersion: ${from} is not served by Kubernetes ${release} and later; converted to ${to}`,
    ]);
  });

  it('a PodDisruptionBudget with an empty selector keeps selecting no pods in policy/v1', () => {
    const r = converted({
      apiVersion: 'policy/v1beta1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'pdb' },
      spec: { minAvailable: 1, selector: {} },
    });
    expect(r.object).toEqual({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'pdb' },
      spec: { minAvailable: 1 },
    });
    expect(r.warnings[1]).toMatchObject({
      field: 'spec.selector',
      message: expect.stringMatching(/still selects no pods/),
    });
  });

  it('a PodDisruptionBudget with a real selector converts as it is', () => {
    const spec = { maxUnavailable: 1, selector: { matchLabels: { app: 'db' } } };
    const r = converted({
      apiVersion: 'policy/v1beta1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'p' },
      spec,
    });
    expect(r.object.spec).toEqual(spec);
    expect(r.warnings).toHaveLength(1);
  });

  it('webhook configurations keep v1beta1 behaviour by writing its defaults out', () => {
    const r = converted({
      apiVersion: 'admissionregistration.k8s.io/v1beta1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'v' },
      webhooks: [{ name: 'v.example.com', sideEffects: 'None', clientConfig: { url: 'https://h/v' } }],
    });
    expect(r.object.webhooks).toEqual([
      {
        name: 'v.example.com',
        sideEffects: 'None',
        clientConfig: { url: 'https://h/v' },
        failurePolicy: 'Ignore',
        matchPolicy: 'Exact',
        timeoutSeconds: 30,
        admissionReviewVersions: ['v1beta1'],
      },
    ]);
  });

  it('refuses a webhook whose side effects only its author knows', () => {
    const r = upgradeManifest(
      {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'm' },
        webhooks: [{ name: 'm.example.com' }, { name: 'n.example.com', sideEffects: 'Some' }],
      },
      where,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map(formatProblem)).toEqual([
      'manifests/x.yaml: bundle b.v1, Kind/x: webhooks[0].sideEffects: is unset (Unknown in v1beta1), which admissionregistration.k8s.io/v1 does not allow; set None or NoneOnDryRun if the webhook has no side effects on dry-run requests (needed to convert admissionregistration.k8s.io/v1beta1 to admissionregistration.k8s.io/v1)',
      'manifests/x.yaml: bundle b.v1, Kind/x: webhooks[1].sideEffects: Some, which admissionregistration.k8s.io/v1 does not allow; set None or NoneOnDryRun if the webhook has no side effects on dry-run requests (needed to convert admissionregistration.k8s.io/v1beta1 to admissionregistration.k8s.io/v1)',
    ]);
  });

  it('refuses an API removed without a successor, saying what to do', () => {
    const r = upgradeManifest({
      apiVersion: 'policy/v1beta1',
      kind: 'PodSecurityPolicy',
      metadata: { name: 'psp' },
    });
    expect(r).toEqual({
      ok: false,
      errors: [
        {
          object: 'PodSecurityPolicy/psp',
          field: 'apiVersion',
          message:
            'policy/v1beta1 PodSecurityPolicy was removed in Kubernetes 1.25 without a successor; remove it from the bundle; Pod Security admission (namespace labels) replaces it',
        },
      ],
    });
  });

  it('converts a v1beta1 CRD, reporting the conversion first and then what it changed', () => {
    const r = converted({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.keda.k8s.io' },
      spec: { group: 'keda.k8s.io', version: 'v1', names: { kind: 'Gizmo', plural: 'gizmos' } },
    });
    expect(r.object.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(r.warnings.map((w) => w.field)).toEqual([
      'apiVersion',
      'metadata.annotations["api-approved.kubernetes.io"]',
    ]);
  });

  it('a converted manifest converts no further', () => {
    for (const api of RemovedApis.filter((a) => a.successor !== undefined)) {
      expect(removedApi(api.successor!, api.kinds[0]!)).toBeUndefined();
    }
  });
});
