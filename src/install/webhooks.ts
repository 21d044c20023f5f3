/**
 * A CSV's `spec.webhookdefinitions` as OLM installs them (pkg/controller/install/webhook.go and
 * WebhookDescription in operator-framework/api):
 * - each admission webhook becomes its own ValidatingWebhookConfiguration or
 *   MutatingWebhookConfiguration holding one webhook named after the description's
 *   `generateName`, calling `<deployment>-service` in the CSV's namespace on `containerPort`
 *   (default 443) at `webhookPath`, with the serving CA as `caBundle`, and the description's
 *   rules, failurePolicy, matchPolicy, objectSelector, sideEffects, timeoutSeconds,
 *   admissionReviewVersions and (mutating only) reinvocationPolicy;
 * - its namespaceSelector is the OperatorGroup's: the label OLM puts on each target namespace
 *   (`olm.operatorgroup.uid/<group uid>`) when the group lists `targetNamespaces`, the group's own
 *   selector when it has one, and none (every namespace) when the group targets all namespaces;
 * - the configuration carries the CSV's owner labels, the description's `generateName`
 *   (`olm.webhook-description-generate-name`) and a hash of the description
 *   (`olm.webhook-description-hash`). OLM creates it with a random suffix and finds it again by
 *   these labels; Bosun applies it under a name derived from the CSV and the description, so
 *   applying twice converges and each CSV of an upgrade has its own;
 * - a conversion webhook sets `spec.conversion` of each CRD in `conversionCRDs` to call the same
 *   Service (path default `/`), with `conversionReviewVersions` from `admissionReviewVersions`.
 *   OLM allows it only for a CSV that supports no install mode but AllNamespaces (one copy of the
 *   operator converts for the whole cluster) and only for CRDs the CSV owns. When the CSV is
 *   deleted and no CSV of its namespace declares the webhook any more, the CRD goes back to
 *   strategy None, so its custom resources stay readable without the operator.
 */
import type { KubeObject, LabelSelector } from '../apis/meta.js';
import type { ClusterServiceVersion, OperatorGroup, WebhookDescription } from '../apis/operators.js';
import { WebhookAdmissionType } from '../apis/operators.js';
import { generatedName, shortHash, stableStringify } from './hash.js';
import type { Resource } from '../olm/kinds.js';
import { webhookDescriptionProblems } from '../olm/webhooks.js';
import { operatorGroupLabel } from './operatorgroup.js';
import { type CSVRef, isManaged, ownerLabels } from './ownership.js';
import type { ServingProblem } from './serving.js';

export const WebhookLabel = {
  /** The description's `generateName`. */
  DescriptionName: 'olm.webhook-description-generate-name',
  /** A hash of the description: a configuration with another hash is outdated. */
  DescriptionHash: 'olm.webhook-description-hash',
} as const;

const admissionApiVersion = 'admissionregistration.k8s.io/v1';
const configurationKind = {
  [WebhookAdmissionType.ValidatingAdmissionWebhook]: 'ValidatingWebhookConfiguration',
  [WebhookAdmissionType.MutatingAdmissionWebhook]: 'MutatingWebhookConfiguration',
} as const;
export const WebhookConfigurationKinds: readonly string[] = Object.values(configurationKind);

/** The Service a webhook calls and the CA that signed its certificate. */
export interface Served {
  service: string;
  caPEM: string;
}

const base64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/**
 * The kernel's webhook description problems that OLM's install fails the CSV over, each with its
 * reason (src/olm/webhooks.ts): a repeated `generateName`, a `deploymentName` naming no Deployment
 * of the strategy, rules matching every group, OLM's own group or the webhook configurations
 * themselves (InvalidWebhookDescription); a conversion webhook on a CSV supporting more than
 * AllNamespaces, without CRDs, or for a CRD the CSV does not own (InstallComponentFailed).
 */
export function validateWebhooks(csv: ClusterServiceVersion, object: string): ServingProblem[] {
  return webhookDescriptionProblems(csv).flatMap((p) =>
    p.reason === undefined ? [] : [{ object, field: p.field, message: p.message, reason: p.reason }],
  );
}

/**
 * The namespaceSelector of an OperatorGroup's admission webhooks (OLM's
 * `NamespaceLabelSelector`); undefined selects every namespace.
 */
export function webhookNamespaceSelector(
  og: Pick<OperatorGroup, 'metadata' | 'spec'>,
): LabelSelector | undefined {
  const spec = og.spec ?? {};
  if ((spec.targetNamespaces ?? []).length > 0) {
    return { matchLabels: { [operatorGroupLabel(og.metadata.uid ?? '')]: '' } };
  }
  return spec.selector === undefined ? undefined : structuredClone(spec.selector);
}

/** The name Bosun gives a CSV's configuration for one webhook description. */
export function webhookConfigurationName(csv: CSVRef, generateName: string): string {
  return generatedName(generateName, [csv.namespace, csv.name, generateName]);
}

