/**
 * Golden rendering: an install as the objects it applies, one YAML document per object with a
 * comment saying which step (or Deployment) it is, so a diff of a golden reads as a diff of what
 * lands on the cluster.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import {
  type CSVObjects,
  desiredCSVObjects,
  type InstallStep,
  type OperatorGroupTargets,
  ownInstallSteps,
  planInstall,
  stepObject,
  stepPhase,
} from '../../../src/install/index.js';
import { sampleBundle } from './support.js';

export const CSVUid = '00000000-0000-4000-8000-00000000c5f0';
export const Source = { name: 'bosun-catalog', namespace: 'bosun-system' };

export function planSample(
  namespace: string,
  targets: OperatorGroupTargets,
  replaces?: string,
): InstallStep[] {
  const r = planInstall({ bundle: sampleBundle(), namespace, targets, source: Source, replaces });
  if (!r.ok) throw new Error(`plan failed: ${JSON.stringify(r.errors)}`);
  return r.value;
}

/** The CSV as it would be on the cluster after its step ran. */
export function liveCSV(steps: InstallStep[]): ClusterServiceVersion {
  const step = steps.find((s) => s.resource.kind === 'ClusterServiceVersion');
  if (step === undefined) throw new Error('no CSV step');
  const csv = stepObject(step) as unknown as ClusterServiceVersion;
  return { ...csv, metadata: { ...csv.metadata, uid: CSVUid } };
}

/**
 * The plan's steps, then what the CSV controller applies once the CSV exists: the RBAC the
 * targets add, the OperatorCondition and the Deployments.
 */
export function renderInstall(title: string, steps: InstallStep[], objects: CSVObjects): string {
  const owned = ownInstallSteps(steps, {
    name: steps[0]?.resolving ?? '',
    namespace: liveCSV(steps).metadata.namespace ?? '',
    uid: CSVUid,
  });
  const parts = [`# ${title}\n`];
  owned.forEach((s, i) => {
    const where = s.resource.namespace ? ` in ${s.resource.namespace}` : '';
    parts.push(
      `---\n# step ${i + 1} (${stepPhase(s)}): ${s.resource.kind}/${s.resource.name}${where}\n${stringify(stepObject(s))}`,
    );
  });
  const csvController = [...objects.rbac, ...objects.operatorCondition, ...objects.deployments];
  for (const o of csvController) {
    const where = o.metadata?.namespace ? ` in ${o.metadata.namespace}` : '';
    parts.push(
      `---\n# ${o.kind}/${o.metadata?.name}${where} (applied by the CSV controller)\n${stringify(o)}`,
    );
  }
  return parts.join('');
}

export function deploymentsFor(steps: InstallStep[], targets: OperatorGroupTargets): V1Deployment[] {
  return csvObjectsFor(steps, targets).deployments;
}

/** What the CSV controller applies for the plan's CSV. */
export function csvObjectsFor(steps: InstallStep[], targets: OperatorGroupTargets): CSVObjects {
  const r = desiredCSVObjects({ csv: liveCSV(steps), targets });
  if (!r.ok) throw new Error(`render failed: ${JSON.stringify(r.errors)}`);
  return r.value;
}
