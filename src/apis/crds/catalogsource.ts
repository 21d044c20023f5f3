import type { Condition } from '../meta.js';
import {
  type CatalogSource,
  type CatalogSourceSpec,
  type CatalogSourceStatus,
  type ConfigMapResourceReference,
  type ExtractContentConfig,
  type GRPCConnectionState,
  type GrpcPodConfig,
  type RegistryPoll,
  type RegistryServiceStatus,
  Resources,
  SecurityConfig,
  SourceType,
  type UpdateStrategy,
} from '../operators.js';
import { condition, icon } from './common.js';
import { affinity, quantity, toleration } from './kubernetes.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, integer, map, object, oneOf, required, string, time } from './schema.js';

const spec = object<CatalogSourceSpec>(
  {
    // No enum, as in OLM: the controller reports a type it does not know in the status.
    sourceType: required(
      string<SourceType>({
        description:
          'Where the catalog comes from: grpc (an FBC catalog image, or the address of a running registry), ' +
          'configmap (FBC documents in a ConfigMap), http (a URL serving FBC), internal (old name of configmap).',
      }),
    ),
    priority: integer({
      description: 'Preference among catalogs during resolution: higher wins; ties break by name. Default 0.',
    }),
    configMap: string({ description: 'For configmap sources: the ConfigMap holding the catalog.' }),
    address: string({
      description:
        'For grpc sources: host:port of a running registry (ignored when image is set). ' +
        'For http sources: the URL serving the catalog.',
    }),
    image: string({ description: 'For grpc sources: the catalog image.' }),
    grpcPodConfig: object<GrpcPodConfig>({
      nodeSelector: map(string()),
      tolerations: array(toleration()),
      affinity: affinity(),
      priorityClassName: string(),
      securityContextConfig: oneOf(Object.values(SecurityConfig)),
      memoryTarget: quantity(),
      extractContent: object<ExtractContentConfig>({
        cacheDir: string(),
        catalogDir: required(string()),
      }),
    }),
    updateStrategy: object<UpdateStrategy>(
      {
        registryPoll: object<RegistryPoll>({
          interval: string({ description: 'How often to check the catalog for updates, e.g. 10m or 1h.' }),
        }),
      },
      { description: 'How updates to the catalog are discovered.' },
    ),
    secrets: array(string(), { description: 'Secrets with credentials for pulling the catalog.' }),
    displayName: string(),
    description: string(),
    publisher: string(),
    icon: icon(),
  },
  { description: 'Where a catalog of operators is and how to keep it up to date.' },
);

const status = object<CatalogSourceStatus>(
  {
    message: string(),
    reason: string(),
    latestImageRegistryPoll: time(),
    configMapReference: object<ConfigMapResourceReference>({
      name: required(string()),
      namespace: required(string()),
      uid: string(),
      resourceVersion: string(),
      lastUpdateTime: time(),
    }),
    registryService: object<RegistryServiceStatus>({
      protocol: string(),
      serviceName: string(),
      serviceNamespace: string(),
      port: string(),
      createdAt: time(),
    }),
    connectionState: object<GRPCConnectionState>({
      address: string(),
      lastObservedState: required(string()),
      lastConnect: time(),
    }),
    conditions: array<Condition>(condition(), { listType: 'map', mapKeys: ['type'] }),
  },
  { preserveUnknownFields: true },
);

export const catalogSourceCrd: CrdDefinition = {
  resource: Resources.CatalogSource,
  singular: 'catalogsource',
  shortNames: ['catsrc'],
  categories: ['olm'],
  printerColumns: [
    {
      name: 'Display',
      type: 'string',
      jsonPath: '.spec.displayName',
      description: 'The name shown to users',
    },
    {
      name: 'Type',
      type: 'string',
      jsonPath: '.spec.sourceType',
      description: 'Where the catalog comes from',
    },
    {
      name: 'Publisher',
      type: 'string',
      jsonPath: '.spec.publisher',
      description: 'Who publishes the catalog',
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  schema: resourceSchema<CatalogSource>('A catalog of operator packages that Subscriptions install from.', {
    spec: required(spec),
    status,
  }).json,
};
