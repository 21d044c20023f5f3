/**
 * A conversion webhook that can never be called, and that keeps a CRD from being served.
 *
 * Some bundles ship a CRD with `conversion.strategy: Webhook` and a placeholder `caBundle` (a
 * base64 newline, `Cg==`), left by their scaffolding for a tool that injects the real certificate
 * at run time. When the CSV declares no ConversionWebhook for that CRD, nothing in OLM fills it
 * in either. Kubernetes since 1.2x refuses to establish a CRD whose conversion caBundle holds no
 * certificate (`InvalidCABundle`), so the CRD is never served and the operator never installs,
 * under OLM as under a plain apply.
 *
 * When the CRD has a single version the API server never converts anything, so the webhook is
 * never called: Bosun installs such a CRD with `strategy: None` and says so. This departs from
 * OLM on purpose (the README lists it). A CRD with several versions keeps its webhook as written.
 */
import type { Problem } from '../util/result.js';

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The CRDs a CSV's ConversionWebhook definitions fill in. */
export function conversionWebhookCRDs(csv: unknown): Set<string> {
  const spec = isMap(csv) && isMap(csv.spec) ? csv.spec : {};
  const defs = Array.isArray(spec.webhookdefinitions) ? spec.webhookdefinitions : [];
  const names = new Set<string>();
  for (const d of defs) {
    if (!isMap(d) || d.type !== 'ConversionWebhook' || !Array.isArray(d.conversionCRDs)) continue;
    for (const n of d.conversionCRDs) if (typeof n === 'string') names.add(n);
  }
  return names;
}

/**
 * `crd` with its conversion set to None when its webhook can never be called and would keep it
 * from being established, with a warning; `crd` itself otherwise.
 */
export function withoutUncallableConversion<T extends Json>(
  crd: T,
  filledByCSV: ReadonlySet<string>,
  object: string,
): { crd: T; warning?: Problem } {
  const spec = isMap(crd.spec) ? crd.spec : undefined;
  const conversion = spec && isMap(spec.conversion) ? spec.conversion : undefined;
  if (conversion?.strategy !== 'Webhook') return { crd };
  const name = isMap(crd.metadata) && typeof crd.metadata.name === 'string' ? crd.metadata.name : '';
  if (filledByCSV.has(name)) return { crd };
  const versions = Array.isArray(spec?.versions) ? spec.versions : [];
  if (versions.length !== 1) return { crd };
  const webhook = isMap(conversion.webhook) ? conversion.webhook : {};
  const clientConfig = isMap(webhook.clientConfig) ? webhook.clientConfig : {};
  const caBundle = clientConfig.caBundle;
  if (typeof caBundle !== 'string' || holdsCertificate(caBundle)) return { crd };
  return {
    crd: { ...crd, spec: { ...spec, conversion: { strategy: 'None' } } },
    warning: {
      object,
      field: 'spec.conversion',
      message:
        'a conversion webhook whose caBundle holds no certificate, on a CRD with one version (nothing to convert) and ' +
        'filled in by no ConversionWebhook of the CSV, would keep the CRD from being established; installed with strategy None',
    },
  };
}

function holdsCertificate(caBundle: string): boolean {
  return Buffer.from(caBundle, 'base64').toString('latin1').includes('-----BEGIN CERTIFICATE-----');
}
