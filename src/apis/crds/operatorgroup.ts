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

const spec = object<OperatorGroupSpec>(
  {
    selector: labelSelector('Selects the target namespaces by label (ignored when targetNamespaces is set).'),
    targetNamespaces: array(string(), {
      listType: 'set',
      description: 'The namespaces operators in this group watch. Neither this nor selector: all namespaces.',
    }),
    serviceAccountName: string({
      description: 'A ServiceAccount in this namespace whose permissions bound what installs may create.',
    }),
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

export const operatorGroupCrd: CrdDefinition = {
  resource: Resources.OperatorGroup,
  singular: 'operatorgroup',
  shortNames: ['og'],
  categories: ['olm'],
  printerColumns: [],
  schema: resourceSchema<OperatorGroup>(
    'Sets the namespaces that the operators installed in its namespace serve; one per namespace.',
    { spec, status },
  ).json,
};
