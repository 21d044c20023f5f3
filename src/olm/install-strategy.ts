/**
 * A CSV's install strategy (`spec.install`), read once for both bundle validation and install.
 *
 * Each problem says when OLM meets it:
 * - `refused`: OLM's install of the CSV fails (an unknown strategy, details that do not decode,
 *   or a Deployment the API server refuses: no name, no selector, template labels that do not
 *   match the selector, no containers or a container without a name). Install refuses it before creating anything; validation
 *   reports it as an error.
 * - `invalid`: OLM would install it, but the bundle is malformed (a container without an
 *   image, a rule without verbs, a namespaced permission granting non-resource URLs); validation reports an error only.
 * - `warning`: worth saying, not wrong (no Deployments at all: OLM installs such a CSV and
 *   reports it Succeeded with nothing running; a permission with no rules).
 */
import type {
  StrategyDeploymentPermissions,
  StrategyDeploymentSpec,
  StrategyDetailsDeployment,
} from '../apis/operators.js';

export type StrategySeverity = 'refused' | 'invalid' | 'warning';

export interface StrategyProblem {
  severity: StrategySeverity;
  field: string;
  message: string;
}

export interface InstallStrategyReading {
  /** The deployment strategy's details; undefined when the strategy is refused. */
  strategy?: StrategyDetailsDeployment;
  problems: StrategyProblem[];
}

export const DeploymentStrategyName = 'deployment';

type Json = Record<string, unknown>;
const record = (v: unknown): Json | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Reads `csv.spec.install`; `strategy` is set only when nothing is `refused`. */
export function readInstallStrategy(csv: unknown): InstallStrategyReading {
  const problems: StrategyProblem[] = [];
  const say = (severity: StrategySeverity) => (field: string, message: string) =>
    problems.push({ severity, field, message });
  const refused = say('refused');
  const invalid = say('invalid');
  const warning = say('warning');

  const install = record(record(record(csv)?.spec)?.install);
  if (!install) {
    refused('spec.install', 'is required: the deployments and permissions the operator runs with');
    return { problems };
  }
  if (install.strategy !== DeploymentStrategyName) {
    refused(
      'spec.install.strategy',
      `${JSON.stringify(install.strategy)} is not supported; use "deployment"`,
    );
    return { problems };
  }
  // OLM decodes missing details and a missing deployments list as empty.
  const details = install.spec ?? {};
  if (!record(details)) {
    refused('spec.install.spec', 'must be an object with deployments, permissions and clusterPermissions');
    return { problems };
  }
  const detailsRec = record(details)!;

  const deployments: StrategyDeploymentSpec[] = [];
  const listed = detailsRec.deployments ?? [];
  if (!Array.isArray(listed)) {
    refused('spec.install.spec.deployments', 'must be a list of Deployments');
  } else {
    if (listed.length === 0)
      warning('spec.install.spec.deployments', 'is empty: the CSV installs and runs no operator');
    const seen = new Set<string>();
    listed.forEach((d, i) => {
      const at = `spec.install.spec.deployments[${i}]`;
      const read = readDeployment(d, at, refused, invalid);
      if (!read) return;
      if (seen.has(read.name)) refused(`${at}.name`, `deployment "${read.name}" is declared twice`);
      seen.add(read.name);
      deployments.push(read);
    });
  }

  const permissions = readPermissions(detailsRec, 'permissions', refused, invalid, warning);
  const clusterPermissions = readPermissions(detailsRec, 'clusterPermissions', refused, invalid, warning);
  if (problems.some((p) => p.severity === 'refused')) return { problems };
  const strategy: StrategyDetailsDeployment = { deployments };
  if (permissions) strategy.permissions = permissions;
  if (clusterPermissions) strategy.clusterPermissions = clusterPermissions;
  return { strategy, problems };
}

type Say = (field: string, message: string) => void;

