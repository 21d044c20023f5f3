/**
 * `planInstall`: a decoded bundle, the namespace it installs into and its OperatorGroup's targets
 * → the InstallPlan steps, one per object, in the order they are applied:
 *   1. CRDs (the controller waits for each to be Established before going on),
 *   2. ServiceAccounts,
 *   3. ClusterRoles, Roles, ClusterRoleBindings, RoleBindings (generated from the CSV's
 *      permissions in its namespace and its clusterPermissions, then the bundle's own; what the
 *      OperatorGroup's targets add is the CSV controller's, see ./rbac.ts),
 *   4. Services, ConfigMaps, Secrets and the other supported kinds,
 *   5. the CSV.
 * Within a phase, steps are sorted by kind, namespace and name, so a re-plan of the same input
 * is identical whatever order the catalog listed the objects in.
 *
 * Objects in the CSV's namespace are to be owned by the CSV, whose uid only exists once the CSV
 * does: the controller passes the plan through `ownInstallSteps` with the CSV's uid before (or
 * after, to patch) applying them.
 */

import { CSVAnnotation } from '../apis/bundle.js';
import type { Property } from '../apis/fbc.js';
import type { ClusterServiceVersion, Step, StepResource } from '../apis/operators.js';
import { StepStatus } from '../apis/operators.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import type { BundleObject, InstallableBundle } from './bundle-objects.js';
import { bundleLabel } from './bundle-objects.js';
import {
  type InstallPhase,
  kindInfo,
  kindRank,
  PhaseOrder,
  type Resource,
  splitApiVersion,
} from '../olm/kinds.js';
import { type OperatorGroupTargets, operatorGroupAnnotations } from './operatorgroup.js';
import { addOwnerReference, type CSVIdentity, type CSVRef, managedLabels, ownerLabels } from './ownership.js';
import { planRbac } from './rbac.js';

/** OLM's StepResource plus the object's namespace (cluster-scoped objects have none). */
export interface InstallStepResource extends StepResource {
  namespace?: string;
  manifest: string;
}

export interface InstallStep extends Omit<Step, 'resource'> {
  resource: InstallStepResource;
}

export interface PlanInput {
  bundle: InstallableBundle;
  /** The namespace the operator is installed in (the Subscription's and the CSV's). */
  namespace: string;
  /** The namespace's OperatorGroup and the namespaces it targets. */
  targets: OperatorGroupTargets;
  /** The CatalogSource the bundle came from, recorded on every step as OLM does. */
  source: { name: string; namespace: string };
  /** The CSV this one replaces (the one installed now), written to the CSV's `spec.replaces`. */
  replaces?: string;
}

export function planInstall(input: PlanInput): Result<InstallStep[]> {
  const { bundle, namespace } = input;
  if (namespace === '') {
    return fail([
      { object: bundleLabel(bundle.name), field: 'namespace', message: 'an install needs a namespace' },
    ]);
  }
  const csvRef: CSVRef = { name: bundle.csv.metadata.name as string, namespace };
  const strategy = bundle.csv.spec.install.spec ?? { deployments: [] };
  // What the OperatorGroup's targets add to the permissions is the CSV controller's (./rbac.ts).
  const rbac = planRbac({
    csv: csvRef,
    permissions: strategy.permissions ?? [],
    clusterPermissions: strategy.clusterPermissions ?? [],
  });

  const problems: Problem[] = [];
  const byKey = new Map<string, Resource>();
  const add = (r: Resource) => byKey.set(objectKey(r), r);

  for (const r of [
    ...rbac.serviceAccounts,
    ...rbac.clusterRoles,
    ...rbac.roles,
    ...rbac.clusterRoleBindings,
    ...rbac.roleBindings,
  ]) {
    add(r);
  }
  for (const o of bundle.objects) {
    const placed = placeBundleObject(o, csvRef);
    const existing = byKey.get(objectKey(placed));
    if (existing === undefined) {
      add(placed);
    } else if (o.kind === 'ServiceAccount') {
      // The bundle ships the account a permission names: keep the bundle's (it may carry
      // imagePullSecrets or annotations) under the owner labels both would have.
      add(placed);
    } else {
      problems.push({
        object: `${bundleLabel(bundle.name)}, ${o.kind}/${o.name}`,
        field: 'metadata.name',
        message: 'has the name of an object Bosun generates from the CSV permissions; rename it',
      });
    }
  }
  if (problems.length > 0) return fail(problems);

  const csv = renderCSV(bundle, input);
  const objects = [...byKey.values()].sort(applyOrder);
  return ok([...objects, csv].map((r) => toStep(r, csvRef.name, input.source)));
}

