import { describe, expect, it } from 'vitest';
import {
  slimCRD,
  slimCSV,
  slimInstallPlan,
  withoutBookkeeping,
} from '../../../src/controllers/cache-transforms.js';
import type { KubeObject } from '../../../src/apis/meta.js';

const managedFields = [{ manager: 'bosun', operation: 'Apply', fieldsV1: { 'f:spec': {} } }];

describe('what the informers keep', () => {
  it('drops managedFields and the last-applied annotation, and leaves other objects as they are', () => {
    const obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'a',
        managedFields,
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{...}', keep: 'x' },
      },
    } as KubeObject;
    expect(withoutBookkeeping(obj)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', annotations: { keep: 'x' } },
    });
    const plain = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } } as KubeObject;
    expect(withoutBookkeeping(plain)).toBe(plain);
  });

  it('keeps of a CRD what controllers read: names, versions, conversion and status, not schemas', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'ws.x.io', managedFields },
      spec: {
        group: 'x.io',
        names: { kind: 'W', plural: 'ws' },
        scope: 'Namespaced',
        conversion: { strategy: 'None' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object' } },
            additionalPrinterColumns: [{ name: 'A', type: 'string', jsonPath: '.a' }],
            subresources: { status: {} },
          },
        ],
      },
      status: { conditions: [{ type: 'Established', status: 'True' }], storedVersions: ['v1'] },
    } as KubeObject;
    const before = JSON.stringify(crd);
    expect(slimCRD(crd)).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'ws.x.io' },
      spec: {
        group: 'x.io',
        names: { kind: 'W', plural: 'ws' },
        scope: 'Namespaced',
        conversion: { strategy: 'None' },
        versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} } }],
      },
      status: { conditions: [{ type: 'Established', status: 'True' }], storedVersions: ['v1'] },
    });
    expect(JSON.stringify(crd)).toBe(before);
  });

  it('keeps of a CSV its install strategy, APIs and annotations, not what is for browsing', () => {
    const csv = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: {
        name: 'op.v1',
        managedFields,
        annotations: { 'alm-examples': '[{}]', 'operatorframework.io/properties': '{}' },
      },
      spec: {
        displayName: 'Op',
        description: 'long text',
        icon: [{ base64data: 'AAAA', mediatype: 'image/png' }],
        install: { strategy: 'deployment', spec: { deployments: [] } },
        customresourcedefinitions: {
          owned: [
            { name: 'ws.x.io', version: 'v1', kind: 'W', description: 'd', specDescriptors: [{ path: 'a' }] },
          ],
        },
        webhookdefinitions: [{ type: 'ValidatingAdmissionWebhook' }],
      },
      status: { phase: 'Succeeded' },
    } as KubeObject;
    expect(slimCSV(csv)).toEqual({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: { name: 'op.v1', annotations: { 'operatorframework.io/properties': '{}' } },
      spec: {
        displayName: 'Op',
        install: { strategy: 'deployment', spec: { deployments: [] } },
        customresourcedefinitions: { owned: [{ name: 'ws.x.io', version: 'v1', kind: 'W' }] },
        webhookdefinitions: [{ type: 'ValidatingAdmissionWebhook' }],
      },
      status: { phase: 'Succeeded' },
    });
  });

  it("drops a finished InstallPlan's step manifests, and keeps those of a plan still to run", () => {
    const step = (manifest: string) => ({
      resolving: 'op.v1',
      status: 'Created',
      resource: { group: '', version: 'v1', kind: 'ConfigMap', name: 'c', manifest },
    });
    const ip = (phase: string) =>
      ({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'InstallPlan',
        metadata: { name: 'install-1', namespace: 'ns' },
        spec: { clusterServiceVersionNames: ['op.v1'] },
        status: { phase, plan: [step('{"kind":"ConfigMap"}')] },
      }) as KubeObject;
    const running = ip('Installing');
    expect(slimInstallPlan(running)).toEqual(running);
    for (const phase of ['Complete', 'Failed']) {
      const slim = slimInstallPlan(ip(phase)) as unknown as { status: { plan: { resource: object }[] } };
      expect(slim.status.plan[0]!.resource).toEqual({
        group: '',
        version: 'v1',
        kind: 'ConfigMap',
        name: 'c',
      });
    }
  });
});