function readDeployment(
  d: unknown,
  at: string,
  refused: Say,
  invalid: Say,
): StrategyDeploymentSpec | undefined {
  const dep = record(d);
  const name = dep?.name;
  let ok = true;
  if (!nonEmptyString(name)) {
    refused(`${at}.name`, 'is required');
    ok = false;
  }
  const spec = record(dep?.spec);
  if (!spec) {
    refused(`${at}.spec`, 'is required (an apps/v1 DeploymentSpec)');
    return undefined;
  }
  // The API server refuses an apps/v1 Deployment without a selector, or whose pod template does
  // not carry the selector's labels, so OLM's install of such a CSV fails.
  const selector = record(spec.selector);
  if (!selector) {
    refused(`${at}.spec.selector`, 'is required');
    ok = false;
  }
  const template = record(spec.template);
  if (!template) {
    refused(`${at}.spec.template`, 'is required: the pod template');
    return undefined;
  }
  const labels = record(record(template.metadata)?.labels) ?? {};
  for (const [k, v] of Object.entries(record(selector?.matchLabels) ?? {})) {
    if (labels[k] !== v) {
      refused(`${at}.spec.template.metadata.labels`, `must include the selector's label ${k}=${String(v)}`);
      ok = false;
    }
  }
  const containers = record(template.spec)?.containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    refused(`${at}.spec.template.spec.containers`, 'is required: at least one container');
    ok = false;
  } else {
    containers.forEach((c, j) => {
      const cat = `${at}.spec.template.spec.containers[${j}]`;
      if (!nonEmptyString(record(c)?.name)) {
        refused(`${cat}.name`, 'is required');
        ok = false;
      }
      // The API server takes a pod template without an image (only pods need one), so OLM
      // installs it and the Deployment never becomes ready: a validation finding only.
      if (!nonEmptyString(record(c)?.image)) invalid(`${cat}.image`, 'is required');
    });
  }
  return ok ? (dep as unknown as StrategyDeploymentSpec) : undefined;
}

function readPermissions(
  details: Json,
  key: 'permissions' | 'clusterPermissions',
  refused: Say,
  invalid: Say,
  warning: Say,
): StrategyDeploymentPermissions[] | undefined {
  const list = details[key];
  if (list === undefined || list === null) return undefined;
  const field = `spec.install.spec.${key}`;
  if (!Array.isArray(list)) {
    refused(field, 'must be a list of {serviceAccountName, rules}');
    return undefined;
  }
  const out: StrategyDeploymentPermissions[] = [];
  list.forEach((p, i) => {
    const at = `${field}[${i}]`;
    const perm = record(p);
    const sa = perm?.serviceAccountName;
    const rules = perm?.rules;
    if (!nonEmptyString(sa))
      refused(`${at}.serviceAccountName`, 'is required: the ServiceAccount granted the rules');
    if (!Array.isArray(rules)) {
      refused(`${at}.rules`, 'must be a list of policy rules');
      return;
    }
    if (rules.length === 0) warning(`${at}.rules`, 'is empty: the service account gets no permissions');
    rules.forEach((r, j) => {
      const rat = `${at}.rules[${j}]`;
      const rule = record(r);
      const list = (k: string) => (Array.isArray(rule?.[k]) ? (rule![k] as unknown[]) : undefined);
      if (!list('verbs')?.length) invalid(`${rat}.verbs`, 'is required: at least one verb');
      const nonResource = list('nonResourceURLs');
      const resources = list('resources');
      if (nonResource?.length && key === 'permissions')
        invalid(`${rat}.nonResourceURLs`, 'only cluster permissions can grant non-resource URLs');
      if (!nonResource?.length && !resources?.length)
        invalid(`${rat}.resources`, 'is required (or nonResourceURLs)');
      if (resources?.length && !list('apiGroups'))
        invalid(`${rat}.apiGroups`, 'is required with resources ("" is the core group)');
    });
    if (nonEmptyString(sa)) out.push(perm as unknown as StrategyDeploymentPermissions);
  });
  return out;
}