export function webhookDescriptionHash(desc: WebhookDescription): string {
  return shortHash(desc, 16);
}

/** One configuration per admission webhook description, in the descriptions' order. */
export function webhookConfigurations(input: {
  csv: CSVRef;
  webhooks: readonly WebhookDescription[];
  served: Served;
  namespaceSelector: LabelSelector | undefined;
}): Resource[] {
  const { csv, served } = input;
  const out: Resource[] = [];
  for (const desc of input.webhooks) {
    if (desc.type === WebhookAdmissionType.ConversionWebhook) continue;
    const kind = configurationKind[desc.type];
    const service: Record<string, unknown> = {
      namespace: csv.namespace,
      name: served.service,
      ...(desc.webhookPath !== undefined ? { path: desc.webhookPath } : {}),
      port: desc.containerPort !== undefined && desc.containerPort > 0 ? desc.containerPort : 443,
    };
    const webhook: Record<string, unknown> = {
      name: desc.generateName,
      clientConfig: { service, caBundle: base64(served.caPEM) },
      ...defined({
        rules: desc.rules,
        failurePolicy: desc.failurePolicy,
        matchPolicy: desc.matchPolicy,
        namespaceSelector: input.namespaceSelector,
        objectSelector: desc.objectSelector,
        sideEffects: desc.sideEffects,
        timeoutSeconds: desc.timeoutSeconds,
        admissionReviewVersions: desc.admissionReviewVersions,
        ...(desc.type === WebhookAdmissionType.MutatingAdmissionWebhook
          ? { reinvocationPolicy: desc.reinvocationPolicy }
          : {}),
      }),
    };
    out.push({
      apiVersion: admissionApiVersion,
      kind,
      metadata: {
        name: webhookConfigurationName(csv, desc.generateName),
        labels: {
          ...ownerLabels(csv),
          [WebhookLabel.DescriptionName]: desc.generateName,
          [WebhookLabel.DescriptionHash]: webhookDescriptionHash(desc),
        },
      },
      webhooks: [structuredClone(webhook)],
    });
  }
  return out;
}

function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

interface WebhookEntry {
  clientConfig?: { service?: Record<string, unknown>; caBundle?: string };
  namespaceSelector?: LabelSelector;
}

/**
 * The first webhook configuration that is not as rendered: missing, or (outdated) with another
 * description hash, Service, CA or namespace selector; or one the CSV owns that it no longer
 * declares. Defaults the API server fills in are not differences.
 */
export function checkWebhookConfigurations(
  desired: readonly Resource[],
  live: readonly KubeObject[],
): { state: 'missing' | 'outdated'; webhook: string; message: string } | undefined {
  const wanted = desired.filter((d) => WebhookConfigurationKinds.includes(d.kind));
  for (const want of wanted) {
    const name = want.metadata.name;
    const webhook = want.metadata.labels?.[WebhookLabel.DescriptionName] ?? name;
    const have = live.find((l) => l.kind === want.kind && l.metadata?.name === name);
    if (have === undefined) {
      return { state: 'missing', webhook, message: `${want.kind} ${name} for webhook ${webhook} not found` };
    }
    const outdated = (what: string) => ({
      state: 'outdated' as const,
      webhook,
      message: `${want.kind} ${name} for webhook ${webhook} has another ${what}`,
    });
    const hash = WebhookLabel.DescriptionHash;
    if (have.metadata?.labels?.[hash] !== want.metadata.labels?.[hash]) return outdated('description hash');
    const w = ((want as { webhooks?: WebhookEntry[] }).webhooks ?? [])[0];
    const h = ((have as { webhooks?: WebhookEntry[] }).webhooks ?? [])[0];
    if (h?.clientConfig?.caBundle !== w?.clientConfig?.caBundle) return outdated('CA bundle');
    if (stableStringify(h?.clientConfig?.service) !== stableStringify(w?.clientConfig?.service)) {
      return outdated('service');
    }
    if (!sameSelector(h?.namespaceSelector, w?.namespaceSelector)) return outdated('namespace selector');
  }
  for (const have of live) {
    if (!WebhookConfigurationKinds.includes(have.kind ?? '')) continue;
    const name = have.metadata?.name ?? '';
    if (!wanted.some((w) => w.kind === have.kind && w.metadata.name === name)) {
      const webhook = have.metadata?.labels?.[WebhookLabel.DescriptionName] ?? name;
      return {
        state: 'outdated',
        webhook,
        message: `${have.kind ?? ''} ${name} for webhook ${webhook} is no longer declared by the CSV`,
      };
    }
  }
  return undefined;
}

