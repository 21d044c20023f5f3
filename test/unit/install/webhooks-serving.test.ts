import type { V1DeploymentSpec } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, WebhookDescription } from '../../../src/apis/operators.js';
import {
  caHash,
  type IssuedCertificate,
  issueServingCertificate,
  type ServingCertificate,
} from '../../../src/install/certificates.js';
import { renderDeployments } from '../../../src/install/deployments.js';
import type { StrategyCheck } from '../../../src/install/health.js';
import {
  checkServing,
  type LiveServing,
  mountServingCertificate,
  renderServing,
  type ServingDeployment,
  servingDeployments,
  servingObjects,
  withServingCheck,
} from '../../../src/install/serving.js';
import { webhookConfigurationName } from '../../../src/install/webhooks.js';
import { formatProblem } from '../../../src/util/result.js';
import {
  conversion,
  CSVName,
  CSVUid,
  mutatingPods,
  Namespace,
  OGUid,
  operatorGroup,
  servingCSV,
  validating,
} from './webhooks-support.js';

const now = Date.UTC(2026, 2, 1, 10, 0, 0);
let controllerCert: IssuedCertificate;
let apiCert: IssuedCertificate;

beforeAll(async () => {
  [controllerCert, apiCert] = await Promise.all([
    issueServingCertificate({ hosts: ['gadget-controller-manager-service.team-a'], now }),
    issueServingCertificate({ hosts: ['gadget-api-server-service.team-a'], now }),
  ]);
});

function serving(csv: ClusterServiceVersion): ServingDeployment[] {
  const r = servingDeployments(csv);
  if (!r.ok) throw new Error(r.errors.map(formatProblem).join('\n'));
  return r.value;
}

const decode = (s: unknown) => Buffer.from(String(s), 'base64').toString('utf8');

