/**
 * Manifests of API versions Kubernetes no longer serves, converted to their served successors:
 * `apiextensions.k8s.io/v1beta1` CRDs above all (removed in 1.22; most of the 2021 OperatorHub
 * corpus ships them), and the other removed versions bundles carry where the conversion is
 * mechanical. OLM refuses such bundles on current clusters; Bosun converts them, reports what the
 * conversion changed, and refuses (naming the object and what to change) only what it cannot
 * decide for the author.
 *
 * Pure: a parsed manifest in, a Result out. The input is never changed.
 */
import type { Problem, Result } from '../../util/result.js';
import { fail, ok } from '../../util/result.js';
import { podDisruptionBudget, renamed, webhookConfiguration, type BuiltinConversion } from './builtin.js';
import { convertCRD } from './crd.js';
import { isJsonObject, type JsonObject } from './json.js';
import type { SchemaNote } from './schema.js';

export { convertCRD } from './crd.js';
export { repairSchema } from './schema.js';
export { checkV1Schema } from './structural.js';

/** One removed group/version of some kinds, and what replaces it. */
export interface RemovedApi {
  apiVersion: string;
  kinds: readonly string[];
  /** The Kubernetes release that stopped serving it. */
  removedIn: string;
  /** The served successor, or undefined when there is none. */
  successor?: string;
  /** When there is no successor: what to do instead. */
  advice?: string;
}

export const RemovedApis: readonly RemovedApi[] = [
  {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    kinds: ['CustomResourceDefinition'],
    removedIn: '1.22',
    successor: 'apiextensions.k8s.io/v1',
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1beta1',
    kinds: ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'],
    removedIn: '1.22',
    successor: 'rbac.authorization.k8s.io/v1',
  },
  {
    apiVersion: 'scheduling.k8s.io/v1beta1',
    kinds: ['PriorityClass'],
    removedIn: '1.22',
    successor: 'scheduling.k8s.io/v1',
  },
  {
    apiVersion: 'scheduling.k8s.io/v1alpha1',
    kinds: ['PriorityClass'],
    removedIn: '1.17',
    successor: 'scheduling.k8s.io/v1',
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1beta1',
    kinds: ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'],
    removedIn: '1.22',
    successor: 'admissionregistration.k8s.io/v1',
  },
  {
    apiVersion: 'policy/v1beta1',
    kinds: ['PodDisruptionBudget'],
    removedIn: '1.25',
    successor: 'policy/v1',
  },
  {
    apiVersion: 'extensions/v1beta1',
    kinds: ['NetworkPolicy'],
    removedIn: '1.16',
    successor: 'networking.k8s.io/v1',
  },
  {
    apiVersion: 'policy/v1beta1',
    kinds: ['PodSecurityPolicy'],
    removedIn: '1.25',
    advice: 'remove it from the bundle; Pod Security admission (namespace labels) replaces it',
  },
  {
    apiVersion: 'extensions/v1beta1',
    kinds: ['PodSecurityPolicy'],
    removedIn: '1.16',
    advice: 'remove it from the bundle; Pod Security admission (namespace labels) replaces it',
  },
];

/** The removed API a manifest's apiVersion and kind belong to, if any. */
export function removedApi(apiVersion: string, kind: string): RemovedApi | undefined {
  return RemovedApis.find((r) => r.apiVersion === apiVersion && r.kinds.includes(kind));
}

export interface Upgraded {
  /** The manifest to use: converted, or the input itself when its API is served. */
  object: JsonObject;
  /** The apiVersion it was converted from, when it was. */
  from?: string;
  /** What the conversion changed or noticed, each naming the object and field. */
  warnings: Problem[];
}

/** Where a manifest is, for the problems about it. */
export interface ManifestLocation {
  file?: string;
  /** How to name the object, e.g. `bundle etcd.v0.9.4, CustomResourceDefinition/etcds.etcd.io`. */
  object?: string;
}

/**
 * Converts `manifest` if its apiVersion is a removed one; returns it unchanged otherwise. Fails
 * when the API was removed without a successor, or when converting needs a decision only the
 * author can make.
 */
export function upgradeManifest(manifest: unknown, where: ManifestLocation = {}): Result<Upgraded> {
  if (!isJsonObject(manifest)) return ok({ object: {}, warnings: [] });
  const { apiVersion, kind } = manifest;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string')
    return ok({ object: manifest, warnings: [] });
  const removed = removedApi(apiVersion, kind);
  if (removed === undefined) return ok({ object: manifest, warnings: [] });
  const object = where.object ?? `${kind}/${nameOf(manifest)}`;
  const problem = (n: SchemaNote): Problem => ({
    ...(where.file ? { file: where.file } : {}),
    object,
    field: n.field,
    message: n.message,
  });
  if (removed.successor === undefined) {
    return fail([
      problem({
        field: 'apiVersion',
        message: `${apiVersion} ${kind} was removed in Kubernetes ${removed.removedIn} without a successor; ${removed.advice ?? 'remove it from the bundle'}`,
      }),
    ]);
  }
  const converted = convert(manifest, kind, removed.successor);
  if (converted.errors.length > 0) {
    return fail(
      converted.errors.map((e) =>
        problem({
          field: e.field,
          message: `${e.message} (needed to convert ${apiVersion} to ${removed.successor})`,
        }),
      ),
    );
  }
  const summary = problem({
    field: 'apiVersion',
    message: `${apiVersion} is not served by Kubernetes ${removed.removedIn} and later; converted to ${removed.successor}`,
  });
  return ok({
    object: converted.object,
    from: apiVersion,
    warnings: [summary, ...converted.notes.map(problem)],
  });
}

function convert(manifest: JsonObject, kind: string, successor: string): BuiltinConversion {
  switch (kind) {
    case 'CustomResourceDefinition':
      return convertCRD(manifest);
    case 'PodDisruptionBudget':
      return podDisruptionBudget(manifest);
    case 'ValidatingWebhookConfiguration':
    case 'MutatingWebhookConfiguration':
      return webhookConfiguration(manifest);
    default:
      return renamed(manifest, successor);
  }
}

function nameOf(m: JsonObject): string {
  return isJsonObject(m.metadata) && typeof m.metadata.name === 'string' ? m.metadata.name : '?';
}
