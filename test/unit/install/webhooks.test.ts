import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import {
  conversionPatches,
  orphanedConversions,
  staleWebhookConfigurations,
  webhookConfigurationName,
  webhookConfigurations,
  webhookDescriptionHash,
  webhookNamespaceSelector,
} from '../../../src/install/webhooks.js';
import { protectedRule, supportsOnlyAllNamespaces } from '../../../src/olm/webhooks.js';
import {
  conversion,
  CSVName,
  mutatingPods,
  Namespace,
  OGUid,
  operatorGroup,
  validating,
} from './webhooks-support.js';

const csv = { name: CSVName, namespace: Namespace };
const served = { service: 'gadget-controller-manager-service', caPEM: 'CA PEM\n' };
const caBundle = Buffer.from('CA PEM\n').toString('base64');
const ownerLabels = {
  'olm.managed': 'true',
  'olm.owner': CSVName,
  'olm.owner.kind': 'ClusterServiceVersion',
  'olm.owner.namespace': Namespace,
};

describe('webhookConfigurations', () => {
  const selector = { matchLabels: { [`olm.operatorgroup.uid/${OGUid}`]: '' } };

  it('makes a ValidatingWebhookConfiguration holding the one webhook the description declares', () => {
    const [config] = webhookConfigurations({
      csv,
      webhooks: [validating],
      served,
      namespaceSelector: selector,
    });
    expect(config).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: {
        name: webhookConfigurationName(csv, 'vgadget.kb.io'),
        labels: {
          ...ownerLabels,
          'olm.webhook-description-generate-name': 'vgadget.kb.io',
          'olm.webhook-description-hash': webhookDescriptionHash(validating),
        },
      },
      webhooks: [
        {
          name: 'vgadget.kb.io',
          clientConfig: {
            service: {
              namespace: Namespace,
              name: 'gadget-controller-manager-service',
              path: '/validate-example-com-v1-gadget',
              port: 443,
            },
            caBundle,
          },
          rules: validating.rules,
          failurePolicy: 'Fail',
          namespaceSelector: selector,
          sideEffects: 'None',
          timeoutSeconds: 5,
          admissionReviewVersions: ['v1', 'v1beta1'],
        },
      ],
    });
  });

  it('makes a MutatingWebhookConfiguration with objectSelector and reinvocationPolicy, selecting every namespace for an all-namespaces group', () => {
    const [config] = webhookConfigurations({
      csv,
      webhooks: [mutatingPods],
      served,
      namespaceSelector: undefined,
    });
    expect(config?.kind).toBe('MutatingWebhookConfiguration');
    expect((config as unknown as { webhooks: unknown[] }).webhooks).toEqual([
      {
        name: 'mpod.kb.io',
        clientConfig: {
          service: { namespace: Namespace, name: served.service, path: '/mutate-v1-pod', port: 443 },
          caBundle,
        },
        rules: mutatingPods.rules,
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { 'gadget.example.com/inject': 'true' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        reinvocationPolicy: 'IfNeeded',
      },
    ]);
  });

  it('calls port 443 without a path when the description names neither, and never puts a reinvocation policy on a validating webhook', () => {
    const [config] = webhookConfigurations({
      csv,
      webhooks: [
        { ...validating, containerPort: undefined, webhookPath: undefined, reinvocationPolicy: 'IfNeeded' },
      ],
      served,
      namespaceSelector: undefined,
    });
    const w = (config as unknown as { webhooks: Record<string, unknown>[] }).webhooks[0];
    expect((w?.clientConfig as { service: unknown }).service).toEqual({
      namespace: Namespace,
      name: served.service,
      port: 443,
    });
    expect(w).not.toHaveProperty('reinvocationPolicy');
  });

  it('makes nothing of a conversion webhook', () => {
    expect(
      webhookConfigurations({ csv, webhooks: [conversion], served, namespaceSelector: undefined }),
    ).toEqual([]);
  });

  it('names each CSV’s configuration apart, the same way every time, within 63 characters', () => {
    const name = webhookConfigurationName(csv, 'vgadget.kb.io');
    expect(name).toMatch(/^vgadget\.kb\.io-[0-9a-f]{10}$/);
    expect(webhookConfigurationName({ ...csv }, 'vgadget.kb.io')).toBe(name);
    expect(webhookConfigurationName({ ...csv, name: 'gadget-operator.v1.3.0' }, 'vgadget.kb.io')).not.toBe(
      name,
    );
    expect(webhookConfigurationName({ ...csv, namespace: 'team-b' }, 'vgadget.kb.io')).not.toBe(name);
    expect(webhookConfigurationName(csv, `${'x'.repeat(80)}.kb.io`).length).toBeLessThanOrEqual(63);
  });

  it('hashes the description, so a changed description shows', () => {
    expect(webhookDescriptionHash(validating)).toBe(webhookDescriptionHash({ ...validating }));
    expect(webhookDescriptionHash(validating)).not.toBe(
      webhookDescriptionHash({ ...validating, failurePolicy: 'Ignore' }),
    );
  });
});