describe('servingDeployments', () => {
  it('is empty for a CSV without webhooks or API services', () => {
    const csv = servingCSV({ webhooks: [] });
    expect(serving(csv)).toEqual([]);
  });

  it('names each serving Deployment its Service, Secret, hosts, ports and ServiceAccount, in strategy order', () => {
    const [controller, api] = serving(servingCSV({ apiService: true }));
    expect(controller).toEqual({
      deployment: 'gadget-controller-manager',
      namespace: Namespace,
      service: 'gadget-controller-manager-service',
      secret: 'gadget-controller-manager-service-cert',
      hosts: [
        'gadget-controller-manager-service.team-a',
        'gadget-controller-manager-service.team-a.svc',
        'gadget-controller-manager-service.team-a.svc.cluster.local',
      ],
      ports: [{ name: '443', port: 443, targetPort: 9443 }],
      selector: { 'control-plane': 'controller-manager' },
      serviceAccount: 'gadget-operator',
      webhooks: [validating, mutatingPods],
      apiServices: [],
    });
    expect(api).toMatchObject({
      deployment: 'gadget-api-server',
      service: 'gadget-api-server-service',
      ports: [{ name: '8443', port: 8443, targetPort: 8443 }],
      selector: { app: 'gadget-api' },
      // The template names none: OLM binds (and sets) `default`.
      serviceAccount: 'default',
      webhooks: [],
    });
  });

  it.each([
    {
      name: 'no containerPort: 443, targeting the same port',
      hooks: [{ ...validating, containerPort: undefined, targetPort: undefined }],
      ports: [{ name: '443', port: 443, targetPort: 443 }],
    },
    {
      name: 'a named targetPort',
      hooks: [{ ...validating, targetPort: 'webhook-server' }],
      ports: [{ name: '443', port: 443, targetPort: 'webhook-server' }],
    },
    {
      name: 'two ports',
      hooks: [validating, { ...mutatingPods, containerPort: 8443, targetPort: undefined }],
      ports: [
        { name: '443', port: 443, targetPort: 9443 },
        { name: '8443', port: 8443, targetPort: 8443 },
      ],
    },
    {
      name: 'one port claimed twice: the first target wins',
      hooks: [validating, { ...mutatingPods, targetPort: 9999 }],
      ports: [{ name: '443', port: 443, targetPort: 9443 }],
    },
  ])('gives the Service one port per containerPort: $name', ({ hooks, ports }) => {
    expect(serving(servingCSV({ webhooks: hooks as WebhookDescription[] }))[0]?.ports).toEqual(ports);
  });

  it('makes a Service name of a Deployment name with dots', () => {
    const csv = servingCSV();
    const strategy = csv.spec.install.spec;
    if (strategy?.deployments[0]) strategy.deployments[0].name = 'gadget.controller';
    csv.spec.webhookdefinitions = [{ ...validating, deploymentName: 'gadget.controller' }];
    expect(serving(csv)[0]).toMatchObject({
      service: 'gadget-controller-service',
      secret: 'gadget-controller-service-cert',
    });
  });

  const allNamespacesOnly = [
    { type: 'OwnNamespace', supported: false },
    { type: 'SingleNamespace', supported: false },
    { type: 'MultiNamespace', supported: false },
    { type: 'AllNamespaces', supported: true },
  ] as ClusterServiceVersion['spec']['installModes'];

  it.each([
    {
      name: 'a repeated generateName',
      csv: () =>
        servingCSV({ webhooks: [validating, { ...mutatingPods, generateName: validating.generateName }] }),
      want: [
        'InvalidWebhookDescription: spec.webhookdefinitions[1].generateName: CSV contains repeated WebhookDescription name vgadget.kb.io',
      ],
    },
    {
      name: 'a rule on every group',
      csv: () =>
        servingCSV({ webhooks: [{ ...validating, rules: [{ apiGroups: ['*'], resources: ['pods'] }] }] }),
      want: [
        'InvalidWebhookDescription: spec.webhookdefinitions[0].rules[0]: webhook rules cannot include all groups',
      ],
    },
    {
      name: "a rule on OLM's group",
      csv: () =>
        servingCSV({
          webhooks: [
            { ...validating, rules: [{ apiGroups: ['operators.coreos.com'], resources: ['subscriptions'] }] },
          ],
        }),
      want: [
        'InvalidWebhookDescription: spec.webhookdefinitions[0].rules[0]: webhook rules cannot include the OLM group',
      ],
    },
    {
      name: 'a rule on webhook configurations',
      csv: () =>
        servingCSV({
          webhooks: [
            {
              ...mutatingPods,
              rules: [
                {
                  apiGroups: ['admissionregistration.k8s.io'],
                  resources: ['validatingwebhookconfigurations'],
                },
              ],
            },
          ],
        }),
      want: [
        'InvalidWebhookDescription: spec.webhookdefinitions[0].rules[0]: webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources',
      ],
    },
    {
      name: 'a conversion webhook on a CSV that supports more than AllNamespaces',
      csv: () => servingCSV({ webhooks: [conversion] }),
      want: [
        'InstallComponentFailed: spec.webhookdefinitions[0].type: unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces',
      ],
    },
    {
      name: 'a conversion webhook without CRDs, and one for a CRD the CSV does not own',
      csv: () =>
        servingCSV({
          installModes: allNamespacesOnly,
          webhooks: [
            { ...conversion, conversionCRDs: [] },
            { ...conversion, generateName: 'c2.kb.io', conversionCRDs: ['others.example.com'] },
          ],
        }),
      want: [
        'InstallComponentFailed: spec.webhookdefinitions[0].conversionCRDs: unable to manage conversion webhook: conversion webhook must have at least one CRD specified',
        `InstallComponentFailed: spec.webhookdefinitions[1].conversionCRDs[0]: unable to manage conversion webhook: csv ${CSVName} does not own CRD others.example.com`,
      ],
    },
    {
      name: 'descriptions naming no Deployment of the strategy',
      csv: () => {
        const csv = servingCSV({ apiService: true, webhooks: [{ ...validating, deploymentName: 'nope' }] });
        const owned = csv.spec.apiservicedefinitions?.owned?.[0];
        if (owned) owned.deploymentName = undefined;
        return csv;
      },
      want: [
        'InvalidWebhookDescription: spec.webhookdefinitions[0].deploymentName: "nope" names no Deployment of the install strategy (gadget-controller-manager, gadget-api-server): it must name the Deployment that serves webhook vgadget.kb.io',
        'InvalidInstallStrategy: spec.apiservicedefinitions.owned[0].deploymentName: "" names no Deployment of the install strategy (gadget-controller-manager, gadget-api-server): it must name the Deployment that serves v1beta1.widgets.example.com',
      ],
    },
  ])('refuses $name, with the reason the CSV fails with', ({ csv, want }) => {
    const r = servingDeployments(csv());
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((p) => `${p.reason}: ${p.field}: ${p.message}`)).toEqual(want);
    for (const p of r.errors) expect(p.object).toBe(`ClusterServiceVersion/${CSVName}`);
  });

  it('accepts a conversion webhook of an AllNamespaces-only CSV for a CRD it owns', () => {
    const csv = servingCSV({ installModes: allNamespacesOnly, webhooks: [validating, conversion] });
    expect(serving(csv)[0]?.webhooks).toEqual([validating, conversion]);
  });
});

