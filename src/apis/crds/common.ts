/** Schemas for the meta/v1 and core/v1 shapes that several of OLM's kinds embed. */
import type {
  Condition,
  ConditionStatus,
  LabelSelector,
  LabelSelectorRequirement,
  ObjectReference,
} from '../meta.js';
import type { Icon } from '../operators.js';
import { array, integer, map, object, oneOf, required, type Schema, string, time } from './schema.js';

export function objectReference(description?: string): Schema<ObjectReference> {
  return object<ObjectReference>(
    {
      apiVersion: string(),
      kind: string(),
      name: string(),
      namespace: string(),
      uid: string(),
      resourceVersion: string(),
      fieldPath: string(),
    },
    { description },
  );
}

export function labelSelector(description?: string): Schema<LabelSelector> {
  return object<LabelSelector>(
    {
      matchLabels: map(string()),
      matchExpressions: array(
        object<LabelSelectorRequirement>({
          key: required(string()),
          operator: required(oneOf(['In', 'NotIn', 'Exists', 'DoesNotExist'])),
          values: array(string()),
        }),
      ),
    },
    { description },
  );
}

export const conditionStatus = (): Schema<ConditionStatus> => oneOf(['True', 'False', 'Unknown']);

/** metav1.Condition with the API server's own validation for it (pattern, lengths). */
export function condition(): Schema<Condition> {
  return object<Condition>({
    type: required(
      string({
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      }),
    ),
    status: required(conditionStatus()),
    observedGeneration: integer({ format: 'int64', minimum: 0 }),
    lastTransitionTime: required(time()),
    reason: required(
      string({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
    ),
    message: required(string({ maxLength: 32768 })),
  });
}

export function icon(): Schema<Icon> {
  return object<Icon>({ base64data: required(string()), mediatype: required(string()) });
}