describe('webhookNamespaceSelector', () => {
  it.each([
    {
      name: 'targetNamespaces: the group label OLM puts on each target',
      spec: { targetNamespaces: ['a', 'b'] },
      want: { matchLabels: { [`olm.operatorgroup.uid/${OGUid}`]: '' } },
    },
    {
      name: 'targetNamespaces win over a selector',
      spec: { targetNamespaces: ['a'], selector: { matchLabels: { x: 'y' } } },
      want: { matchLabels: { [`olm.operatorgroup.uid/${OGUid}`]: '' } },
    },
    {
      name: "a selector: the group's own",
      spec: { selector: { matchExpressions: [{ key: 'team', operator: 'In' as const, values: ['a'] }] } },
      want: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] },
    },
    { name: 'an empty selector', spec: { selector: {} }, want: {} },
    { name: 'neither: every namespace', spec: {}, want: undefined },
    { name: 'no spec: every namespace', spec: undefined, want: undefined },
  ])('$name', ({ spec, want }) => {
    expect(webhookNamespaceSelector(operatorGroup(spec))).toEqual(want);
  });
});

describe('conversionPatches', () => {
  it("points each CRD's conversion at the Service, with OLM's default path", () => {
    const patches = conversionPatches({
      namespace: Namespace,
      webhooks: [
        { ...conversion, conversionCRDs: ['gadgets.example.com', 'gizmos.example.com'] },
        {
          ...conversion,
          webhookPath: undefined,
          containerPort: 9443,
          conversionCRDs: ['widgets.example.com'],
        },
        validating,
      ],
      served,
    });
    expect(patches).toEqual([
      {
        crd: 'gadgets.example.com',
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: {
              service: { namespace: Namespace, name: served.service, path: '/convert', port: 443 },
              caBundle,
            },
            conversionReviewVersions: ['v1'],
          },
        },
      },
      expect.objectContaining({ crd: 'gizmos.example.com' }),
      {
        crd: 'widgets.example.com',
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: {
              service: { namespace: Namespace, name: served.service, path: '/', port: 9443 },
              caBundle,
            },
            conversionReviewVersions: ['v1'],
          },
        },
      },
    ]);
  });
});

