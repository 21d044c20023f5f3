import {
  Approval,
  type BundleLookup,
  type BundleLookupCondition,
  type InstallPlan,
  type InstallPlanCondition,
  type InstallPlanPathHop,
  type InstallPlanSpec,
  type InstallPlanStatus,
  type InstallPlanSummary,
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

const count = () => required(integer({ minimum: 0 }));

const summary = object<InstallPlanSummary>(
  {
    from: string({ description: 'The installed CSV the plan upgrades; absent for a new install.' }),
    to: required(array(string())),
    channel: string({ description: 'The catalog channel the path goes through.' }),
    path: array(
      object<InstallPlanPathHop>({
        from: required(string()),
        to: required(string()),
        via: required(oneOf(['replaces', 'skips', 'skipRange'])),
        skipRange: string(),
      }),
      { description: 'Each hop from the installed CSV to the new one, and the edge that allows it.' },
    ),
    objects: required(
      object<InstallPlanSummary['objects']>(
        { create: count(), present: count(), delete: count() },
        { description: 'Steps whose object is new, steps whose object exists already, CSVs replaced.' },
      ),
    ),
    rbac: required(
      object<InstallPlanSummary['rbac']>(
        { added: count(), removed: count() },
        { description: 'CSV permission rules (per service account) added and removed.' },
      ),
    ),
    crdSafety: object<NonNullable<InstallPlanSummary['crdSafety']>>(
      { safe: required(boolean()), findings: required(array(string())) },
      { description: 'For a plan awaiting approval: the CRD safety check as it was when the plan was made.' },
    ),
  },
  { description: 'What approving the plan would do, in short, as planned (Bosun).' },
);

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
    summary,
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
