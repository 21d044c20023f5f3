/**
 * A Subscription's `spec.config` merged into an operator Deployment, with OLM's rules
 * (pkg/controller/operators/olm/overrides/inject), field by field:
 * - env: into every container; a variable of the same name is replaced in place, new ones are
 *   appended in the order the config lists them;
 * - envFrom: into every container; a source is appended unless an identical one is there;
 * - volumes: into the pod; a volume of the same name is replaced, others appended;
 * - volumeMounts: into every container; a mount of the same name is replaced, others appended;
 * - tolerations: appended unless an identical one is there;
 * - resources: when set (even to `{}`), replaces every container's resources;
 * - nodeSelector: when set (even to `{}`), replaces the pod's node selector;
 * - affinity: each of nodeAffinity, podAffinity, podAntiAffinity that is set replaces the pod's,
 *   and set to `{}` removes it; `affinity: {}` removes all affinity;
 * - annotations: added to the Deployment and its pod template, where the key is not already
 *   there (the bundle's and OLM's own annotations win).
 * Only `containers` are touched, not `initContainers`, as in OLM.
 *
 * `selector` (documented as "the label selector for pods to be configured") is stored by OLM but
 * never read; Bosun honours it: when set, the config applies only to Deployments whose pod
 * template labels it matches.
 */
import type {
  V1Affinity,
  V1Container,
  V1Deployment,
  V1DeploymentSpec,
  V1EnvFromSource,
  V1EnvVar,
  V1PodSpec,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { SubscriptionConfig } from '../apis/operators.js';
import { stableStringify } from './hash.js';
import { isEmptySelector, matchesSelector } from '../olm/selector.js';

/** A copy of the Deployment with the config merged in; the input is not changed. */
export function applySubscriptionConfig(
  deployment: V1Deployment,
  config: SubscriptionConfig | undefined,
): V1Deployment {
  if (config === undefined) return deployment;
  const template = deployment.spec?.template;
  if (config.selector !== undefined && !isEmptySelector(config.selector)) {
    if (!matchesSelector(config.selector, template?.metadata?.labels)) return deployment;
  }
  const pod: V1PodSpec = { ...(template?.spec ?? { containers: [] }) };
  pod.containers = (pod.containers ?? []).map((c) => mergeContainer(c, config));
  if (config.volumes !== undefined) pod.volumes = mergeByName(pod.volumes, config.volumes);
  if (config.tolerations !== undefined) pod.tolerations = appendMissing(pod.tolerations, config.tolerations);
  if (config.nodeSelector !== undefined && config.nodeSelector !== null)
    pod.nodeSelector = { ...config.nodeSelector };
  if (config.affinity !== undefined && config.affinity !== null) {
    const affinity = overrideAffinity(pod.affinity, config.affinity);
    if (affinity === undefined) delete pod.affinity;
    else pod.affinity = affinity;
  }

  const out: V1Deployment = {
    ...deployment,
    spec: { ...deployment.spec, template: { ...template, spec: pod } } as V1DeploymentSpec,
  };
  if (config.annotations !== undefined) return addAnnotations(out, config.annotations);
  return out;
}

function mergeContainer(c: V1Container, config: SubscriptionConfig): V1Container {
  const out = { ...c };
  if (config.env !== undefined) out.env = mergeEnv(c.env, config.env);
  if (config.envFrom !== undefined) out.envFrom = appendMissing<V1EnvFromSource>(c.envFrom, config.envFrom);
  if (config.volumeMounts !== undefined)
    out.volumeMounts = mergeByName<V1VolumeMount>(c.volumeMounts, config.volumeMounts);
  if (config.resources !== undefined && config.resources !== null) out.resources = { ...config.resources };
  return out;
}

/** Replaces variables of the same name where they stand, then appends the new ones in order. */
export function mergeEnv(existing: readonly V1EnvVar[] | undefined, added: readonly V1EnvVar[]): V1EnvVar[] {
  const byName = new Map(added.map((e) => [e.name, e]));
  const merged = (existing ?? []).map((e) => byName.get(e.name) ?? e);
  const present = new Set((existing ?? []).map((e) => e.name));
  const appended = new Set<string>();
  for (const e of added) {
    if (present.has(e.name) || appended.has(e.name)) continue;
    // The last entry of a name wins, as it would in a map.
    merged.push(byName.get(e.name) as V1EnvVar);
    appended.add(e.name);
  }
  return merged;
}

function mergeByName<T extends { name: string }>(
  existing: readonly T[] | undefined,
  added: readonly T[],
): T[] {
  const merged = [...(existing ?? [])];
  for (const item of added) {
    const i = merged.findIndex((m) => m.name === item.name);
    if (i >= 0) merged[i] = item;
    else merged.push(item);
  }
  return merged;
}

function appendMissing<T>(existing: readonly T[] | undefined, added: readonly T[]): T[] {
  const merged = [...(existing ?? [])];
  const seen = new Set(merged.map((x) => stableStringify(x)));
  for (const item of added) {
    const key = stableStringify(item);
    if (seen.has(key)) continue;
    merged.push(item);
    seen.add(key);
  }
  return merged;
}

const affinityParts = ['nodeAffinity', 'podAffinity', 'podAntiAffinity'] as const;

/**
 * OLM's affinity override. (OLM's own code clears the whole affinity when `podAntiAffinity: {}`
 * is given, contradicting its documentation; Bosun clears only the anti-affinity.)
 */
export function overrideAffinity(
  current: V1Affinity | undefined,
  override: V1Affinity,
): V1Affinity | undefined {
  if (isEmptyObject(override)) return undefined;
  const out: V1Affinity = { ...current };
  for (const part of affinityParts) overrideAffinityPart(out, override, part);
  return isEmptyObject(out) ? undefined : out;
}

/** One part of the override (generic in the part, so each part keeps its own type). */
function overrideAffinityPart<K extends (typeof affinityParts)[number]>(
  out: V1Affinity,
  override: V1Affinity,
  part: K,
): void {
  const value = override[part];
  if (value === undefined || value === null) return;
  if (isEmptyObject(value)) delete out[part];
  else out[part] = value;
}

function addAnnotations(d: V1Deployment, annotations: Record<string, string>): V1Deployment {
  const deploymentAnnotations = { ...d.metadata?.annotations };
  const podAnnotations = { ...d.spec?.template.metadata?.annotations };
  for (const [k, v] of Object.entries(annotations)) {
    if (!Object.hasOwn(deploymentAnnotations, k)) deploymentAnnotations[k] = v;
    if (!Object.hasOwn(podAnnotations, k)) podAnnotations[k] = v;
  }
  const spec = d.spec as NonNullable<V1Deployment['spec']>;
  return {
    ...d,
    metadata: { ...d.metadata, annotations: deploymentAnnotations },
    spec: {
      ...spec,
      template: { ...spec.template, metadata: { ...spec.template.metadata, annotations: podAnnotations } },
    },
  };
}

function isEmptyObject(v: object): boolean {
  return Object.values(v).every((x) => x === undefined);
}