describe('mountServingCertificate', () => {
  const csv = servingCSV();
  const spec = (): V1DeploymentSpec =>
    structuredClone(csv.spec.install.spec?.deployments[0]?.spec as V1DeploymentSpec);
  const cert = { secret: 'gadget-controller-manager-service-cert', caHash: 'abc123' };
  const apiserviceVolume = {
    name: 'apiservice-cert',
    secret: {
      secretName: cert.secret,
      items: [
        { key: 'tls.crt', path: 'apiserver.crt' },
        { key: 'tls.key', path: 'apiserver.key' },
      ],
    },
  };
  const webhookVolume = {
    name: 'webhook-cert',
    secret: {
      secretName: cert.secret,
      items: [
        { key: 'tls.crt', path: 'tls.crt' },
        { key: 'tls.key', path: 'tls.key' },
      ],
    },
  };
  const apiserviceMount = { name: 'apiservice-cert', mountPath: '/apiserver.local.config/certificates' };
  const webhookMount = { name: 'webhook-cert', mountPath: '/tmp/k8s-webhook-server/serving-certs' };

  it("mounts the Secret at OLM's two paths in every container and puts the CA hash on the pod template", () => {
    const out = mountServingCertificate(spec(), cert);
    expect(out.template.spec?.volumes).toEqual([
      { name: 'config', configMap: { name: 'gadget-config' } },
      apiserviceVolume,
      webhookVolume,
    ]);
    expect(out.template.spec?.containers.map((c) => c.volumeMounts)).toEqual([
      [{ name: 'config', mountPath: '/etc/gadget' }, apiserviceMount, webhookMount],
      [apiserviceMount, webhookMount],
    ]);
    expect(out.template.metadata?.annotations).toEqual({ olmcahash: 'abc123' });
    expect(out.template.spec?.serviceAccountName).toBe('gadget-operator');
  });

  it.each([
    {
      name: 'a volume of the same name is replaced',
      edit: (s: V1DeploymentSpec) => {
        s.template.spec?.volumes?.push({ name: 'webhook-cert', emptyDir: {} });
      },
      check: (out: V1DeploymentSpec) =>
        expect(out.template.spec?.volumes?.filter((v) => v.name === 'webhook-cert')).toEqual([webhookVolume]),
    },
    {
      name: 'a mount at the same path is replaced',
      edit: (s: V1DeploymentSpec) => {
        s.template.spec?.containers[0]?.volumeMounts?.push({
          name: 'cert',
          mountPath: '/tmp/k8s-webhook-server/serving-certs',
          readOnly: true,
        });
      },
      check: (out: V1DeploymentSpec) =>
        expect(out.template.spec?.containers[0]?.volumeMounts).toEqual([
          { name: 'config', mountPath: '/etc/gadget' },
          webhookMount,
          apiserviceMount,
        ]),
    },
    {
      name: 'a mount of the same name elsewhere is kept',
      edit: (s: V1DeploymentSpec) => {
        s.template.spec?.containers[1]?.volumeMounts?.push({ name: 'webhook-cert', mountPath: '/certs' });
        if (s.template.spec?.containers[1]) {
          s.template.spec.containers[1].volumeMounts = [{ name: 'webhook-cert', mountPath: '/certs' }];
        }
      },
      check: (out: V1DeploymentSpec) =>
        expect(out.template.spec?.containers[1]?.volumeMounts).toEqual([
          { name: 'webhook-cert', mountPath: '/certs' },
          apiserviceMount,
        ]),
    },
    {
      name: 'no ServiceAccount becomes default',
      edit: (s: V1DeploymentSpec) => {
        if (s.template.spec) delete s.template.spec.serviceAccountName;
      },
      check: (out: V1DeploymentSpec) => expect(out.template.spec?.serviceAccountName).toBe('default'),
    },
    {
      name: 'template annotations are kept',
      edit: (s: V1DeploymentSpec) => {
        s.template.metadata = { ...s.template.metadata, annotations: { a: 'b', olmcahash: 'old' } };
      },
      check: (out: V1DeploymentSpec) =>
        expect(out.template.metadata?.annotations).toEqual({ a: 'b', olmcahash: 'abc123' }),
    },
  ])('$name', ({ edit, check }) => {
    const s = spec();
    edit(s);
    const before = structuredClone(s);
    const out = mountServingCertificate(s, cert);
    check(out);
    expect(s).toEqual(before);
    // Mounting again changes nothing.
    expect(mountServingCertificate(out, cert)).toEqual(out);
  });

  it("changes the Deployment's spec hash when the CA changes, and only the serving Deployment's", () => {
    const csv = servingCSV({ apiService: true });
    const render = (hash: string) => {
      const r = renderDeployments({
        csv,
        servingCertificates: { 'gadget-controller-manager': { secret: 's', caHash: hash } },
      });
      if (!r.ok) throw new Error('render failed');
      return r.value.map((d) => d.metadata?.labels?.['olm.deployment-spec-hash']);
    };
    const [a1, b1] = render('one');
    const [a2, b2] = render('two');
    expect(a1).not.toBe(a2);
    expect(b1).toBe(b2);
    const r = renderDeployments({
      csv,
      servingCertificates: { 'gadget-controller-manager': { secret: 's', caHash: 'one' } },
    });
    const d = r.ok ? r.value[0] : undefined;
    expect(d?.spec?.template.metadata?.annotations?.olmcahash).toBe('one');
    expect(d?.spec?.template.spec?.containers[0]?.env).toEqual([
      { name: 'OPERATOR_CONDITION_NAME', value: CSVName },
    ]);
  });
});

