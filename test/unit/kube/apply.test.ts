import { describe, expect, it } from 'vitest';
import { applyPatchBody } from '../../../src/kube/apply.js';

describe('applyPatchBody', () => {
  const stored = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: {
      name: 'etcd',
      namespace: 'operators',
      uid: 'u',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2024-05-01T12:00:00Z',
      managedFields: [{ manager: 'kubectl' }],
      labels: { a: 'b' },
    },
    spec: { name: 'etcd' },
    status: { state: 'AtLatestKnown' },
  };

  it('leaves out server-set metadata and the status when applying the object', () => {
    expect(applyPatchBody(stored, 'spec')).toEqual({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'operators', labels: { a: 'b' } },
      spec: { name: 'etcd' },
    });
  });

  it('sends only the status when applying the status', () => {
    expect(applyPatchBody(stored, 'status')).toEqual({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'operators', labels: { a: 'b' } },
      status: { state: 'AtLatestKnown' },
    });
  });
});
