import type { V1Deployment, V1DeploymentCondition } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { checkStrategy, type DeploymentHealth, deploymentHealth } from '../../../src/install/index.js';
import { deploymentsFor, planSample } from './render.js';

const available = (status: 'True' | 'False', message = ''): V1DeploymentCondition => ({
  type: 'Available',
  status,
  reason: status === 'True' ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
  message,
});
const deadline: V1DeploymentCondition = {
  type: 'Progressing',
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: 'ReplicaSet "op-1" has timed out progressing.',
};

function deployment(
  replicas: number,
  generation: number,
  status: NonNullable<V1Deployment['status']> | undefined,
): V1Deployment {
  return {
    metadata: { name: 'op', generation },
    spec: { replicas, selector: {}, template: {} },
    status,
  };
}

describe('deploymentHealth', () => {
  const cases: { name: string; d: V1Deployment; expected: Pick<DeploymentHealth, 'state' | 'reason'> }[] = [
    {
      name: 'is healthy when rolled out and Available',
      d: deployment(2, 3, {
        observedGeneration: 3,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        conditions: [available('True')],
      }),
      expected: { state: 'Healthy', reason: 'Available' },
    },
    {
      name: 'is progressing when just created and not yet observed',
      d: deployment(1, 1, undefined),
      expected: { state: 'Progressing', reason: 'SpecNotObserved' },
    },
    {
      name: 'is progressing while the latest generation is not observed, even if it was Available',
      d: deployment(1, 4, {
        observedGeneration: 3,
        replicas: 1,
        updatedReplicas: 1,
        conditions: [available('True')],
      }),
      expected: { state: 'Progressing', reason: 'SpecNotObserved' },
    },
    {
      name: 'is unhealthy when the rollout passed its progress deadline',
      d: deployment(1, 2, {
        observedGeneration: 2,
        replicas: 2,
        updatedReplicas: 1,
        conditions: [deadline, available('True')],
      }),
      expected: { state: 'Unhealthy', reason: 'ProgressDeadlineExceeded' },
    },
    {
      name: 'is progressing while fewer replicas than desired run the new template',
      d: deployment(3, 2, {
        observedGeneration: 2,
        replicas: 3,
        updatedReplicas: 1,
        conditions: [available('True')],
      }),
      expected: { state: 'Progressing', reason: 'ReplicasUpdating' },
    },
    {
      name: 'is progressing while replicas of the old template still run',
      d: deployment(1, 2, {
        observedGeneration: 2,
        replicas: 2,
        updatedReplicas: 1,
        conditions: [available('True')],
      }),
      expected: { state: 'Progressing', reason: 'OldReplicasTerminating' },
    },
    {
      name: 'is progressing when rolled out but not Available',
      d: deployment(1, 1, {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 0,
        conditions: [available('False', 'Deployment does not have minimum availability.')],
      }),
      expected: { state: 'Progressing', reason: 'NotAvailable' },
    },
    {
      name: 'is progressing when rolled out without an Available condition',
      d: deployment(1, 1, { observedGeneration: 1, replicas: 1, updatedReplicas: 1 }),
      expected: { state: 'Progressing', reason: 'NotAvailable' },
    },
    {
      name: 'is healthy scaled to zero',
      d: deployment(0, 1, { observedGeneration: 1, conditions: [available('True')] }),
      expected: { state: 'Healthy', reason: 'Available' },
    },
    {
      name: 'counts a missing replicas field as the default of one',
      d: {
        metadata: { name: 'op', generation: 1 },
        spec: { selector: {}, template: {} },
        status: { observedGeneration: 1, replicas: 0, updatedReplicas: 0 },
      },
      expected: { state: 'Progressing', reason: 'ReplicasUpdating' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(deploymentHealth(c.d)).toMatchObject(c.expected);
    });
  }

  it("says what it waits for, with the Deployment's name and the Available condition's message", () => {
    const h = deploymentHealth(
      deployment(2, 1, {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 1,
        conditions: [available('False', 'Deployment does not have minimum availability.')],
      }),
    );
    expect(h.message).toBe(
      'deployment "op" not available (1 of 2 ready): Deployment does not have minimum availability.',
    );
  });
});

describe('checkStrategy', () => {
  const targets = { operatorGroup: 'og', namespaces: ['operators'] };
  const desired = deploymentsFor(planSample('operators', targets), targets);
  /** The rendered Deployments as the API server would return them once rolled out. */
  const rolledOut = (): V1Deployment[] =>
    desired.map((d) => ({
      ...structuredClone(d),
      metadata: { ...structuredClone(d.metadata), generation: 1 },
      status: {
        observedGeneration: 1,
        replicas: d.spec?.replicas,
        updatedReplicas: d.spec?.replicas,
        readyReplicas: d.spec?.replicas,
        availableReplicas: d.spec?.replicas,
        conditions: [available('True')],
      },
    }));

  it('reports installed when every Deployment is as rendered and healthy', () => {
    expect(checkStrategy(desired, rolledOut())).toEqual({ installed: true });
  });

  it('reports a missing Deployment as ComponentMissing, to be applied', () => {
    expect(checkStrategy(desired, rolledOut().slice(1))).toEqual({
      installed: false,
      reason: 'ComponentMissing',
      deployment: 'sample-operator-controller',
      message: 'missing deployment with name=sample-operator-controller',
      unrecoverable: false,
      needsApply: true,
    });
  });

  it('reports a Deployment with another spec hash as DeploymentUpdated, to be applied', () => {
    const live = rolledOut();
    const labels = live[1]?.metadata?.labels ?? {};
    labels['olm.deployment-spec-hash'] = 'stale';
    expect(checkStrategy(desired, live)).toMatchObject({
      installed: false,
      reason: 'DeploymentUpdated',
      deployment: 'sample-operator-webhook',
      needsApply: true,
    });
  });

  it('reports a Deployment that lost an OperatorGroup annotation as AnnotationsMissing', () => {
    const live = rolledOut();
    const annotations = live[0]?.spec?.template.metadata?.annotations ?? {};
    annotations['olm.targetNamespaces'] = 'elsewhere';
    expect(checkStrategy(desired, live)).toMatchObject({
      installed: false,
      reason: 'AnnotationsMissing',
      message:
        'unexpected annotation on deployment sample-operator-controller: expected olm.targetNamespaces=operators, found olm.targetNamespaces=elsewhere',
    });
  });

  it('reports a Deployment still rolling out as Waiting, which waiting fixes', () => {
    const live = rolledOut();
    const status = live[1]?.status ?? {};
    status.updatedReplicas = 1;
    expect(checkStrategy(desired, live)).toMatchObject({
      installed: false,
      reason: 'Waiting',
      unrecoverable: false,
      needsApply: false,
    });
  });

  it('reports a Deployment past its progress deadline as Timeout, which waiting does not fix', () => {
    const live = rolledOut();
    const status = live[0]?.status ?? {};
    status.conditions = [deadline];
    expect(checkStrategy(desired, live)).toMatchObject({
      installed: false,
      reason: 'Timeout',
      unrecoverable: true,
    });
  });

  it('reports an outdated Deployment before an unhealthy one', () => {
    const live = rolledOut();
    const first = live[0] as V1Deployment;
    first.status = { ...first.status, conditions: [deadline] };
    const labels = first.metadata?.labels ?? {};
    labels['olm.deployment-spec-hash'] = 'stale';
    expect(checkStrategy(desired, live)).toMatchObject({ reason: 'DeploymentUpdated' });
  });
});