describe('servingObjects', () => {
  it('creates the Service, the TLS Secret and the RBAC around them, owned and labelled by the CSV', () => {
    const [controller] = serving(servingCSV());
    const objects = servingObjects(
      { name: CSVName, namespace: Namespace, uid: CSVUid },
      controller!,
      controllerCert,
    );
    const labels = {
      'olm.managed': 'true',
      'olm.owner': CSVName,
      'olm.owner.kind': 'ClusterServiceVersion',
      'olm.owner.namespace': Namespace,
    };
    const ownerReferences = [
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        name: CSVName,
        uid: CSVUid,
        controller: false,
        blockOwnerDeletion: false,
      },
    ];
    const subject = { kind: 'ServiceAccount', name: 'gadget-operator', namespace: Namespace };
    const secret = 'gadget-controller-manager-service-cert';
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      `Service ${Namespace}/gadget-controller-manager-service`,
      `Secret ${Namespace}/${secret}`,
      `Role ${Namespace}/${secret}`,
      `RoleBinding ${Namespace}/${secret}`,
      'ClusterRoleBinding /gadget-controller-manager-service.team-a-system:auth-delegator',
      'RoleBinding kube-system/gadget-controller-manager-service.team-a-auth-reader',
    ]);
    const [service, sec, role, binding, crb, reader] = objects;
    expect(service).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'gadget-controller-manager-service', namespace: Namespace, labels, ownerReferences },
      spec: {
        ports: [{ name: '443', port: 443, targetPort: 9443 }],
        selector: { 'control-plane': 'controller-manager' },
      },
    });
    expect(sec).toMatchObject({
      type: 'kubernetes.io/tls',
      metadata: { labels, ownerReferences, annotations: { olmcahash: caHash(controllerCert.caPEM) } },
    });
    const data = (sec as unknown as { data: Record<string, string> }).data;
    expect(Object.keys(data).sort()).toEqual(['olmCAKey', 'tls.crt', 'tls.key']);
    expect(decode(data['tls.crt'])).toBe(controllerCert.certPEM);
    expect(decode(data['tls.key'])).toBe(controllerCert.keyPEM);
    expect(decode(data.olmCAKey)).toBe(controllerCert.caPEM);
    expect(role?.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: [secret], verbs: ['get'] },
    ]);
    expect(binding).toMatchObject({ roleRef: { kind: 'Role', name: secret }, subjects: [subject] });
    expect(crb).toMatchObject({
      metadata: { labels },
      roleRef: { kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [subject],
    });
    expect(crb?.metadata.ownerReferences).toBeUndefined();
    expect(reader).toMatchObject({
      metadata: { labels },
      roleRef: { kind: 'Role', name: 'extension-apiserver-authentication-reader' },
      subjects: [subject],
    });
    expect(reader?.metadata.ownerReferences).toBeUndefined();
  });
});

