import type { GroupVersionKind } from '../meta.js';
import {
  type APIResourceReference,
  type APIServiceDefinitions,
  type APIServiceDescription,
  type AppLink,
  type CleanupSpec,
  type CleanupStatus,
  type ClusterServiceVersion,
  type ClusterServiceVersionCondition,
  type ClusterServiceVersionSpec,
  type ClusterServiceVersionStatus,
  type CRDDescription,
  type CustomResourceDefinitions,
  type DependentStatus,
  type Descriptor,
  type InstallMode,
  type InstallModeType,
  type Maintainer,
  type NamedInstallStrategy,
  type RelatedImage,
  type RequirementStatus,
  type ResourceInstance,
  type ResourceList,
  Resources,
  type StrategyDeploymentPermissions,
  type StrategyDeploymentSpec,
  type StrategyDetailsDeployment,
  WebhookAdmissionType,
  type WebhookDescription,
} from '../operators.js';
import { icon, labelSelector } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { deploymentSpec, intOrString, policyRule, ruleWithOperations } from './kubernetes.js';
import { array, boolean, integer, map, object, oneOf, required, string, time } from './schema.js';

const descriptor = () =>
  object<Descriptor>({
    path: required(string()),
    displayName: string(),
    description: string(),
    'x-descriptors': array(string()),
    // OLM keeps the value as raw JSON bytes, which its CRD describes (and the API server checks)
    // as a base64 string.
    value: string({ format: 'byte' }),
  });

const apiResourceReference = () =>
  object<APIResourceReference>({
    name: required(string()),
    kind: required(string()),
    version: required(string()),
  });

const crdDescription = () =>
  object<CRDDescription>({
    name: required(string({ description: 'The CRD name, <plural>.<group>.' })),
    version: required(string()),
    kind: required(string()),
    displayName: string(),
    description: string(),
    resources: array(apiResourceReference()),
    statusDescriptors: array(descriptor()),
    specDescriptors: array(descriptor()),
    actionDescriptors: array(descriptor()),
  });

const apiServiceDescription = () =>
  object<APIServiceDescription>({
    name: required(string()),
    group: required(string()),
    version: required(string()),
    kind: required(string()),
    deploymentName: string(),
    containerPort: integer({ format: 'int32' }),
    displayName: string(),
    description: string(),
    resources: array(apiResourceReference()),
    statusDescriptors: array(descriptor()),
    specDescriptors: array(descriptor()),
    actionDescriptors: array(descriptor()),
  });

const permissions = () =>
  array(
    object<StrategyDeploymentPermissions>({
      serviceAccountName: required(string()),
      rules: required(array(policyRule())),
    }),
  );

const install = object<NamedInstallStrategy>(
  {
    strategy: required(string({ description: 'The install strategy; OLM knows only "deployment".' })),
    spec: object<StrategyDetailsDeployment>({
      deployments: required(
        array(
          object<StrategyDeploymentSpec>({
            name: required(string()),
            spec: required(deploymentSpec({ description: 'An apps/v1 DeploymentSpec.' })),
            label: map(string()),
          }),
        ),
      ),
      permissions: permissions(),
      clusterPermissions: permissions(),
    }),
  },
  { description: "How to run the operator: its Deployments and their ServiceAccounts' permissions." },
);

const webhook = object<WebhookDescription>({
  generateName: required(string()),
  type: required(oneOf(Object.values(WebhookAdmissionType))),
  deploymentName: string(),
  containerPort: integer({ format: 'int32', minimum: 1, maximum: 65535, default: 443 }),
  targetPort: intOrString(),
  rules: array(ruleWithOperations()),
  failurePolicy: string(),
  matchPolicy: string(),
  objectSelector: labelSelector(),
  sideEffects: required(string()),
  timeoutSeconds: integer({ format: 'int32' }),
  admissionReviewVersions: required(array(string())),
  reinvocationPolicy: string(),
  webhookPath: string(),
  conversionCRDs: array(string()),
});

const appLink = () => object<AppLink>({ name: string(), url: string() });

