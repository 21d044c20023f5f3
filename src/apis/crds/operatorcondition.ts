import type { Condition } from '../meta.js';
import {
  type OperatorCondition,
  type OperatorConditionSpec,
  type OperatorConditionStatus,
  Resources,
} from '../operators.js';
import { condition } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, object, string } from './schema.js';

const spec = object<OperatorConditionSpec>(
  {
    serviceAccounts: array(string(), {
      description: "The operator's ServiceAccounts, which may write here.",
    }),
    deployments: array(string(), { description: "The operator's Deployments." }),
    overrides: array<Condition>(condition(), {
      description: "Conditions set by an administrator; they win over the operator's own.",
    }),
    conditions: array<Condition>(condition(), {
      description: 'Conditions the operator reports, e.g. Upgradeable.',
    }),
  },
  { description: 'What an operator says about itself (for example that it cannot be upgraded now).' },
);

const status = object<OperatorConditionStatus>(
  { conditions: array<Condition>(condition()) },
  { preserveUnknownFields: true },
);

export const operatorConditionCrd: CrdDefinition = {
  resource: Resources.OperatorCondition,
  singular: 'operatorcondition',
  shortNames: ['condition'],
  categories: ['olm'],
  printerColumns: [],
  schema: resourceSchema<OperatorCondition>(
    'Lets an installed operator tell the lifecycle manager about its state; one per CSV.',
    { spec, status },
  ).json,
};
