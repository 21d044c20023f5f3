/**
 * Checks that a CSV's install strategy is one Bosun can carry out, before anything is planned:
 * the `deployment` strategy, every Deployment named and with a pod template, and every
 * permission naming its ServiceAccount. OLM finds these only when the CSV is already on the
 * cluster (phase Failed, InvalidInstallStrategy); finding them while decoding the bundle lets an
 * InstallPlan fail before it creates anything.
 */
import type { ClusterServiceVersion } from '../apis/operators.js';
import { InstallStrategyName } from '../apis/operators.js';
import type { Problem } from '../util/result.js';

export function validateInstallStrategy(csv: ClusterServiceVersion, object: string): Problem[] {
  const problems: Problem[] = [];
  const problem = (field: string, message: string) => problems.push({ object, field, message });

  // The CSV came from a bundle: its shape is only what the types claim once checked here.
  const install: unknown = (csv.spec as unknown as Record<string, unknown> | undefined)?.install;
  if (!isRecord(install)) {
    problem('spec.install', 'is missing: a CSV needs an install strategy');
    return problems;
  }
  if (install.strategy !== InstallStrategyName.Deployment) {
    problem(
      'spec.install.strategy',
      `${JSON.stringify(install.strategy)} is not an install strategy Bosun knows; use "deployment"`,
    );
    return problems;
  }
  const details = install.spec;
  if (!isRecord(details)) {
    problem('spec.install.spec', 'is missing: the deployment strategy needs its details');
    return problems;
  }

  if (!Array.isArray(details.deployments)) {
    problem('spec.install.spec.deployments', 'must be a list of Deployments');
  } else {
    const seen = new Set<string>();
    details.deployments.forEach((d, i) => {
      const at = `spec.install.spec.deployments[${i}]`;
      if (!isRecord(d) || typeof d.name !== 'string' || d.name === '') {
        problem(`${at}.name`, 'must name the Deployment');
        return;
      }
      if (seen.has(d.name)) problem(`${at}.name`, `Deployment ${d.name} is listed twice`);
      seen.add(d.name);
      const template = isRecord(d.spec) ? d.spec.template : undefined;
      if (!isRecord(template)) {
        problem(`${at}.spec.template`, `Deployment ${d.name} needs a pod template`);
      } else if (!isRecord(template.spec) || !Array.isArray(template.spec.containers)) {
        problem(`${at}.spec.template.spec.containers`, `Deployment ${d.name} needs a list of containers`);
      }
    });
  }

  checkPermissions(details.permissions, 'spec.install.spec.permissions', problem);
  checkPermissions(details.clusterPermissions, 'spec.install.spec.clusterPermissions', problem);
  return problems;
}

function checkPermissions(
  list: unknown,
  field: string,
  problem: (field: string, message: string) => void,
): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) {
    problem(field, 'must be a list of {serviceAccountName, rules}');
    return;
  }
  list.forEach((p, i) => {
    if (!isRecord(p) || typeof p.serviceAccountName !== 'string' || p.serviceAccountName === '') {
      problem(`${field}[${i}].serviceAccountName`, 'must name the ServiceAccount the rules are granted to');
    } else if (!Array.isArray(p.rules)) {
      problem(`${field}[${i}].rules`, `must be a list of policy rules for ${p.serviceAccountName}`);
    }
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
