/**
 * Schemas for the Kubernetes types that OLM's kinds embed, typed for the schema builder. They come
 * from kubernetes.generated.ts (controller-gen's descriptions of the k8s.io/api types, see
 * generate-kubernetes.ts), so a CSV's Deployment spec, RBAC rules and webhook rules, and a
 * Subscription's or CatalogSource's pod settings, are validated, pruned and defaulted by the API
 * server as OLM's CRDs have them: a field Kubernetes does not know is dropped, a wrong type is
 * refused, `protocol: TCP` is filled in.
 */
import type {
  V1Affinity,
  V1DeploymentSpec,
  V1EnvFromSource,
  V1EnvVar,
  V1PolicyRule,
  V1ResourceRequirements,
  V1RuleWithOperations,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { Condition, LabelSelector, ObjectReference } from '../meta.js';
import { type KubernetesTypeName, kubernetesSchemas } from './kubernetes.generated.js';
import type { Options, Schema } from './schema.js';

/** A fresh copy of one generated schema, so no two places in a CRD share (and mutate) one object. */
function generated<T>(name: KubernetesTypeName, opts?: Options): Schema<T> {
  const json = structuredClone(kubernetesSchemas[name]);
  return { json: opts?.description === undefined ? json : { description: opts.description, ...json } };
}

/**
 * An apps/v1 DeploymentSpec, with two changes to controller-gen's description that OLM's CRD has
 * too: the pod template's metadata keeps its labels and annotations (controller-gen describes an
 * embedded ObjectMeta as an empty object, which would prune them), and a host alias without an
 * `ip` gets the empty one (its list key), so CSVs written when `ip` was optional still load.
 */
export function deploymentSpec(opts?: Options): Schema<V1DeploymentSpec> {
  const schema = generated<V1DeploymentSpec>('DeploymentSpec', opts);
  const template = schema.json.properties!.template!;
  template.properties!.metadata = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const hostAlias = template.properties!.spec!.properties!.hostAliases!.items!;
  hostAlias.properties!.ip = { ...hostAlias.properties!.ip, default: '' };
  return schema;
}

export const policyRule = (opts?: Options): Schema<V1PolicyRule> => generated('PolicyRule', opts);
export const ruleWithOperations = (opts?: Options): Schema<V1RuleWithOperations> =>
  generated('RuleWithOperations', opts);
export const toleration = (opts?: Options): Schema<V1Toleration> => generated('Toleration', opts);
export const affinity = (opts?: Options): Schema<V1Affinity> => generated('Affinity', opts);
export const resourceRequirements = (opts?: Options): Schema<V1ResourceRequirements> =>
  generated('ResourceRequirements', opts);
export const envFromSource = (opts?: Options): Schema<V1EnvFromSource> => generated('EnvFromSource', opts);
export const envVar = (opts?: Options): Schema<V1EnvVar> => generated('EnvVar', opts);
export const volume = (opts?: Options): Schema<V1Volume> => generated('Volume', opts);
export const volumeMount = (opts?: Options): Schema<V1VolumeMount> => generated('VolumeMount', opts);

/** A resource quantity (`512Mi`, `0.5`, `2`), as a number or a string in Kubernetes' notation. */
export const quantity = (opts?: Options): Schema<number | string> => generated('Quantity', opts);

/** An int32 or a string (a port number or name). */
export const intOrString = (opts?: Options): Schema<number | string> => generated('IntOrString', opts);

/** A meta/v1 LabelSelector (replaced whole by server-side apply, as Kubernetes marks it). */
export const labelSelector = (opts?: Options): Schema<LabelSelector> => generated('LabelSelector', opts);

/** A core/v1 ObjectReference (replaced whole by server-side apply). */
export const objectReference = (opts?: Options): Schema<ObjectReference> =>
  generated('ObjectReference', opts);

/** A meta/v1 Condition with the API server's own validation for it (patterns, lengths, enums). */
export const condition = (opts?: Options): Schema<Condition> => generated('Condition', opts);
