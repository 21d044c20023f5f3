import {
  type ComponentCondition,
  type Operator,
  type OperatorComponents,
  type OperatorSpec,
  type OperatorStatus,
  Resources,
  type RichReference,
} from '../operators.js';
import { labelSelector, objectReference } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, type JSONSchemaProps, object, required, type Schema, string, time } from './schema.js';

const componentCondition = object<ComponentCondition>(
  {
    type: required(string({ description: 'The condition type (a CSV’s is its phase).' })),
    status: required(string({ description: 'True, False or Unknown.' })),
    reason: string(),
    message: string(),
    lastUpdateTime: time(),
    lastTransitionTime: time(),
  },
  { description: 'One condition of a component, as the component’s own status has it.' },
);

/**
 * A core/v1 ObjectReference with the component's conditions: like an ObjectReference it is
 * replaced whole by server-side apply.
 */
function richReference(): Schema<RichReference> {
  const ref = objectReference().json;
  return {
    json: {
      ...ref,
      description: 'One component of the operator, with its conditions.',
      properties: {
        ...ref.properties,
        conditions: array(componentCondition, { description: 'The component’s current state.' }).json,
      },
    },
  };
}

const components = object<OperatorComponents>(
  {
    labelSelector: required(
      labelSelector({ description: 'Selects the components: the operator’s component label exists.' }),
    ),
    refs: array(richReference(), { description: 'Every object the label selector selects.' }),
  },
  { description: 'The objects the operator is made of.' },
);

/** OLM's Operator spec has no fields: an object with none declared. */
const spec: Schema<OperatorSpec> = {
  json: { description: 'An Operator has no settings.', type: 'object' },
};

const status = object<OperatorStatus>(
  { components },
  {
    description: 'The installed operator’s components, kept current as they change.',
    preserveUnknownFields: true,
  },
);

/** OLM's Operator requires no top-level field, not even metadata (its other kinds require spec). */
function withoutRequired(schema: JSONSchemaProps): JSONSchemaProps {
  const { required: _required, ...rest } = schema;
  return rest;
}

export const operatorCrd: CrdDefinition = {
  resource: Resources.Operator,
  singular: 'operator',
  shortNames: [],
  categories: ['olm'],
  printerColumns: [],
  schema: withoutRequired(
    resourceSchema<Operator>('An installed operator (`<package>.<namespace>`) and what it is made of.', {
      spec,
      status,
    }).json,
  ),
};
