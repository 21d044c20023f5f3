import type { V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SubscriptionConfig } from '../../../src/apis/operators.js';
import { applySubscriptionConfig, renderDeployments } from '../../../src/install/index.js';
import { deploymentsFor, liveCSV, planSample } from './render.js';
import { fixtures } from './support.js';

/** A Deployment with one pod spec, for table cases. */
function deployment(pod: Partial<V1PodSpec>, labels: Record<string, string> = { app: 'op' }): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'op', annotations: { existing: 'deployment' } },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels, annotations: { existing: 'pod' } }, spec: { containers: [], ...pod } },
    },
  };
}

const pod = (d: V1Deployment) => d.spec?.template.spec as V1PodSpec;

interface Case {
  name: string;
  pod: Partial<V1PodSpec>;
  config: SubscriptionConfig;
  expected: Partial<V1PodSpec>;
}

const cases: Case[] = [
  {
    name: 'env replaces a variable of the same name in place and appends new ones in config order',
    pod: {
      containers: [
        {
          name: 'a',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
      ],
    },
    config: {
      env: [
        { name: 'C', value: '3' },
        { name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'D', value: '4' },
      ],
    },
    expected: {
      containers: [
        {
          name: 'a',
          env: [
            { name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'B', value: '2' },
            { name: 'C', value: '3' },
            { name: 'D', value: '4' },
          ],
        },
      ],
    },
  },
  {
    name: 'env goes into every container but not init containers',
    pod: {
      initContainers: [{ name: 'init' }],
      containers: [{ name: 'a' }, { name: 'b', env: [{ name: 'X', value: 'x' }] }],
    },
    config: { env: [{ name: 'Y', value: 'y' }] },
    expected: {
      initContainers: [{ name: 'init' }],
      containers: [
        { name: 'a', env: [{ name: 'Y', value: 'y' }] },
        {
          name: 'b',
          env: [
            { name: 'X', value: 'x' },
            { name: 'Y', value: 'y' },
          ],
        },
      ],
    },
  },
  {
    name: 'env listed twice in the config keeps the last value',
    pod: { containers: [{ name: 'a' }] },
    config: {
      env: [
        { name: 'Z', value: 'first' },
        { name: 'Z', value: 'last' },
      ],
    },
    expected: { containers: [{ name: 'a', env: [{ name: 'Z', value: 'last' }] }] },
  },
  {
    name: 'envFrom appends sources that are not already there',
    pod: { containers: [{ name: 'a', envFrom: [{ configMapRef: { name: 'cm' } }] }] },
    config: { envFrom: [{ configMapRef: { name: 'cm' } }, { secretRef: { name: 'license' } }] },
    expected: {
      containers: [
        { name: 'a', envFrom: [{ configMapRef: { name: 'cm' } }, { secretRef: { name: 'license' } }] },
      ],
    },
  },
  {
    name: 'volumes replace a volume of the same name and append the rest',
    pod: {
      volumes: [
        { name: 'config', configMap: { name: 'old' } },
        { name: 'tmp', emptyDir: {} },
      ],
    },
    config: {
      volumes: [
        { name: 'config', secret: { secretName: 'new' } },
        { name: 'certs', secret: { secretName: 'certs' } },
      ],
    },
    expected: {
      volumes: [
        { name: 'config', secret: { secretName: 'new' } },
        { name: 'tmp', emptyDir: {} },
        { name: 'certs', secret: { secretName: 'certs' } },
      ],
    },
  },
  {
    name: 'volumeMounts replace a mount of the same name in every container and append the rest',
    pod: {
      containers: [{ name: 'a', volumeMounts: [{ name: 'config', mountPath: '/old' }] }, { name: 'b' }],
    },
    config: {
      volumeMounts: [
        { name: 'config', mountPath: '/etc/config' },
        { name: 'certs', mountPath: '/certs' },
      ],
    },
    expected: {
      containers: [
        {
          name: 'a',
          volumeMounts: [
            { name: 'config', mountPath: '/etc/config' },
            { name: 'certs', mountPath: '/certs' },
          ],
        },
        {
          name: 'b',
          volumeMounts: [
            { name: 'config', mountPath: '/etc/config' },
            { name: 'certs', mountPath: '/certs' },
          ],
        },
      ],
    },
  },
  {
    name: 'tolerations are appended unless an identical one is there',
    pod: { tolerations: [{ key: 'infra', operator: 'Exists', effect: 'NoSchedule' }] },
    config: {
      tolerations: [
        { effect: 'NoSchedule', operator: 'Exists', key: 'infra' },
        { key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoExecute' },
      ],
    },
    expected: {
      tolerations: [
        { key: 'infra', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoExecute' },
      ],
    },
  },
  {
    name: "resources replace every container's resources",
    pod: { containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }, { name: 'b' }] },
    config: { resources: { requests: { memory: '1Gi' } } },
    expected: {
      containers: [
        { name: 'a', resources: { requests: { memory: '1Gi' } } },
        { name: 'b', resources: { requests: { memory: '1Gi' } } },
      ],
    },
  },
  {
    name: 'resources set to {} clear the containers’ resources',
    pod: { containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }] },
    config: { resources: {} },
    expected: { containers: [{ name: 'a', resources: {} }] },
  },
  {
    name: 'nodeSelector replaces the pod node selector, and {} clears it',
    pod: { nodeSelector: { zone: 'a' } },
    config: { nodeSelector: {} },
    expected: { nodeSelector: {} },
  },
  {
    name: 'affinity replaces only the parts it sets',
    pod: {
      affinity: {
        nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] },
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] },
      },
    },
    config: {
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
      },
    },
    expected: {
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] },
      },
    },
  },
  {
    name: 'affinity part set to {} removes that part only',
    pod: {
      affinity: {
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'host' }] },
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] },
      },
    },
    config: { affinity: { podAntiAffinity: {} } },
    expected: {
      affinity: {
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'host' }] },
      },
    },
  },
  {
    name: 'affinity: {} removes all affinity',
    pod: {
      affinity: {
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'host' }] },
      },
    },
    config: { affinity: {} },
    expected: {},
  },
  {
    name: 'removing the last affinity part leaves no empty affinity behind',
    pod: { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } } },
    config: { affinity: { nodeAffinity: {} } },
    expected: {},
  },
  {
    name: 'fields the config leaves out stay as they are',
    pod: { containers: [{ name: 'a', env: [{ name: 'A', value: '1' }] }], nodeSelector: { zone: 'a' } },
    config: {},
    expected: { containers: [{ name: 'a', env: [{ name: 'A', value: '1' }] }], nodeSelector: { zone: 'a' } },
  },
];

