/**
 * What a CSV needs before its Deployments may run, as pure functions over what the controller
 * read: the namespace's one OperatorGroup allowing the CSV's install modes (OLM's reasons when
 * not), and `status.requirementStatus` for the CRDs it owns or requires and the ServiceAccounts
 * its permissions name. RBAC rules themselves are not checked here: the InstallPlan creates the
 * operator namespace's RBAC before the CSV, and the CSV controller applies what the current
 * OperatorGroup targets add before the Deployments, so they are in place by construction (OLM
 * checks them with a rule evaluator instead).
 */
import { CSVReason } from '../apis/conditions.js';
import type { ClusterServiceVersion, OperatorGroup, RequirementStatus } from '../apis/operators.js';
import { RequirementStatusReason } from '../apis/operators.js';
import { csvServiceAccounts } from '../install/csv-objects.js';
import {
  installModeSupport,
  type NamespaceInfo,
  type OperatorGroupTargets,
  operatorGroupNamespaces,
  pickOperatorGroup,
} from '../install/operatorgroup.js';
import { isEstablished } from '../kube/crds.js';
import type { CustomResourceDefinition } from './context.js';

export type OperatorGroupVerdict =
  | { ok: true; group: OperatorGroup; targets: OperatorGroupTargets }
  | { ok: false; reason: CSVReason; message: string };

/** The namespace's OperatorGroup and the namespaces it targets, if it allows this CSV. */
export function operatorGroupVerdict(
  csv: ClusterServiceVersion,
  groups: readonly OperatorGroup[],
  namespaces: readonly NamespaceInfo[],
): OperatorGroupVerdict {
  const picked = pickOperatorGroup(groups);
  if (!picked.ok) return picked;
  const group = picked.group;
  const targets = operatorGroupNamespaces(group, namespaces);
  if (!targets.ok) {
    return {
      ok: false,
      reason: CSVReason.UnsupportedOperatorGroup,
      message: `operatorgroup ${group.metadata.name}: ${targets.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
    };
  }
  const verdict = installModeSupport(csv.spec.installModes, csv.metadata.namespace ?? '', targets.value);
  if (!verdict.supported) return { ok: false, reason: verdict.reason, message: verdict.message };
  return {
    ok: true,
    group,
    targets: { operatorGroup: group.metadata.name ?? '', namespaces: targets.value },
  };
}

/** The CRD names a CSV owns or requires. */
export function csvCrdNames(csv: ClusterServiceVersion): string[] {
  const crds = csv.spec.customresourcedefinitions ?? {};
  return [...new Set([...(crds.owned ?? []), ...(crds.required ?? [])].map((c) => c.name))].sort();
}

export interface RequirementInput {
  csv: ClusterServiceVersion;
  crd(name: string): CustomResourceDefinition | undefined;
  serviceAccountExists(name: string): boolean;
}

/** OLM's `status.requirementStatus`, and whether every requirement is met. */
export function checkRequirements(input: RequirementInput): { met: boolean; statuses: RequirementStatus[] } {
  const statuses: RequirementStatus[] = [];
  for (const name of csvCrdNames(input.csv)) {
    const crd = input.crd(name);
    const base = { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', name };
    if (crd === undefined) {
      statuses.push({ ...base, status: RequirementStatusReason.NotPresent, message: 'CRD is not present' });
    } else if (!isEstablished(crd)) {
      statuses.push({
        ...base,
        status: RequirementStatusReason.NotAvailable,
        message: 'CRD is present but the Established condition is not True (not available)',
      });
    } else {
      statuses.push({
        ...base,
        status: RequirementStatusReason.Present,
        message: 'CRD is present and Established condition is true',
      });
    }
  }
  for (const name of csvServiceAccounts(input.csv)) {
    const present = input.serviceAccountExists(name);
    statuses.push({
      group: '',
      version: 'v1',
      kind: 'ServiceAccount',
      name,
      status: present ? RequirementStatusReason.Present : RequirementStatusReason.NotPresent,
      message: present ? 'Service account exists' : 'Service account does not exist',
    });
  }
  return { met: statuses.every((s) => s.status === RequirementStatusReason.Present), statuses };
}
