import { describe, expect, it } from 'vitest';
import { type WebhookProblem, webhookDescriptionProblems } from '../../../src/olm/webhooks.js';

const hook = (over: Record<string, unknown> = {}) => ({
  type: 'ValidatingAdmissionWebhook',
  generateName: 'vwidget.example.com',
  deploymentName: 'op',
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  rules: [{ apiGroups: ['example.com'], resources: ['widgets'], operations: ['CREATE'] }],
  ...over,
});
const csv = (hooks: unknown, modes = [{ type: 'AllNamespaces', supported: true }]) => ({
  metadata: { name: 'op.v1.0.0' },
  spec: {
    installModes: modes,
    install: { strategy: 'deployment', spec: { deployments: [{ name: 'op' }] } },
    customresourcedefinitions: { owned: [{ name: 'widgets.example.com' }] },
    webhookdefinitions: hooks,
  },
});
const summary = (ps: WebhookProblem[]) =>
  ps.map((p) => `${p.severity}${p.reason ? ` (${p.reason})` : ''} ${p.field}: ${p.message}`);

describe('webhookDescriptionProblems', () => {
  it('finds nothing wrong with well-formed descriptions, or none', () => {
    const conversion = hook({
      type: 'ConversionWebhook',
      generateName: 'c.example.com',
      conversionCRDs: ['widgets.example.com'],
    });
    expect(webhookDescriptionProblems(csv([hook(), conversion]))).toEqual([]);
    expect(webhookDescriptionProblems(csv(undefined))).toEqual([]);
  });

  it.each<[string, unknown, string[]]>([
    ['descriptions that are not a list', csv({}), ['error spec.webhookdefinitions: must be a list']],
    [
      'a repeated generateName',
      csv([hook(), hook()]),
      [
        'error (InvalidWebhookDescription) spec.webhookdefinitions[1].generateName: CSV contains repeated WebhookDescription name vwidget.example.com',
      ],
    ],
    [
      'an unknown deployment',
      csv([hook({ deploymentName: 'nope' })]),
      [
        'error (InvalidWebhookDescription) spec.webhookdefinitions[0].deploymentName: "nope" names no Deployment of the install strategy (op): it must name the Deployment that serves webhook vwidget.example.com',
      ],
    ],
    [
      'a rule on every group',
      csv([hook({ rules: [{ apiGroups: ['*'], resources: ['pods'] }] })]),
      [
        'error (InvalidWebhookDescription) spec.webhookdefinitions[0].rules[0]: webhook rules cannot include all groups',
      ],
    ],
    [
      'a conversion webhook on a namespaced operator, for a CRD it does not own',
      csv(
        [hook({ type: 'ConversionWebhook', conversionCRDs: ['others.example.com'] })],
        [
          { type: 'OwnNamespace', supported: true },
          { type: 'AllNamespaces', supported: true },
        ],
      ),
      [
        'error (InstallComponentFailed) spec.webhookdefinitions[0].type: unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces',
        'error (InstallComponentFailed) spec.webhookdefinitions[0].conversionCRDs[0]: unable to manage conversion webhook: csv op.v1.0.0 does not own CRD others.example.com',
      ],
    ],
    [
      'validator findings',
      csv([
        hook({
          type: 'Sometimes',
          containerPort: 0,
          webhookPath: 'validate',
          admissionReviewVersions: [],
          failurePolicy: 'Maybe',
        }),
        hook({ generateName: 'm.example.com', sideEffects: 'Some', rules: [] }),
      ]),
      [
        'error spec.webhookdefinitions[0].type: "Sometimes" is not one of ValidatingAdmissionWebhook, MutatingAdmissionWebhook, ConversionWebhook',
        'error spec.webhookdefinitions[0].containerPort: 0 is not a port number (1-65535)',
        'error spec.webhookdefinitions[0].webhookPath: "validate" must start with "/"',
        'error spec.webhookdefinitions[0].admissionReviewVersions: is required, e.g. [v1]',
        'error spec.webhookdefinitions[0].failurePolicy: "Maybe" is not Fail or Ignore',
        'error spec.webhookdefinitions[1].sideEffects: "Some" must be None or NoneOnDryRun for an admission webhook',
        'warning spec.webhookdefinitions[1].rules: is empty: the webhook will never be called',
      ],
    ],
  ])('reports %s', (_, input, want) => {
    expect(summary(webhookDescriptionProblems(input))).toEqual(want);
  });
});