describe('renderServing', () => {
  const og = operatorGroup({ targetNamespaces: [Namespace] });
  const certs = (): Map<string, ServingCertificate> =>
    new Map([
      ['gadget-controller-manager', controllerCert],
      ['gadget-api-server', apiCert],
    ]);

  it('puts Services, Secrets and RBAC before the Deployments, webhooks and APIServices after them', () => {
    const csv = servingCSV({ apiService: true });
    const out = renderServing({ csv, operatorGroup: og, serving: serving(csv), certificates: certs() });
    expect(out.beforeDeployments.map((o) => o.kind)).toEqual([
      ...['Service', 'Secret', 'Role', 'RoleBinding', 'ClusterRoleBinding', 'RoleBinding'],
      ...['Service', 'Secret', 'Role', 'RoleBinding', 'ClusterRoleBinding', 'RoleBinding'],
    ]);
    expect(out.afterDeployments.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      `ValidatingWebhookConfiguration/${webhookConfigurationName({ name: CSVName, namespace: Namespace }, 'vgadget.kb.io')}`,
      `MutatingWebhookConfiguration/${webhookConfigurationName({ name: CSVName, namespace: Namespace }, 'mpod.kb.io')}`,
      'APIService/v1beta1.widgets.example.com',
    ]);
    expect(out.conversions).toEqual([]);
    // Each uses its own Deployment's CA.
    const caOf = (o: unknown) => JSON.stringify(o).match(/"caBundle":"([^"]+)"/)?.[1];
    expect(decode(caOf(out.afterDeployments[0]))).toBe(controllerCert.caPEM);
    expect(decode(caOf(out.afterDeployments[2]))).toBe(apiCert.caPEM);
  });

  it('registers one APIService for descriptions of several kinds in one group and version', () => {
    const csv = servingCSV({ apiService: true });
    const owned = csv.spec.apiservicedefinitions?.owned ?? [];
    owned.push({ ...owned[0]!, name: 'gizmos', kind: 'Gizmo' });
    const out = renderServing({ csv, operatorGroup: og, serving: serving(csv), certificates: certs() });
    expect(out.afterDeployments.filter((o) => o.kind === 'APIService').map((o) => o.metadata.name)).toEqual([
      'v1beta1.widgets.example.com',
    ]);
  });

  it('leaves out a Deployment that has no certificate yet', () => {
    const csv = servingCSV({ apiService: true });
    const only = certs();
    only.delete('gadget-controller-manager');
    const out = renderServing({ csv, operatorGroup: og, serving: serving(csv), certificates: only });
    expect(out.afterDeployments.map((o) => o.kind)).toEqual(['APIService']);
    expect(out.beforeDeployments.every((o) => !o.metadata.name.startsWith('gadget-controller'))).toBe(true);
  });

  it('patches the CRDs of a conversion webhook, and makes no configuration for it', () => {
    const csv = servingCSV({
      webhooks: [conversion],
      installModes: [{ type: 'AllNamespaces', supported: true }],
    });
    const out = renderServing({
      csv,
      operatorGroup: operatorGroup({}),
      serving: serving(csv),
      certificates: certs(),
    });
    expect(out.afterDeployments).toEqual([]);
    expect(out.conversions.map((c) => c.crd)).toEqual(['gadgets.example.com']);
  });
});