/** Sets an object's namespace and owner labels for this install. */
function placeBundleObject(o: BundleObject, csv: CSVRef): Resource {
  const labels =
    o.kind === 'CustomResourceDefinition'
      ? { ...o.object.metadata.labels, ...managedLabels() }
      : { ...o.object.metadata.labels, ...ownerLabels(csv) };
  const metadata = { ...o.object.metadata, labels };
  if (o.info.namespaced) metadata.namespace = csv.namespace;
  const placed: Resource = { ...o.object, metadata };
  if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') return withSubjectNamespaces(placed, csv);
  return placed;
}

/**
 * A binding in a bundle cannot know the namespace it will be installed in, so ServiceAccount
 * subjects without one are given the install namespace (the only place the operator's accounts
 * exist).
 */
function withSubjectNamespaces(binding: Resource, csv: CSVRef): Resource {
  if (!Array.isArray(binding.subjects)) return binding;
  const subjects = (binding.subjects as Record<string, unknown>[]).map((s) =>
    s.kind === 'ServiceAccount' && (s.namespace === undefined || s.namespace === '')
      ? { ...s, namespace: csv.namespace }
      : s,
  );
  return { ...binding, subjects };
}

/**
 * The CSV as it is created: in the install namespace, `spec.replaces` set to the CSV actually
 * being replaced (OLM overwrites the bundle's value with the resolver's, empty on a fresh
 * install), the bundle's properties projected into `operatorframework.io/properties`, and the
 * OperatorGroup annotations that the CSV controller would otherwise add right after.
 */
function renderCSV(bundle: InstallableBundle, input: PlanInput): Resource {
  const source = bundle.csv;
  const annotations = {
    ...source.metadata.annotations,
    [CSVAnnotation.Properties]: propertiesAnnotation(bundle.properties),
    ...operatorGroupAnnotations(input.targets, input.namespace),
  };
  const { replaces: _replaces, ...spec } = source.spec;
  const csv: ClusterServiceVersion = {
    ...source,
    metadata: { ...source.metadata, namespace: input.namespace, annotations },
    spec:
      input.replaces === undefined || input.replaces === '' ? spec : { ...spec, replaces: input.replaces },
  };
  return csv as unknown as Resource;
}

/** OLM's `{"properties":[...]}` projection of the bundle's properties. */
export function propertiesAnnotation(properties: readonly Property[]): string {
  return properties.length === 0 ? '{}' : JSON.stringify({ properties });
}

function toStep(r: Resource, resolving: string, source: PlanInput['source']): InstallStep {
  const { group, version } = splitApiVersion(r.apiVersion);
  const resource: InstallStepResource = {
    sourceName: source.name,
    sourceNamespace: source.namespace,
    group,
    version,
    kind: r.kind,
    name: r.metadata.name,
    manifest: JSON.stringify(r),
  };
  if (r.metadata.namespace !== undefined) resource.namespace = r.metadata.namespace;
  return { resolving, resource, status: StepStatus.Unknown };
}

function objectKey(r: Resource): string {
  return `${r.kind}/${r.metadata.namespace ?? ''}/${r.metadata.name}`;
}

function applyOrder(a: Resource, b: Resource): number {
  return (
    kindRank(a.kind) - kindRank(b.kind) ||
    compare(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    compare(a.metadata.name, b.metadata.name)
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---- for the controller that executes a plan ----

/** The object a step creates. */
export function stepObject(step: InstallStep): Resource {
  return JSON.parse(step.resource.manifest) as Resource;
}

/** The phase a step belongs to; the controller finishes one phase before starting the next. */
export function stepPhase(step: Pick<InstallStep, 'resource'>): InstallPhase {
  return kindInfo(step.resource.kind)?.phase ?? 'Resources';
}

/** Steps grouped by phase, in apply order, leaving out empty phases. */
export function stepsByPhase<S extends Pick<InstallStep, 'resource'>>(
  steps: readonly S[],
): { phase: InstallPhase; steps: S[] }[] {
  return PhaseOrder.map((phase) => ({ phase, steps: steps.filter((s) => stepPhase(s) === phase) })).filter(
    (g) => g.steps.length > 0,
  );
}

/**
 * The plan with an ownerReference to the CSV added to every object in the CSV's namespace
 * (other than the CSV itself). Cluster-scoped objects and RBAC copied into other namespaces keep
 * only their owner labels.
 */
export function ownInstallSteps<S extends InstallStep>(steps: readonly S[], csv: CSVIdentity): S[] {
  return steps.map((step) => {
    if (step.resource.kind === 'ClusterServiceVersion' || step.resource.namespace !== csv.namespace)
      return step;
    const owned = addOwnerReference(stepObject(step), csv);
    return { ...step, resource: { ...step.resource, manifest: JSON.stringify(owned) } };
  });
}