describe('orphanedConversions', () => {
  const crd = (name: string, namespace: string | undefined, managed = true) => ({
    metadata: { name, labels: managed ? { 'olm.managed': 'true' } : ({} as Record<string, string>) },
    spec: {
      conversion:
        namespace === undefined
          ? { strategy: 'None' }
          : { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace, name: 'svc' } } } },
    },
  });
  const declaring = (crds: string[]) =>
    ({ spec: { webhookdefinitions: [{ ...conversion, conversionCRDs: crds }] } }) as Pick<
      ClusterServiceVersion,
      'spec'
    >;

  it.each([
    {
      name: 'the webhooks calling the namespace, undeclared',
      crds: [crd('b.example.com', Namespace), crd('a.example.com', Namespace)],
      remaining: [],
      want: ['a.example.com', 'b.example.com'],
    },
    {
      name: 'not one calling another namespace',
      crds: [crd('a.example.com', 'team-b')],
      remaining: [],
      want: [],
    },
    { name: 'not one without a webhook', crds: [crd('a.example.com', undefined)], remaining: [], want: [] },
    {
      name: 'not one Bosun does not manage',
      crds: [crd('a.example.com', Namespace, false)],
      remaining: [],
      want: [],
    },
    {
      name: 'not one a CSV left there declares (the replacing one)',
      crds: [crd('a.example.com', Namespace), crd('b.example.com', Namespace)],
      remaining: [declaring(['a.example.com'])],
      want: ['b.example.com'],
    },
  ])('$name', ({ crds, remaining, want }) => {
    expect(orphanedConversions(crds, Namespace, remaining)).toEqual(want);
  });
});

describe('supportsOnlyAllNamespaces', () => {
  const modes = (...supported: string[]) =>
    ({
      spec: {
        installModes: ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'].map((type) => ({
          type,
          supported: supported.includes(type),
        })),
      },
    }) as Pick<ClusterServiceVersion, 'spec'>;
  it.each([
    { name: 'AllNamespaces only', csv: modes('AllNamespaces'), want: true },
    { name: 'AllNamespaces and OwnNamespace', csv: modes('AllNamespaces', 'OwnNamespace'), want: false },
    { name: 'OwnNamespace only', csv: modes('OwnNamespace'), want: false },
    { name: 'nothing supported', csv: modes(), want: false },
    {
      name: 'no install modes listed (as OLM counts it)',
      csv: { spec: {} } as Pick<ClusterServiceVersion, 'spec'>,
      want: true,
    },
  ])('$name: $want', ({ csv: c, want }) => {
    expect(supportsOnlyAllNamespaces(c)).toBe(want);
  });
});

describe('protectedRule', () => {
  it.each([
    { groups: ['example.com'], resources: ['gadgets'], want: undefined },
    { groups: [''], resources: ['pods', 'namespaces'], want: undefined },
    { groups: ['*'], resources: ['pods'], want: 'webhook rules cannot include all groups' },
    {
      groups: ['apps', 'operators.coreos.com'],
      resources: ['*'],
      want: 'webhook rules cannot include the OLM group',
    },
    { groups: ['admissionregistration.k8s.io'], resources: ['validatingadmissionpolicies'], want: undefined },
    ...[
      '*',
      '*/*',
      'MutatingWebhookConfiguration',
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
    ].map((r) => ({
      groups: ['admissionregistration.k8s.io'],
      resources: [r],
      want: 'webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources',
    })),
  ])('$groups $resources', ({ groups, resources, want }) => {
    expect(protectedRule(groups, resources)).toBe(want);
  });
});

describe('staleWebhookConfigurations', () => {
  it('lists the owned configurations nothing rendered names, of either kind', () => {
    const desired = webhookConfigurations({
      csv,
      webhooks: [validating, mutatingPods],
      served,
      namespaceSelector: undefined,
    });
    const live = [
      ...desired,
      { kind: 'ValidatingWebhookConfiguration', metadata: { name: 'old-validating' } },
      // Same name, other kind: not the rendered one.
      { kind: 'MutatingWebhookConfiguration', metadata: { name: desired[0]?.metadata.name } },
    ];
    expect(staleWebhookConfigurations(desired, live)).toEqual([
      { kind: 'ValidatingWebhookConfiguration', name: 'old-validating' },
      { kind: 'MutatingWebhookConfiguration', name: desired[0]?.metadata.name },
    ]);
    expect(staleWebhookConfigurations(desired, desired)).toEqual([]);
  });
});
