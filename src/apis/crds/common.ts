/** Schemas for the small shapes that several of OLM's kinds share. */
import type { ConditionStatus } from '../meta.js';
import type { Icon } from '../operators.js';
import { object, required, type Schema, string } from './schema.js';

export { condition, labelSelector, objectReference } from './kubernetes.js';

/**
 * The status of one of OLM's own condition types (Subscription, InstallPlan, bundle lookup):
 * OLM declares no enum for them, so neither does Bosun; the type still says True/False/Unknown.
 */
export const conditionStatus = (): Schema<ConditionStatus> => string<ConditionStatus>();

export function icon(): Schema<Icon> {
  return object<Icon>({ base64data: required(string()), mediatype: required(string()) });
}
