import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { nodeLeaseDurationSeconds, nodeName } from '../../../src/cluster/layout.js';
import { kubeConfig } from '../client-node.js';
import { eventually } from '../support.js';

/**
 * The node-lifecycle controller marks a node NotReady (and every Pod on it unready) when neither
 * its Lease nor its status has been renewed within the grace period. kwok must renew the Lease
 * the way a kubelet does: every quarter of its duration. That a Lease exists and its renewTime
 * moves on is what keeps the node Ready for as long as the control plane runs; the soak benchmark
 * (`npm run bench -- soak`) watches it for half an hour.
 */
describe('the simulated node', () => {
  it('holds a node Lease that kwok renews as a kubelet would', async () => {
    const coordination = kubeConfig().makeApiClient(k8s.CoordinationV1Api);
    const read = () => coordination.readNamespacedLease({ name: nodeName, namespace: 'kube-node-lease' });
    const first = await eventually('the node Lease', () => read());
    expect(first.spec?.holderIdentity).toBeTruthy();
    expect(first.spec?.leaseDurationSeconds).toBe(nodeLeaseDurationSeconds);
    const renewed = (l: k8s.V1Lease) => new Date(l.spec?.renewTime ?? 0).getTime();
    // Renewed every quarter of the duration: a later renewal must come well within one duration.
    const next = await eventually(
      'the node Lease to be renewed',
      async () => {
        const l = await read();
        return renewed(l) > renewed(first) ? l : undefined;
      },
      nodeLeaseDurationSeconds * 1000,
    );
    expect(renewed(next) - renewed(first)).toBeLessThan(nodeLeaseDurationSeconds * 1000);
  });

  it('is Ready and labelled as an ordinary node', async () => {
    const node = await kubeConfig().makeApiClient(k8s.CoreV1Api).readNode({ name: nodeName });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(node.metadata?.labels).toMatchObject({
      'kubernetes.io/os': 'linux',
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/hostname': nodeName,
    });
    expect(node.spec?.taints ?? []).toEqual([]);
  });
});
