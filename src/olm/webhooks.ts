/**
 * The rules for a CSV's webhook descriptions (`spec.webhookdefinitions[]`), for both bundle
 * validation and install.
 *
 * A problem with a `reason` is one OLM's install meets (pkg/controller/operators/olm and
 * install/webhook.go): the CSV fails with that reason, so install refuses it and validation
 * reports it as an error. Messages of those keep OLM's wording, which users search for. A
 * problem without a reason is a validator finding (`severity` says error or warning); most of
 * them the API server also enforces through the CSV's CRD schema when the CSV is created.
 */
import type { CSVReason } from '../apis/conditions.js';

export const WebhookTypes = [
  'ValidatingAdmissionWebhook',
  'MutatingAdmissionWebhook',
  'ConversionWebhook',
] as const;

type InstallReason = typeof CSVReason.InvalidWebhookDescription | typeof CSVReason.InstallComponentFailed;

export interface WebhookProblem {
  severity: 'error' | 'warning';
  field: string;
  message: string;
  /** Set when OLM's install fails the CSV over it, with the reason it fails with. */
  reason?: InstallReason;
}

type Json = Record<string, unknown>;
const record = (v: unknown): Json | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
const list = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * OLM's "singleton" operator: no install mode but AllNamespaces is supported (a CSV that lists no
 * install modes at all counts as one, as in OLM).
 */
export function supportsOnlyAllNamespaces(csv: unknown): boolean {
  const modes = list(record(record(csv)?.spec)?.installModes) ?? [];
  return modes.every((m) => {
    const mode = record(m);
    return mode?.type === 'AllNamespaces' ? mode.supported === true : mode?.supported !== true;
  });
}

/** Why a webhook rule would let an operator intercept what it must not, if it would. */
export function protectedRule(
  apiGroups: readonly string[],
  resources: readonly string[],
): string | undefined {
  if (apiGroups.includes('*')) return 'webhook rules cannot include all groups';
  if (apiGroups.includes('operators.coreos.com')) return 'webhook rules cannot include the OLM group';
  if (apiGroups.includes('admissionregistration.k8s.io')) {
    // OLM compares the resources with the kind names; the API matches rules by resource name,
    // so those are guarded too.
    const guarded = [
      '*',
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
      '*/*',
    ];
    if (resources.some((r) => guarded.includes(r))) {
      return 'webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources';
    }
  }
  return undefined;
}

/** The names of the install strategy's Deployments, as far as they are strings. */
function strategyDeploymentNames(spec: Json): string[] {
  const deployments = list(record(record(spec.install)?.spec)?.deployments) ?? [];
  return deployments.map((d) => text(record(d)?.name)).filter((n): n is string => n !== undefined);
}

/** Every problem with the CSV's webhook descriptions. */
export function webhookDescriptionProblems(csv: unknown): WebhookProblem[] {
  const problems: WebhookProblem[] = [];
  const error = (field: string, message: string, reason?: InstallReason) =>
    problems.push(
      reason ? { severity: 'error', field, message, reason } : { severity: 'error', field, message },
    );
  const warn = (field: string, message: string) => problems.push({ severity: 'warning', field, message });

  const spec = record(record(csv)?.spec);
  const hooks = spec?.webhookdefinitions;
  if (!spec || hooks === undefined || hooks === null) return problems;
  if (!Array.isArray(hooks)) {
    error('spec.webhookdefinitions', 'must be a list');
    return problems;
  }
  const csvName = text(record(record(csv)?.metadata)?.name) ?? '?';
  const deployments = strategyDeploymentNames(spec);
  const owned = new Set(
    (list(record(spec.customresourcedefinitions)?.owned) ?? []).map((o) => text(record(o)?.name)),
  );
  const names = new Set<string>();
  hooks.forEach((h, i) => {
    const at = `spec.webhookdefinitions[${i}]`;
    const hook = record(h) ?? {};
    const type = text(hook.type);
    if (!type || !(WebhookTypes as readonly string[]).includes(type)) {
      error(`${at}.type`, `"${String(hook.type)}" is not one of ${WebhookTypes.join(', ')}`);
    }
    const gen = text(hook.generateName);
    if (!gen) error(`${at}.generateName`, 'is required');
    else {
      if (names.has(gen))
        error(
          `${at}.generateName`,
          `CSV contains repeated WebhookDescription name ${gen}`,
          'InvalidWebhookDescription',
        );
      names.add(gen);
    }
    const dep = text(hook.deploymentName);
    if (!dep || !deployments.includes(dep)) {
      error(
        `${at}.deploymentName`,
        `${JSON.stringify(dep ?? '')} names no Deployment of the install strategy (${deployments.join(', ')}): it must name the Deployment that serves webhook ${gen ?? '?'}`,
        'InvalidWebhookDescription',
      );
    }
    const port = hook.containerPort;
    if (
      port !== undefined &&
      (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    ) {
      error(`${at}.containerPort`, `${String(port)} is not a port number (1-65535)`);
    }
    const path = text(hook.webhookPath);
    if (path !== undefined && !path.startsWith('/'))
      error(`${at}.webhookPath`, `"${path}" must start with "/"`);
    if (!list(hook.admissionReviewVersions)?.length)
      error(`${at}.admissionReviewVersions`, 'is required, e.g. [v1]');
    const policy = text(hook.failurePolicy);
    if (policy !== undefined && policy !== 'Fail' && policy !== 'Ignore')
      error(`${at}.failurePolicy`, `"${policy}" is not Fail or Ignore`);
    const rules = list(hook.rules) ?? [];
    rules.forEach((r, j) => {
      const strings = (v: unknown) => (list(v) ?? []).filter((s): s is string => typeof s === 'string');
      const message = protectedRule(strings(record(r)?.apiGroups), strings(record(r)?.resources));
      if (message !== undefined) error(`${at}.rules[${j}]`, message, 'InvalidWebhookDescription');
    });

    if (type === 'ConversionWebhook') {
      const failed = (field: string, message: string) =>
        error(field, `unable to manage conversion webhook: ${message}`, 'InstallComponentFailed');
      if (!supportsOnlyAllNamespaces(csv))
        failed(`${at}.type`, 'CSVs with conversion webhooks must support only AllNamespaces');
      const crds = list(hook.conversionCRDs) ?? [];
      if (crds.length === 0)
        failed(`${at}.conversionCRDs`, 'conversion webhook must have at least one CRD specified');
      crds.forEach((c, j) => {
        if (typeof c !== 'string' || !owned.has(c))
          failed(`${at}.conversionCRDs[${j}]`, `csv ${csvName} does not own CRD ${String(c)}`);
      });
    } else if (type) {
      const sideEffects = text(hook.sideEffects);
      if (sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun') {
        error(
          `${at}.sideEffects`,
          `"${String(sideEffects)}" must be None or NoneOnDryRun for an admission webhook`,
        );
      }
      if (rules.length === 0) warn(`${at}.rules`, 'is empty: the webhook will never be called');
    }
  });
  return problems;
}
