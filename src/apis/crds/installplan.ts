import {
  Approval,
  type BundleLookup,
  type BundleLookupCondition,
  type InstallPlan,
  type InstallPlanCondition,
  type InstallPlanSpec,
  type InstallPlanStatus,
  Resources,
  type Step,
  type StepResource,
} from '../operators.js';
import { conditionStatus, objectReference } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, boolean, integer, object, oneOf, required, string, time } from './schema.js';

const spec = object<InstallPlanSpec>(
  {
    source: string(),
    sourceNamespace: string(),
    clusterServiceVersionNames: required(array(string(), { description: 'The CSVs this plan installs.' })),
    // Deliberately stricter than OLM, which takes any other value as Automatic.
    approval: required(oneOf(Object.values(Approval))),
    approved: required(boolean({ description: 'Set to true to let a Manual plan proceed.' })),
    generation: integer(),
  },
  { description: 'The CSVs to install and whether the installation is approved.' },
);

const step = object<Step>({
  resolving: required(string({ description: 'The CSV this step belongs to.' })),
  resource: required(
    object<StepResource>({
      sourceName: required(string()),
      sourceNamespace: required(string()),
      group: required(string()),
      version: required(string()),
      kind: required(string()),
      name: required(string()),
      manifest: string({ description: 'The object to create, as JSON.' }),
    }),
  ),
  optional: boolean(),
  status: required(string({ description: 'Unknown, NotPresent, Present, Created, WaitingForApi, ...' })),
});

const bundleLookup = object<BundleLookup>({
  path: required(string()),
  identifier: required(string()),
  replaces: required(string()),
  catalogSourceRef: required(objectReference()),
  conditions: array(
    object<BundleLookupCondition>({
      type: required(string()),
      status: required(conditionStatus()),
      reason: string(),
      message: string(),
      lastUpdateTime: time(),
      lastTransitionTime: time(),
    }),
  ),
  properties: string(),
});

const status = object<InstallPlanStatus>(
  {
    phase: required(string({ description: 'Planning, RequiresApproval, Installing, Complete or Failed.' })),
    conditions: array(
      object<InstallPlanCondition>({
        type: string(),
        status: conditionStatus(),
        lastUpdateTime: time(),
        lastTransitionTime: time(),
        reason: string(),
        message: string(),
      }),
    ),
    catalogSources: required(array(string())),
    plan: array(step, { description: 'One step per object to create, in order.' }),
    bundleLookups: array(bundleLookup),
    attenuatedServiceAccountRef: objectReference(),
    startTime: time(),
    message: string(),
  },
  { preserveUnknownFields: true },
);

export const installPlanCrd: CrdDefinition = {
  resource: Resources.InstallPlan,
  singular: 'installplan',
  shortNames: ['ip'],
  categories: ['olm'],
  printerColumns: [
    {
      name: 'CSV',
      type: 'string',
      jsonPath: '.spec.clusterServiceVersionNames[0]',
      description: 'The first CSV the plan installs',
    },
    { name: 'Approval', type: 'string', jsonPath: '.spec.approval', description: 'Automatic or Manual' },
    { name: 'Approved', type: 'boolean', jsonPath: '.spec.approved' },
  ],
  schema: resourceSchema<InstallPlan>('The objects to create to install or upgrade a set of operators.', {
    spec: required(spec),
    status,
  }).json,
};
