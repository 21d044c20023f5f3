import type { Condition } from '../meta.js';
import {
  type OperatorGroup,
  type OperatorGroupSpec,
  type OperatorGroupStatus,
  Resources,
  UpgradeStrategy,
} from '../operators.js';
import { condition, labelSelector, objectReference } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, boolean, object, oneOf, required, string, time } from './schema.js';

const description =
  'Sets the namespaces that the operators installed in its namespace serve; one per namespace.';

const selector = () =>
  labelSelector({
    description: 'Selects the target namespaces by label (ignored when targetNamespaces is set).',
  });
const targetNamespacesDescription =
  'The namespaces operators in this group watch. Neither this nor selector: all namespaces.';
const serviceAccountName = () =>
  string({
    description: 'A ServiceAccount in this namespace whose permissions bound what installs may create.',
  });

const spec = object<OperatorGroupSpec>(
  {
    selector: selector(),
    targetNamespaces: array(string(), { listType: 'set', description: targetNamespacesDescription }),
    serviceAccountName: serviceAccountName(),
    staticProvidedAPIs: boolean(),
    upgradeStrategy: oneOf(Object.values(UpgradeStrategy), { default: UpgradeStrategy.Default }),
  },
  {
    description: 'Which namespaces the operators installed in this namespace serve.',
    default: { upgradeStrategy: UpgradeStrategy.Default },
  },
);

const status = object<OperatorGroupStatus>(
  {
    namespaces: array(string(), { listType: 'set', description: 'The target namespaces, resolved.' }),
    serviceAccountRef: objectReference(),
    lastUpdated: required(time()),
    conditions: array<Condition>(condition()),
  },
  { preserveUnknownFields: true },
);

/** operators.coreos.com/v1alpha2, still served by OLM: v1 without upgradeStrategy and conditions. */
type V1alpha2 = Omit<OperatorGroup, 'spec' | 'status'> & {
  spec?: Omit<OperatorGroupSpec, 'upgradeStrategy'>;
  status?: Omit<OperatorGroupStatus, 'conditions'>;
};

const v1alpha2 = resourceSchema<V1alpha2>(description, {
  spec: object<Omit<OperatorGroupSpec, 'upgradeStrategy'>>({
    selector: selector(),
    targetNamespaces: array(string(), { description: targetNamespacesDescription }),
    serviceAccountName: serviceAccountName(),
    staticProvidedAPIs: boolean(),
  }),
  status: object<Omit<OperatorGroupStatus, 'conditions'>>(
    {
      namespaces: array(string()),
      serviceAccountRef: objectReference(),
      lastUpdated: required(time()),
    },
    { preserveUnknownFields: true },
  ),
});

export const operatorGroupCrd: CrdDefinition = {
  resource: Resources.OperatorGroup,
  singular: 'operatorgroup',
  shortNames: ['og'],
  categories: ['olm'],
  printerColumns: [],
  schema: resourceSchema<OperatorGroup>(description, { spec, status }).json,
  olderVersions: [{ name: 'v1alpha2', schema: v1alpha2.json }],
};
