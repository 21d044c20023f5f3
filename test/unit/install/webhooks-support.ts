/**
 * A CSV shaped like the corpus's webhook operators (a controller serving a validating, a
 * mutating and a pod-mutating webhook, as opentelemetry-operator's does) plus an aggregated API
 * server Deployment (as enmasse's), as the CSV controller sees it on the cluster.
 */
import type {
  ClusterServiceVersion,
  OperatorGroup,
  WebhookDescription,
} from '../../../src/apis/operators.js';
import type { CertificateEntropy } from '../../../src/install/certificates.js';
import { systemEntropy } from '../../../src/install/certificates.js';

export const Namespace = 'team-a';
export const CSVName = 'gadget-operator.v1.2.0';
export const CSVUid = '00000000-0000-4000-8000-0000000000c5';
export const OGUid = '00000000-0000-4000-8000-00000000006f';

export const validating: WebhookDescription = {
  generateName: 'vgadget.kb.io',
  type: 'ValidatingAdmissionWebhook',
  deploymentName: 'gadget-controller-manager',
  containerPort: 443,
  targetPort: 9443,
  rules: [
    {
      apiGroups: ['example.com'],
      apiVersions: ['v1'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['gadgets'],
    },
  ],
  failurePolicy: 'Fail',
  sideEffects: 'None',
  admissionReviewVersions: ['v1', 'v1beta1'],
  webhookPath: '/validate-example-com-v1-gadget',
  timeoutSeconds: 5,
};

export const mutatingPods: WebhookDescription = {
  generateName: 'mpod.kb.io',
  type: 'MutatingAdmissionWebhook',
  deploymentName: 'gadget-controller-manager',
  containerPort: 443,
  targetPort: 9443,
  rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
  failurePolicy: 'Ignore',
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  webhookPath: '/mutate-v1-pod',
  objectSelector: { matchLabels: { 'gadget.example.com/inject': 'true' } },
  reinvocationPolicy: 'IfNeeded',
};

export const conversion: WebhookDescription = {
  generateName: 'cgadget.kb.io',
  type: 'ConversionWebhook',
  deploymentName: 'gadget-controller-manager',
  containerPort: 443,
  targetPort: 9443,
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  webhookPath: '/convert',
  conversionCRDs: ['gadgets.example.com'],
};

export function servingCSV(
  opts: {
    webhooks?: WebhookDescription[];
    apiService?: boolean;
    installModes?: ClusterServiceVersion['spec']['installModes'];
    replaces?: string;
  } = {},
): ClusterServiceVersion {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: CSVName,
      namespace: Namespace,
      uid: CSVUid,
      annotations: { capabilities: 'Basic Install' },
    },
    spec: {
      displayName: 'Gadget operator',
      version: '1.2.0',
      ...(opts.replaces ? { replaces: opts.replaces } : {}),
      installModes: opts.installModes ?? [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: { owned: [{ name: 'gadgets.example.com', version: 'v1', kind: 'Gadget' }] },
      webhookdefinitions: opts.webhooks ?? [validating, mutatingPods],
      ...(opts.apiService
        ? {
            apiservicedefinitions: {
              owned: [
                {
                  name: 'widgets',
                  group: 'widgets.example.com',
                  version: 'v1beta1',
                  kind: 'Widget',
                  deploymentName: 'gadget-api-server',
                  containerPort: 8443,
                },
              ],
            },
          }
        : {}),
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            {
              name: 'gadget-controller-manager',
              spec: {
                replicas: 1,
                selector: { matchLabels: { 'control-plane': 'controller-manager' } },
                template: {
                  metadata: { labels: { 'control-plane': 'controller-manager' } },
                  spec: {
                    serviceAccountName: 'gadget-operator',
                    containers: [
                      {
                        name: 'manager',
                        image: 'registry.example/gadget:1.2.0',
                        volumeMounts: [{ name: 'config', mountPath: '/etc/gadget' }],
                      },
                      { name: 'kube-rbac-proxy', image: 'registry.example/kube-rbac-proxy:0.8' },
                    ],
                    volumes: [{ name: 'config', configMap: { name: 'gadget-config' } }],
                  },
                },
              },
            },
            {
              name: 'gadget-api-server',
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: 'gadget-api' } },
                template: {
                  metadata: { labels: { app: 'gadget-api' } },
                  spec: { containers: [{ name: 'api', image: 'registry.example/gadget-api:1.2.0' }] },
                },
              },
            },
          ],
          permissions: [
            {
              serviceAccountName: 'gadget-operator',
              rules: [{ apiGroups: ['example.com'], resources: ['gadgets'], verbs: ['*'] }],
            },
          ],
        },
      },
    },
  };
}

export function operatorGroup(spec: OperatorGroup['spec']): OperatorGroup {
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: Namespace, uid: OGUid },
    ...(spec ? { spec } : {}),
  };
}

/** Random keys from the platform, serial numbers counted up, and how many of each were drawn. */
export function countingEntropy(): CertificateEntropy & { keys: number; serials: number } {
  const e = {
    keys: 0,
    serials: 0,
    keyPair: () => {
      e.keys += 1;
      return systemEntropy.keyPair();
    },
    bytes: (n: number) => {
      e.serials += 1;
      const b = new Uint8Array(n);
      b[n - 1] = e.serials;
      return b;
    },
  };
  return e;
}