describe('checkServing', () => {
  const csv = servingCSV({ apiService: true });
  const og = operatorGroup({ targetNamespaces: [Namespace] });
  const plan = () => serving(csv);
  const desired = () =>
    renderServing({
      csv,
      operatorGroup: og,
      serving: plan(),
      certificates: new Map([
        ['gadget-controller-manager', controllerCert],
        ['gadget-api-server', apiCert],
      ]),
    });
  const available = { conditions: [{ type: 'Available', status: 'True' }] };
  /** The cluster as an apply of `desired` leaves it, with the API server's defaults added. */
  const applied = (): LiveServing => {
    const d = desired();
    const byKind = (kind: string) => d.afterDeployments.filter((o) => o.kind === kind);
    const present = (kind: string) =>
      new Map(
        d.beforeDeployments.filter((o) => o.kind === kind).map((o) => [o.metadata.name, o as KubeObject]),
      );
    return {
      secrets: present('Secret'),
      services: present('Service'),
      webhookConfigurations: [
        ...byKind('ValidatingWebhookConfiguration'),
        ...byKind('MutatingWebhookConfiguration'),
      ].map((o) => {
        const c = structuredClone(o) as unknown as KubeObject & { webhooks: Record<string, unknown>[] };
        for (const w of c.webhooks) {
          w.namespaceSelector ??= {};
          w.objectSelector ??= {};
          w.matchPolicy ??= 'Equivalent';
        }
        return c;
      }),
      apiServices: new Map(
        byKind('APIService').map((o) => [o.metadata.name, { ...o, status: available } as KubeObject]),
      ),
      crd: () => undefined,
    };
  };

  it('passes when everything is there as rendered', () => {
    expect(checkServing(plan(), desired(), applied())).toEqual({ ok: true, unavailableAPIServices: [] });
  });

  const vName = webhookConfigurationName({ name: CSVName, namespace: Namespace }, 'vgadget.kb.io');
  it.each([
    {
      name: 'a missing Secret',
      edit: (l: LiveServing) => ({ ...l, secrets: new Map() }),
      want: {
        apiService: false,
        state: 'missing',
        deployment: 'gadget-controller-manager',
        message:
          'secret gadget-controller-manager-service-cert for deployment gadget-controller-manager not found',
      },
    },
    {
      name: 'a missing Service',
      edit: (l: LiveServing) => ({
        ...l,
        services: new Map([...l.services].filter(([n]) => n !== 'gadget-api-server-service')),
      }),
      want: {
        apiService: true,
        state: 'missing',
        deployment: 'gadget-api-server',
        message: 'service gadget-api-server-service for deployment gadget-api-server not found',
      },
    },
    {
      name: 'a missing webhook configuration',
      edit: (l: LiveServing) => ({ ...l, webhookConfigurations: l.webhookConfigurations.slice(1) }),
      want: {
        apiService: false,
        state: 'missing',
        deployment: 'gadget-controller-manager',
        message: `ValidatingWebhookConfiguration ${vName} for webhook vgadget.kb.io not found`,
      },
    },
    {
      name: 'a webhook configuration with an old CA',
      edit: (l: LiveServing) => {
        const [v, ...rest] = l.webhookConfigurations as (KubeObject & {
          webhooks: { clientConfig: { caBundle: string } }[];
        })[];
        const old = structuredClone(v!);
        old.webhooks[0]!.clientConfig.caBundle = Buffer.from(apiCert.caPEM).toString('base64');
        return { ...l, webhookConfigurations: [old, ...rest] };
      },
      want: {
        apiService: false,
        state: 'outdated',
        deployment: 'gadget-controller-manager',
        message: `ValidatingWebhookConfiguration ${vName} for webhook vgadget.kb.io has another CA bundle`,
      },
    },
    {
      name: 'a webhook configuration selecting all namespaces of a targeted group',
      edit: (l: LiveServing) => {
        const [v, ...rest] = l.webhookConfigurations as (KubeObject & {
          webhooks: Record<string, unknown>[];
        })[];
        const wide = structuredClone(v!);
        wide.webhooks[0]!.namespaceSelector = {};
        return { ...l, webhookConfigurations: [wide, ...rest] };
      },
      want: {
        apiService: false,
        state: 'outdated',
        deployment: 'gadget-controller-manager',
        message: `ValidatingWebhookConfiguration ${vName} for webhook vgadget.kb.io has another namespace selector`,
      },
    },
    {
      name: 'a webhook configuration of a changed description',
      edit: (l: LiveServing) => {
        const [v, ...rest] = l.webhookConfigurations;
        const old = structuredClone(v!);
        old.metadata!.labels!['olm.webhook-description-hash'] = '0000';
        return { ...l, webhookConfigurations: [old, ...rest] };
      },
      want: {
        apiService: false,
        state: 'outdated',
        deployment: 'gadget-controller-manager',
        message: `ValidatingWebhookConfiguration ${vName} for webhook vgadget.kb.io has another description hash`,
      },
    },
    {
      name: 'an owned webhook configuration the CSV no longer declares',
      edit: (l: LiveServing) => ({
        ...l,
        webhookConfigurations: [
          ...l.webhookConfigurations,
          {
            kind: 'ValidatingWebhookConfiguration',
            metadata: {
              name: 'vold.kb.io-0123456789',
              labels: { 'olm.webhook-description-generate-name': 'vold.kb.io' },
            },
          },
        ],
      }),
      want: {
        apiService: false,
        state: 'outdated',
        deployment: '',
        message:
          'ValidatingWebhookConfiguration vold.kb.io-0123456789 for webhook vold.kb.io is no longer declared by the CSV',
      },
    },
    {
      name: 'a missing APIService',
      edit: (l: LiveServing) => ({
        ...l,
        apiServices: new Map([['v1beta1.widgets.example.com', undefined]]),
      }),
      want: {
        apiService: true,
        state: 'missing',
        deployment: 'gadget-api-server',
        message: 'APIService v1beta1.widgets.example.com not found',
      },
    },
    {
      name: 'an APIService pointing at another Service',
      edit: (l: LiveServing) => {
        const a = structuredClone(l.apiServices.get('v1beta1.widgets.example.com')) as KubeObject & {
          spec: { service: { name: string } };
        };
        a.spec.service.name = 'elsewhere';
        return { ...l, apiServices: new Map([[a.metadata?.name ?? '', a as KubeObject]]) };
      },
      want: {
        apiService: true,
        state: 'outdated',
        deployment: 'gadget-api-server',
        message: 'APIService v1beta1.widgets.example.com points at another service',
      },
    },
  ])('finds $name', ({ edit, want }) => {
    expect(checkServing(plan(), desired(), edit(applied()))).toEqual({ ok: false, ...want });
  });

  it('reports an APIService that is not Available without failing', () => {
    const live = applied();
    const a = {
      ...live.apiServices.get('v1beta1.widgets.example.com'),
      status: {
        conditions: [
          { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: 'no response' },
        ],
      },
    } as KubeObject;
    expect(
      checkServing(plan(), desired(), {
        ...live,
        apiServices: new Map([['v1beta1.widgets.example.com', a]]),
      }),
    ).toEqual({
      ok: true,
      unavailableAPIServices: [
        {
          name: 'v1beta1.widgets.example.com',
          message:
            'APIService v1beta1.widgets.example.com is not Available (FailedDiscoveryCheck: no response)',
        },
      ],
    });
  });

  it('checks the conversion of each CRD a conversion webhook serves', () => {
    const conv = servingCSV({
      webhooks: [conversion],
      installModes: [{ type: 'AllNamespaces', supported: true }],
    });
    const p = serving(conv);
    const d = renderServing({
      csv: conv,
      operatorGroup: operatorGroup({}),
      serving: p,
      certificates: new Map([['gadget-controller-manager', controllerCert]]),
    });
    const live = (crd: LiveServing['crd']): LiveServing => ({
      secrets: new Map([['gadget-controller-manager-service-cert', {}]]),
      services: new Map([['gadget-controller-manager-service', {}]]),
      webhookConfigurations: [],
      apiServices: new Map(),
      crd,
    });
    expect(
      checkServing(
        p,
        d,
        live(() => undefined),
      ),
    ).toMatchObject({
      ok: false,
      state: 'missing',
      message: 'CRD gadgets.example.com of conversion webhook not found',
    });
    expect(
      checkServing(
        p,
        d,
        live(() => ({ spec: { conversion: { strategy: 'None' } } })),
      ),
    ).toMatchObject({
      ok: false,
      state: 'missing',
      deployment: 'gadget-controller-manager',
      message: 'conversion webhook of CRD gadgets.example.com not set',
    });
    expect(
      checkServing(
        p,
        d,
        live(() => ({ spec: { conversion: d.conversions[0]?.conversion } })),
      ),
    ).toEqual({ ok: true, unavailableAPIServices: [] });
  });
});

