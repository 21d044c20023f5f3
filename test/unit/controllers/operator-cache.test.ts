import { describe, expect, it } from 'vitest';
import { metadataOnly } from '../../../src/controllers/operator.js';

describe('metadataOnly', () => {
  it('keeps a Secret’s identity and metadata, never its data, nor the bookkeeping of who wrote what', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'webhook-cert',
        namespace: 'ops',
        labels: { 'olm.managed': 'true', 'operators.coreos.com/etcd.ops': '' },
        ownerReferences: [
          {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'ClusterServiceVersion',
            name: 'etcd.v1',
            uid: 'u',
          },
        ],
        managedFields: [{ manager: 'bosun', operation: 'Apply' }],
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":"secret"}', keep: 'me' },
      },
      type: 'kubernetes.io/tls',
      data: { 'tls.key': 'c2VjcmV0' },
    };
    expect(metadataOnly(secret)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'webhook-cert',
        namespace: 'ops',
        labels: { 'olm.managed': 'true', 'operators.coreos.com/etcd.ops': '' },
        ownerReferences: [
          {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'ClusterServiceVersion',
            name: 'etcd.v1',
            uid: 'u',
          },
        ],
        annotations: { keep: 'me' },
      },
    });
  });

  it('keeps the status conditions of a kind that has them (an APIService’s say whether it is available)', () => {
    const apiService = {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1alpha1.gizmos.test' },
      spec: { group: 'gizmos.test', caBundle: 'Zm9v' },
      status: { conditions: [{ type: 'Available', status: 'True' }] },
    };
    expect(metadataOnly(apiService)).toEqual({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1alpha1.gizmos.test' },
      status: { conditions: [{ type: 'Available', status: 'True' }] },
    });
  });
});