/** Label selectors compared as the API server stores them (no selector is the empty one). */
function sameSelector(a: LabelSelector | undefined, b: LabelSelector | undefined): boolean {
  const norm = (s: LabelSelector | undefined) => {
    const out: LabelSelector = {};
    if (s?.matchLabels && Object.keys(s.matchLabels).length > 0) out.matchLabels = s.matchLabels;
    if (s?.matchExpressions && s.matchExpressions.length > 0) out.matchExpressions = s.matchExpressions;
    return stableStringify(out);
  };
  return norm(a) === norm(b);
}

/** The owned webhook configurations the CSV no longer declares (to delete after an apply). */
export function staleWebhookConfigurations(
  desired: readonly Resource[],
  live: readonly KubeObject[],
): { kind: string; name: string }[] {
  return live
    .filter((l) => WebhookConfigurationKinds.includes(l.kind ?? ''))
    .filter((l) => !desired.some((d) => d.kind === l.kind && d.metadata.name === l.metadata?.name))
    .map((l) => ({ kind: l.kind ?? '', name: l.metadata?.name ?? '' }));
}

/** `spec.conversion` for one CRD served by a conversion webhook. */
export interface ConversionPatch {
  crd: string;
  conversion: {
    strategy: 'Webhook';
    webhook: {
      clientConfig: {
        service: { namespace: string; name: string; path: string; port: number };
        caBundle: string;
      };
      conversionReviewVersions: string[];
    };
  };
}

export function conversionPatches(input: {
  namespace: string;
  webhooks: readonly WebhookDescription[];
  served: Served;
}): ConversionPatch[] {
  const out: ConversionPatch[] = [];
  for (const desc of input.webhooks) {
    if (desc.type !== WebhookAdmissionType.ConversionWebhook) continue;
    for (const crd of desc.conversionCRDs ?? []) {
      out.push({
        crd,
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: {
              service: {
                namespace: input.namespace,
                name: input.served.service,
                path: desc.webhookPath ?? '/',
                port: desc.containerPort !== undefined && desc.containerPort > 0 ? desc.containerPort : 443,
              },
              caBundle: base64(input.served.caPEM),
            },
            conversionReviewVersions: [...desc.admissionReviewVersions],
          },
        },
      });
    }
  }
  return out;
}

/** A CRD as the conversion check reads it. */
export type CRDLike = KubeObject & { spec?: unknown };

function conversionOf(crd: CRDLike | undefined): Record<string, unknown> | undefined {
  const spec = crd?.spec;
  if (spec === null || typeof spec !== 'object') return undefined;
  const c = (spec as Record<string, unknown>).conversion;
  return c !== null && typeof c === 'object' ? (c as Record<string, unknown>) : undefined;
}

/** The first CRD whose conversion is not the rendered webhook. */
export function checkConversions(
  desired: readonly ConversionPatch[],
  crd: (name: string) => CRDLike | undefined,
): { state: 'missing' | 'outdated'; crd: string; message: string } | undefined {
  for (const want of desired) {
    const live = crd(want.crd);
    if (live === undefined) {
      return { state: 'missing', crd: want.crd, message: `CRD ${want.crd} of conversion webhook not found` };
    }
    const have = conversionOf(live);
    if (have?.strategy !== 'Webhook') {
      return { state: 'missing', crd: want.crd, message: `conversion webhook of CRD ${want.crd} not set` };
    }
    const { caBundle, service } = want.conversion.webhook.clientConfig;
    const client = (have.webhook as { clientConfig?: { caBundle?: string; service?: unknown } } | undefined)
      ?.clientConfig;
    if (client?.caBundle !== caBundle || stableStringify(client?.service) !== stableStringify(service)) {
      return {
        state: 'outdated',
        crd: want.crd,
        message: `conversion webhook of CRD ${want.crd} is outdated`,
      };
    }
  }
  return undefined;
}

/**
 * The CRDs to give back strategy None after a CSV of `namespace` was deleted: CRDs Bosun manages
 * whose conversion webhook calls a Service in that namespace, when no CSV left there declares a
 * conversion webhook for them (a CSV replacing the deleted one keeps its webhook).
 */
export function orphanedConversions(
  crds: readonly CRDLike[],
  namespace: string,
  remaining: readonly Pick<ClusterServiceVersion, 'spec'>[],
): string[] {
  const declared = new Set(
    remaining.flatMap((c) =>
      (c.spec.webhookdefinitions ?? [])
        .filter((w) => w.type === WebhookAdmissionType.ConversionWebhook)
        .flatMap((w) => w.conversionCRDs ?? []),
    ),
  );
  return crds
    .filter(isManaged)
    .filter((crd) => {
      const c = conversionOf(crd);
      const svc = (c?.webhook as { clientConfig?: { service?: { namespace?: string } } } | undefined)
        ?.clientConfig?.service;
      return c?.strategy === 'Webhook' && svc?.namespace === namespace;
    })
    .map((crd) => crd.metadata?.name ?? '')
    .filter((name) => name !== '' && !declared.has(name))
    .sort();
}