describe('withServingCheck', () => {
  const waiting: StrategyCheck = {
    installed: false,
    reason: 'Waiting',
    deployment: 'd',
    message: 'waiting',
    unrecoverable: false,
    needsApply: false,
  };
  it.each([
    { name: 'Deployments not yet in place win', strategy: waiting, serving: missingCheck(), want: waiting },
    {
      name: 'all in place',
      strategy: { installed: true } as StrategyCheck,
      serving: { ok: true as const, unavailableAPIServices: [] },
      want: { installed: true },
    },
    {
      name: 'a missing object is a missing component to apply again',
      strategy: { installed: true } as StrategyCheck,
      serving: missingCheck(),
      want: {
        installed: false,
        reason: 'ComponentMissing',
        deployment: 'gadget-controller-manager',
        message: 'gone',
        unrecoverable: false,
        needsApply: true,
      },
    },
    {
      name: 'an outdated object is reinstalled like an updated Deployment',
      strategy: { installed: true } as StrategyCheck,
      serving: { ...missingCheck(), state: 'outdated' as const },
      want: {
        installed: false,
        reason: 'DeploymentUpdated',
        deployment: 'gadget-controller-manager',
        message: 'gone',
        unrecoverable: false,
        needsApply: true,
      },
    },
  ])('$name', ({ strategy, serving: check, want }) => {
    expect(withServingCheck(strategy, check)).toEqual(want);
  });

  function missingCheck() {
    return {
      ok: false as const,
      state: 'missing' as const,
      deployment: 'gadget-controller-manager',
      apiService: false,
      message: 'gone',
    };
  }
});

describe('the OperatorGroup scopes the admission webhooks', () => {
  it.each([
    {
      name: 'targetNamespaces',
      spec: { targetNamespaces: [Namespace, 'team-b'] },
      want: { matchLabels: { [`olm.operatorgroup.uid/${OGUid}`]: '' } },
    },
    {
      name: 'a selector',
      spec: { selector: { matchLabels: { team: 'a' } } },
      want: { matchLabels: { team: 'a' } },
    },
    { name: 'all namespaces', spec: {}, want: undefined },
  ])('$name', ({ spec, want }) => {
    const csv = servingCSV();
    const out = renderServing({
      csv,
      operatorGroup: operatorGroup(spec),
      serving: serving(csv),
      certificates: new Map([['gadget-controller-manager', controllerCert]]),
    });
    for (const o of out.afterDeployments) {
      const w = (o as unknown as { webhooks: { namespaceSelector?: unknown }[] }).webhooks[0];
      expect(w?.namespaceSelector).toEqual(want);
    }
  });
});