const spec = object<ClusterServiceVersionSpec>(
  {
    install: required(install),
    version: string({ description: 'The semantic version of the operator.' }),
    release: string({
      maxLength: 20,
      description:
        'Tells builds of the same version apart, in the form of a semver pre-release: 1, 2.rc-1, ...',
      rules: [
        {
          rule: "self.split('.').all(id, id.matches('^(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)$'))",
          message:
            'must be dot-separated identifiers of letters, digits and hyphens, with no leading zero in a number ' +
            '(a semver pre-release, e.g. 1, 2.rc-1)',
        },
      ],
    }),
    maturity: string(),
    customresourcedefinitions: object<CustomResourceDefinitions>(
      { owned: array(crdDescription()), required: array(crdDescription()) },
      { description: 'The CRDs the operator owns (installs) and the ones it needs from others.' },
    ),
    apiservicedefinitions: object<APIServiceDefinitions>({
      owned: array(apiServiceDescription()),
      required: array(apiServiceDescription()),
    }),
    webhookdefinitions: array(webhook),
    nativeAPIs: array(
      object<GroupVersionKind>({
        group: required(string()),
        version: required(string()),
        kind: required(string()),
      }),
    ),
    minKubeVersion: string(),
    displayName: required(string({ description: 'The name of the operator shown to users.' })),
    description: string(),
    keywords: array(string()),
    maintainers: array(object<Maintainer>({ name: string(), email: string() })),
    provider: appLink(),
    links: array(appLink()),
    icon: array(icon()),
    installModes: array(
      object<InstallMode>({
        // No enum, as in OLM: an unknown type is an install mode the operator does not have.
        type: required(string<InstallModeType>()),
        supported: required(boolean()),
      }),
      {
        description:
          'Which OperatorGroup shapes (own, single, multi or all namespaces) the operator supports.',
      },
    ),
    replaces: string({ description: 'The CSV this one upgrades.' }),
    labels: map(string()),
    annotations: map(string()),
    selector: labelSelector(),
    cleanup: object<CleanupSpec>({ enabled: required(boolean()) }),
    skips: array(string()),
    relatedImages: array(object<RelatedImage>({ name: required(string()), image: required(string()) })),
  },
  { description: 'One version of an operator: what it provides, what it needs and how to run it.' },
);

const dependent = object<DependentStatus>({
  group: required(string()),
  version: required(string()),
  kind: required(string()),
  status: required(string()),
  uuid: string(),
  message: string(),
});

const status = object<ClusterServiceVersionStatus>(
  {
    phase: string({
      description: 'Pending, InstallReady, Installing, Succeeded, Failed, Replacing or Deleting.',
    }),
    message: string(),
    reason: string(),
    lastUpdateTime: time(),
    lastTransitionTime: time(),
    conditions: array(
      object<ClusterServiceVersionCondition>({
        phase: string(),
        message: string(),
        reason: string(),
        lastUpdateTime: time(),
        lastTransitionTime: time(),
      }),
      { description: 'The history of phase transitions.' },
    ),
    requirementStatus: array(
      object<RequirementStatus>({
        group: required(string()),
        version: required(string()),
        kind: required(string()),
        name: required(string()),
        status: required(string()),
        message: required(string()),
        uuid: string(),
        dependents: array(dependent),
      }),
    ),
    certsLastUpdated: time(),
    certsRotateAt: time(),
    cleanup: object<CleanupStatus>({
      pendingDeletion: array(
        object<ResourceList>({
          group: required(string()),
          kind: required(string()),
          instances: required(
            array(object<ResourceInstance>({ name: required(string()), namespace: string() })),
          ),
        }),
      ),
    }),
  },
  { preserveUnknownFields: true },
);

export const clusterServiceVersionCrd: CrdDefinition = {
  resource: Resources.ClusterServiceVersion,
  singular: 'clusterserviceversion',
  shortNames: ['csv', 'csvs'],
  categories: ['olm'],
  printerColumns: [
    {
      name: 'Display',
      type: 'string',
      jsonPath: '.spec.displayName',
      description: 'The name of the operator',
    },
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.version',
      description: 'The version of the operator',
    },
    {
      name: 'Release',
      type: 'string',
      jsonPath: '.spec.release',
      description: 'Which build of the version it is',
    },
    {
      name: 'Replaces',
      type: 'string',
      jsonPath: '.spec.replaces',
      description: 'The CSV this one upgrades',
    },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  ],
  schema: resourceSchema<ClusterServiceVersion>('One installed or installable version of an operator.', {
    spec: required(spec),
    status,
  }).json,
};