describe('applySubscriptionConfig', () => {
  for (const c of cases) {
    it(c.name, () => {
      const input = deployment(c.pod);
      const before = structuredClone(input);
      const out = applySubscriptionConfig(input, c.config);
      expect(pod(out)).toEqual({ containers: [], ...c.expected });
      // the input is not changed
      expect(input).toEqual(before);
    });
  }

  it('adds annotations to the Deployment and its pod template without overriding existing ones', () => {
    const out = applySubscriptionConfig(deployment({}), {
      annotations: { existing: 'config', team: 'storage' },
    });
    expect(out.metadata?.annotations).toEqual({ existing: 'deployment', team: 'storage' });
    expect(out.spec?.template.metadata?.annotations).toEqual({ existing: 'pod', team: 'storage' });
  });

  it('applies only to Deployments whose pod labels the selector matches', () => {
    const config: SubscriptionConfig = {
      selector: { matchLabels: { app: 'op' } },
      nodeSelector: { zone: 'b' },
    };
    expect(pod(applySubscriptionConfig(deployment({}), config)).nodeSelector).toEqual({ zone: 'b' });
    expect(
      pod(applySubscriptionConfig(deployment({}, { app: 'other' }), config)).nodeSelector,
    ).toBeUndefined();
  });

  it('treats an empty selector as selecting every Deployment', () => {
    const out = applySubscriptionConfig(deployment({}, { app: 'other' }), {
      selector: {},
      nodeSelector: { zone: 'b' },
    });
    expect(pod(out).nodeSelector).toEqual({ zone: 'b' });
  });
});

describe('Subscription config in rendered Deployments', () => {
  const targets = { operatorGroup: 'sample-og', namespaces: ['operators'] };
  const config: SubscriptionConfig = {
    env: [
      { name: 'LOG_LEVEL', value: 'debug' },
      { name: 'HTTPS_PROXY', value: 'http://proxy.example.com:3128' },
    ],
    envFrom: [{ secretRef: { name: 'sample-license' } }],
    volumes: [{ name: 'trusted-ca', configMap: { name: 'trusted-ca' } }],
    volumeMounts: [{ name: 'trusted-ca', mountPath: '/etc/pki/ca-trust/extracted/pem', readOnly: true }],
    tolerations: [{ key: 'node-role.kubernetes.io/infra', operator: 'Exists', effect: 'NoSchedule' }],
    resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } },
    nodeSelector: { 'node-role.kubernetes.io/infra': '' },
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] },
          ],
        },
      },
    },
    annotations: { 'example.com/team': 'storage', capabilities: 'not this one' },
  };

  it('renders the sample Deployments with a full config as in golden/config-merge.yaml', async () => {
    const steps = planSample('operators', targets);
    const r = renderDeployments({ csv: liveCSV(steps), targets, config });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const text = r.value.map((d) => `---\n${stringify(d)}`).join('');
    await expect(
      `# The sample Deployments with a Subscription config of every field\n${text}`,
    ).toMatchFileSnapshot(`${fixtures}golden/config-merge.yaml`);
  });

  it('OLM-owned env wins over the config: OPERATOR_CONDITION_NAME names the CSV', () => {
    const steps = planSample('operators', targets);
    const r = renderDeployments({
      csv: liveCSV(steps),
      targets,
      config: { env: [{ name: 'OPERATOR_CONDITION_NAME', value: 'mine' }] },
    });
    if (!r.ok) throw new Error('render failed');
    for (const d of r.value) {
      for (const c of d.spec?.template.spec?.containers ?? []) {
        expect(c.env?.filter((e) => e.name === 'OPERATOR_CONDITION_NAME')).toEqual([
          { name: 'OPERATOR_CONDITION_NAME', value: 'sample-operator.v0.2.0' },
        ]);
      }
    }
  });

  it('changes the spec hash when the config changes, and only then', () => {
    const steps = planSample('operators', targets);
    const hash = (c?: SubscriptionConfig) => {
      const r = renderDeployments({ csv: liveCSV(steps), targets, config: c });
      if (!r.ok) throw new Error('render failed');
      return r.value.map((d) => d.metadata?.labels?.['olm.deployment-spec-hash']);
    };
    expect(hash(config)).toEqual(hash(structuredClone(config)));
    expect(hash(config)).not.toEqual(hash());
    expect(hash()).toEqual(
      deploymentsFor(steps, targets).map((d) => d.metadata?.labels?.['olm.deployment-spec-hash']),
    );
  });
});
