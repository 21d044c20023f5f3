/**
 * Built-in kinds whose removed API versions convert mechanically to the served ones. Each
 * converter returns the object under its new apiVersion, notes on what changed in meaning, and
 * errors for what only the author can decide.
 */
import { childPath, cloneJson, isJsonObject, type Json, type JsonObject, show } from './json.js';
import type { SchemaNote } from './schema.js';

export interface BuiltinConversion {
  object: JsonObject;
  notes: SchemaNote[];
  errors: SchemaNote[];
}

/** The same fields under a new apiVersion (RBAC, PriorityClass, NetworkPolicy). */
export function renamed(input: JsonObject, apiVersion: string): BuiltinConversion {
  return { object: { ...cloneJson(input), apiVersion }, notes: [], errors: [] };
}

/**
 * policy/v1beta1 → v1 PodDisruptionBudget. The one difference in meaning: an empty selector
 * (`{}`) selected no pods in v1beta1 and selects every pod of the namespace in v1. Such a selector
 * is removed, because in v1 a budget without a selector selects no pods: it keeps protecting what
 * it protected, which is nothing, rather than starting to block evictions of every pod.
 */
export function podDisruptionBudget(input: JsonObject): BuiltinConversion {
  const object: JsonObject = { ...cloneJson(input), apiVersion: 'policy/v1' };
  const notes: SchemaNote[] = [];
  const spec = isJsonObject(object.spec) ? object.spec : undefined;
  if (spec && isJsonObject(spec.selector) && isEmptySelector(spec.selector)) {
    delete spec.selector;
    notes.push({
      field: 'spec.selector',
      message:
        'an empty selector selected no pods in policy/v1beta1 but selects every pod of the namespace in policy/v1; it was removed, so the budget still selects no pods (set matchLabels to protect pods)',
    });
  }
  return { object, notes, errors: [] };
}

function isEmptySelector(selector: JsonObject): boolean {
  const labels = selector.matchLabels;
  const expressions = selector.matchExpressions;
  return (
    (labels === undefined || labels === null || (isJsonObject(labels) && Object.keys(labels).length === 0)) &&
    (expressions === undefined ||
      expressions === null ||
      (Array.isArray(expressions) && expressions.length === 0))
  );
}

/** v1beta1 defaults of a webhook that v1 defaults differently or requires. */
const webhookDefaults: [string, Json][] = [
  ['failurePolicy', 'Ignore'],
  ['matchPolicy', 'Exact'],
  ['timeoutSeconds', 30],
  ['admissionReviewVersions', ['v1beta1']],
];

/**
 * admissionregistration.k8s.io/v1beta1 → v1 Validating/MutatingWebhookConfiguration. v1 changed
 * defaults (failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10) and requires
 * admissionReviewVersions and sideEffects; the v1beta1 defaults are written out so the webhooks
 * behave as before. sideEffects Unknown and Some (v1beta1's default is Unknown) are not allowed
 * in v1: whether the webhook has side effects only its author knows.
 */
export function webhookConfiguration(input: JsonObject): BuiltinConversion {
  const object: JsonObject = { ...cloneJson(input), apiVersion: 'admissionregistration.k8s.io/v1' };
  const notes: SchemaNote[] = [];
  const errors: SchemaNote[] = [];
  const webhooks = Array.isArray(object.webhooks) ? object.webhooks : [];
  webhooks.forEach((w, i) => {
    if (!isJsonObject(w)) return;
    const at = `webhooks[${i}]`;
    const written: string[] = [];
    for (const [field, value] of webhookDefaults) {
      if (w[field] === undefined || w[field] === null) {
        w[field] = cloneJson(value);
        written.push(`${field}: ${JSON.stringify(value)}`);
      }
    }
    if (written.length > 0) {
      notes.push({
        field: at,
        message: `v1beta1's defaults written out, as v1 defaults differently: ${written.join(', ')}`,
      });
    }
    const sideEffects = w.sideEffects;
    if (sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun') {
      errors.push({
        field: childPath(at, 'sideEffects'),
        message: `${sideEffects === undefined || sideEffects === null ? 'is unset (Unknown in v1beta1)' : `${show(sideEffects)}`}, which admissionregistration.k8s.io/v1 does not allow; set None or NoneOnDryRun if the webhook has no side effects on dry-run requests`,
      });
    }
  });
  return { object, notes, errors };
}
