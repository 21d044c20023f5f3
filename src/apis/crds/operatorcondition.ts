import type { Condition } from '../meta.js';
import {
  type ConditionOverride,
  type OperatorCondition,
  type OperatorConditionSpec,
  type OperatorConditionStatus,
  Resources,
} from '../operators.js';
import { condition } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, object, type Schema, string } from './schema.js';

const description = 'Lets an installed operator tell the lifecycle manager about its state; one per CSV.';

/** A meta/v1 Condition whose lastTransitionTime may be left out, as OLM's CRD has overrides. */
function override(): Schema<ConditionOverride> {
  const { json } = condition();
  return { json: { ...json, required: json.required?.filter((f) => f !== 'lastTransitionTime') } };
}

const serviceAccounts = () =>
  array(string(), { description: "The operator's ServiceAccounts, which may write here." });
const deployments = () => array(string(), { description: "The operator's Deployments." });
const overrides = () =>
  array(override(), { description: "Conditions set by an administrator; they win over the operator's own." });

const spec = object<OperatorConditionSpec>(
  {
    serviceAccounts: serviceAccounts(),
    deployments: deployments(),
    overrides: overrides(),
    conditions: array<Condition>(condition(), {
      description: 'Conditions the operator reports, e.g. Upgradeable.',
    }),
  },
  { description: 'What an operator says about itself (for example that it cannot be upgraded now).' },
);

const status = () =>
  object<OperatorConditionStatus>(
    { conditions: array<Condition>(condition()) },
    { preserveUnknownFields: true },
  );

/** operators.coreos.com/v1, still served by OLM: the operator wrote its conditions in the status. */
type V1 = Omit<OperatorCondition, 'spec'> & { spec?: Omit<OperatorConditionSpec, 'conditions'> };

const v1 = resourceSchema<V1>(description, {
  spec: object<Omit<OperatorConditionSpec, 'conditions'>>({
    serviceAccounts: serviceAccounts(),
    deployments: deployments(),
    overrides: overrides(),
  }),
  status: status(),
});

export const operatorConditionCrd: CrdDefinition = {
  resource: Resources.OperatorCondition,
  singular: 'operatorcondition',
  shortNames: ['condition'],
  categories: ['olm'],
  printerColumns: [],
  schema: resourceSchema<OperatorCondition>(description, { spec, status: status() }).json,
  olderVersions: [{ name: 'v1', schema: v1.json }],
};
