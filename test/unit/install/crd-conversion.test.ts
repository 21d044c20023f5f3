import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generatePki } from '../../../src/cluster/pki.js';
import { conversionWebhookCRDs, withoutUncallableConversion } from '../../../src/install/crd-conversion.js';

function crd(versions: string[], caBundle?: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'ws.x.io' },
    spec: {
      group: 'x.io',
      versions: versions.map((name, i) => ({ name, served: true, storage: i === 0 })),
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: {
            ...(caBundle !== undefined ? { caBundle } : {}),
            service: { name: 'webhook-service', namespace: 'system', path: '/convert', port: 443 },
          },
          conversionReviewVersions: ['v1'],
        },
      },
    },
  };
}

describe('a conversion webhook that can never be called', () => {
  it('is dropped from a one-version CRD whose caBundle holds no certificate, with a warning', () => {
    const { crd: out, warning } = withoutUncallableConversion(crd(['v1alpha1'], 'Cg=='), new Set(), 'CRD/ws');
    expect(out.spec.conversion).toEqual({ strategy: 'None' });
    expect(warning?.field).toBe('spec.conversion');
  });

  it('is kept when the CSV fills it in, when the CRD has versions to convert, or when it has a real caBundle', async () => {
    const placeholder = crd(['v1alpha1'], 'Cg==');
    expect(withoutUncallableConversion(placeholder, new Set(['ws.x.io']), 'o').crd).toBe(placeholder);
    const two = crd(['v1', 'v1beta1'], 'Cg==');
    expect(withoutUncallableConversion(two, new Set(), 'o').crd).toBe(two);
    const pem = (await generatePki()).ca.cert;
    expect(new X509Certificate(pem).ca).toBe(true);
    const real = crd(['v1'], Buffer.from(pem).toString('base64'));
    expect(withoutUncallableConversion(real, new Set(), 'o').crd).toBe(real);
    const none = crd(['v1']);
    expect(withoutUncallableConversion(none, new Set(), 'o').crd).toBe(none);
  });

  it("reads the CRDs a CSV's ConversionWebhook definitions fill in", () => {
    expect(
      conversionWebhookCRDs({
        spec: {
          webhookdefinitions: [
            { type: 'ValidatingAdmissionWebhook', conversionCRDs: ['not.this'] },
            { type: 'ConversionWebhook', conversionCRDs: ['ws.x.io', 'vs.x.io'] },
          ],
        },
      }),
    ).toEqual(new Set(['ws.x.io', 'vs.x.io']));
    expect(conversionWebhookCRDs({})).toEqual(new Set());
  });
});
