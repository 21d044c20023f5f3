/**
 * Every CSV of the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR) that declares webhooks or owned API
 * services, rendered as the CSV controller renders it in an OperatorGroup a user would create for
 * it (its own namespace when the CSV supports that, else all namespaces): the descriptions pass
 * OLM's rules, and what is rendered holds together (each webhook and APIService calls a rendered
 * Service on one of its ports, each Service selects its Deployment's pods, each serving
 * Deployment mounts its certificate, webhooks are scoped to the group's namespaces).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { type IssuedCertificate, issueServingCertificate } from '../../../src/install/certificates.js';
import { renderDeployments } from '../../../src/install/deployments.js';
import type { Resource } from '../../../src/olm/kinds.js';
import { deploymentCertificate, renderServing, servingDeployments } from '../../../src/install/serving.js';
import { supportsOnlyAllNamespaces } from '../../../src/olm/webhooks.js';
import { formatProblem } from '../../../src/util/result.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
const present = corpus !== undefined && existsSync(corpus);
if (!present) {
  console.warn(
    'skipping the corpus webhook rendering: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
  );
}

function* csvFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) yield* csvFiles(p);
    else if (e.endsWith('clusterserviceversion.yaml')) yield p;
  }
}

function servingCSVs(): { file: string; csv: ClusterServiceVersion }[] {
  const out: { file: string; csv: ClusterServiceVersion }[] = [];
  for (const file of csvFiles(corpus ?? '')) {
    let csv: ClusterServiceVersion | null;
    try {
      csv = parse(readFileSync(file, 'utf8')) as ClusterServiceVersion | null;
    } catch {
      continue; // a malformed CSV of the corpus (bundle reading reports those)
    }
    if (!csv?.spec?.webhookdefinitions?.length && !csv?.spec?.apiservicedefinitions?.owned?.length) continue;
    out.push({ file: file.slice((corpus ?? '').length + 1), csv });
  }
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

describe.skipIf(!present)('webhooks and API services of the corpus CSVs (BOSUN_CORPUS_DIR)', () => {
  const all = present ? servingCSVs() : [];
  let cert: IssuedCertificate;
  beforeAll(async () => {
    cert = await issueServingCertificate({ hosts: ['corpus-service.operators'], now: Date.UTC(2026, 0, 1) });
  });

  it('finds the webhook and API service operators of the corpus', () => {
    const packages = new Set(all.map((c) => c.file.split('/')[0]));
    expect(all.length).toBe(28);
    for (const pkg of [
      'cloud-native-postgresql',
      'opentelemetry-operator',
      'intel-device-plugins-operator',
      'community-kubevirt-hyperconverged',
      'azure-service-operator',
      'cert-manager',
      'elastic-phenix-operator',
      'sap-btp-operator',
      'enmasse',
    ]) {
      expect(packages).toContain(pkg);
    }
  });

  it.each(all.map((c) => [c.file, c.csv] as const))('%s', (_file, raw) => {
    const csv: ClusterServiceVersion = {
      ...raw,
      metadata: { ...raw.metadata, namespace: 'operators', uid: '00000000-0000-4000-8000-000000000001' },
    };
    const own = (csv.spec.installModes ?? []).some((m) => m.type === 'OwnNamespace' && m.supported);
    const og = {
      metadata: { name: 'og', namespace: 'operators', uid: '00000000-0000-4000-8000-0000000000a1' },
      spec: own ? { targetNamespaces: ['operators'] } : {},
    };
    const plan = servingDeployments(csv);
    if (!plan.ok) throw new Error(plan.errors.map(formatProblem).join('\n'));
    const serving = plan.value;
    expect(serving.length).toBeGreaterThan(0);

    const certificates = new Map(serving.map((s) => [s.deployment, cert]));
    const out = renderServing({ csv, operatorGroup: og, serving, certificates });
    const mounts = Object.fromEntries(serving.map((s) => [s.deployment, deploymentCertificate(s, cert)]));
    const rendered = renderDeployments({
      csv,
      targets: { operatorGroup: 'og', namespaces: own ? ['operators'] : [''] },
      servingCertificates: mounts,
    });
    if (!rendered.ok) throw new Error(rendered.errors.map(formatProblem).join('\n'));

    const services = new Map(
      out.beforeDeployments.filter((o) => o.kind === 'Service').map((o) => [o.metadata.name, o]),
    );
    const portsOf = (svc: Resource | undefined) =>
      ((svc?.spec as { ports?: { port: number }[] } | undefined)?.ports ?? []).map((p) => p.port);

    // Each Service selects the pods of the Deployment it serves.
    for (const s of serving) {
      const d = rendered.value.find((x) => x.metadata?.name === s.deployment);
      const podLabels = d?.spec?.template.metadata?.labels ?? {};
      const selector = (services.get(s.service)?.spec as { selector: Record<string, string> }).selector;
      expect(Object.keys(selector).length).toBeGreaterThan(0);
      for (const [k, v] of Object.entries(selector)) expect(podLabels[k]).toBe(v);
      // ... and that Deployment mounts the certificate in every container: at OLM's paths, or
      // where the container already mounts a volume of that name (enmasse's /api-server-cert).
      const original = csv.spec.install.spec?.deployments.find((x) => x.name === s.deployment);
      for (const c of d?.spec?.template.spec?.containers ?? []) {
        const own =
          original?.spec.template.spec?.containers.find((x) => x.name === c.name)?.volumeMounts ?? [];
        for (const [volume, path] of [
          ['apiservice-cert', '/apiserver.local.config/certificates'],
          ['webhook-cert', '/tmp/k8s-webhook-server/serving-certs'],
        ]) {
          const mount = c.volumeMounts?.find((m) => m.name === volume);
          const kept = own.find((m) => m.name === volume);
          expect(mount?.mountPath).toBe(kept?.mountPath ?? path);
        }
      }
      const secrets = (d?.spec?.template.spec?.volumes ?? []).flatMap((v) =>
        v.secret ? [v.secret.secretName] : [],
      );
      expect(secrets).toContain(s.secret);
    }

    // Each webhook calls a rendered Service on one of its ports, scoped to the group's namespaces.
    const webhookCount = (csv.spec.webhookdefinitions ?? []).filter(
      (w) => w.type !== 'ConversionWebhook',
    ).length;
    const configs = out.afterDeployments.filter((o) => o.kind.endsWith('WebhookConfiguration'));
    expect(configs.length).toBe(webhookCount);
    for (const c of configs) {
      expect(c.metadata.name.length).toBeLessThanOrEqual(253);
      for (const v of Object.values(c.metadata.labels ?? {})) expect(v.length).toBeLessThanOrEqual(63);
      for (const w of (c as unknown as { webhooks: Record<string, unknown>[] }).webhooks) {
        const ref = (w.clientConfig as { service: { name: string; namespace: string; port: number } })
          .service;
        expect(ref.namespace).toBe('operators');
        expect(portsOf(services.get(ref.name))).toContain(ref.port);
        expect(w.namespaceSelector).toEqual(
          own
            ? { matchLabels: { 'olm.operatorgroup.uid/00000000-0000-4000-8000-0000000000a1': '' } }
            : undefined,
        );
      }
    }

    // Each APIService too; conversions only for AllNamespaces-only operators.
    for (const a of out.afterDeployments.filter((o) => o.kind === 'APIService')) {
      const ref = (a.spec as { service: { name: string; port: number } }).service;
      expect(portsOf(services.get(ref.name))).toContain(ref.port);
    }
    const names = out.afterDeployments.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
    if (out.conversions.length > 0) expect(supportsOnlyAllNamespaces(csv)).toBe(true);
    for (const conv of out.conversions) {
      expect(portsOf(services.get(conv.conversion.webhook.clientConfig.service.name))).toContain(
        conv.conversion.webhook.clientConfig.service.port,
      );
    }
  });
});
