/**
 * A ClusterExtension's status for each outcome, in operator-controller v1.2.0's words: the
 * Installed and Progressing conditions and reasons, the deprecation conditions as
 * SetDeprecationStatus builds them, and the condition types v1 adds when resolution fails.
 */
import { describe, expect, it } from 'vitest';
import type { DeprecationsDoc } from '../../../src/apis/fbc.js';
import type { ClusterExtension } from '../../../src/apis/olmv1.js';
import { clusterExtensionStatus } from '../../../src/controllers/clusterextension-status.js';

const now = Date.parse('2026-11-27T06:00:00Z');
const ext = (channels?: string[], generation = 3): ClusterExtension => ({
  apiVersion: 'olm.operatorframework.io/v1',
  kind: 'ClusterExtension',
  metadata: { name: 'argocd', generation },
  spec: {
    namespace: 'argocd',
    serviceAccount: { name: 'installer' },
    source: {
      sourceType: 'Catalog',
      catalog: { packageName: 'argocd-operator', ...(channels ? { channels } : {}) },
    },
  },
});
const bundle = { name: 'argocd-operator.v0.6.0', version: '0.6.0' };
const installed = { bundle, image: 'quay.io/argoprojlabs/argocd-operator-bundle@sha256:1234' };
const cond = (s: { conditions?: { type: string }[] }, type: string) =>
  s.conditions?.find((c) => c.type === type);

describe('clusterExtensionStatus', () => {
  it('says Installed and desired state reached once the resolved bundle is installed', () => {
    const status = clusterExtensionStatus(ext(), { kind: 'installed', resolved: { bundle } }, installed, now);
    expect(status.install).toEqual({ bundle });
    expect(cond(status, 'Installed')).toEqual({
      type: 'Installed',
      status: 'True',
      reason: 'Succeeded',
      message: 'Installed bundle quay.io/argoprojlabs/argocd-operator-bundle@sha256:1234 successfully',
      observedGeneration: 3,
      lastTransitionTime: '2026-11-27T06:00:00Z',
    });
    expect(cond(status, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
      message: 'desired state reached',
    });
    expect(status.conditions?.map((c) => c.type).sort()).toEqual([
      'BundleDeprecated',
      'ChannelDeprecated',
      'Deprecated',
      'Installed',
      'PackageDeprecated',
      'Progressing',
    ]);
  });

  it('says No bundle installed and Retrying while the first install is under way', () => {
    const status = clusterExtensionStatus(
      ext(),
      { kind: 'progressing', message: 'installing', resolved: { bundle } },
      undefined,
      now,
    );
    expect(status.install).toBeUndefined();
    expect(cond(status, 'Installed')).toMatchObject({
      status: 'False',
      reason: 'Failed',
      message: 'No bundle installed',
    });
    expect(cond(status, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Retrying',
      message: 'installing',
    });
  });

  it('says InvalidConfiguration, False, for a configuration the bundle does not take, keeping what is installed', () => {
    const message =
      'invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing';
    const first = clusterExtensionStatus(
      ext(),
      { kind: 'invalid', message, resolved: { bundle } },
      undefined,
      now,
    );
    expect(cond(first, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'InvalidConfiguration',
      message,
    });
    expect(cond(first, 'Installed')).toMatchObject({
      status: 'False',
      reason: 'Failed',
      message: 'No bundle installed',
    });
    expect(cond(first, 'Deprecated')).toMatchObject({ status: 'False' });
    const live = clusterExtensionStatus(
      ext(),
      { kind: 'invalid', message, resolved: { bundle } },
      installed,
      now,
    );
    expect(cond(live, 'Progressing')).toMatchObject({ status: 'False', reason: 'InvalidConfiguration' });
    expect(cond(live, 'Installed')).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect(live.install).toEqual({ bundle });
  });

  it('says Blocked, False, for what retrying cannot mend, and sets no deprecation', () => {
    const status = clusterExtensionStatus(
      ext(),
      { kind: 'blocked', message: 'owned elsewhere' },
      undefined,
      now,
    );
    expect(cond(status, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'Blocked',
      message: 'owned elsewhere',
    });
    expect(cond(status, 'Deprecated')).toBeUndefined();
  });

  it('adds every condition type v1 knows, False Failed with the error, when resolution fails, and keeps those already there', () => {
    const before = clusterExtensionStatus(ext(), { kind: 'installed', resolved: { bundle } }, installed, now);
    const failed = clusterExtensionStatus(
      { ...ext(), status: before },
      { kind: 'unresolved', message: 'no bundles found for package "argocd-operator"' },
      installed,
      now + 1000,
    );
    expect(cond(failed, 'Serving')).toMatchObject({
      status: 'False',
      reason: 'Failed',
      message: 'no bundles found for package "argocd-operator"',
    });
    expect(cond(failed, 'Deprecated')).toMatchObject({ status: 'False', reason: 'Deprecated', message: '' });
    expect(cond(failed, 'Installed')).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect(cond(failed, 'Progressing')).toMatchObject({ status: 'True', reason: 'Retrying' });
  });

  it('reports deprecations as v1 does: the package, the channels asked for, the resolved bundle; joined with ";" in Deprecated', () => {
    const deprecation: DeprecationsDoc = {
      schema: 'olm.deprecations',
      package: 'argocd-operator',
      entries: [
        { reference: { schema: 'olm.package' }, message: 'package gone' },
        { reference: { schema: 'olm.channel', name: 'alpha' }, message: 'alpha gone' },
        { reference: { schema: 'olm.channel', name: 'beta' }, message: 'beta gone' },
        { reference: { schema: 'olm.channel', name: 'stable' }, message: 'not asked for' },
        { reference: { schema: 'olm.bundle', name: 'argocd-operator.v0.6.0' }, message: 'bundle gone' },
        { reference: { schema: 'olm.bundle', name: 'argocd-operator.v0.5.0' }, message: 'another bundle' },
      ],
    };
    const status = clusterExtensionStatus(
      ext(['alpha', 'beta']),
      { kind: 'installed', resolved: { bundle, deprecation } },
      installed,
      now,
    );
    expect(cond(status, 'Deprecated')).toMatchObject({
      status: 'True',
      reason: 'Deprecated',
      message: 'package gone;alpha gone;beta gone;bundle gone',
    });
    expect(cond(status, 'PackageDeprecated')).toMatchObject({ status: 'True', message: '\npackage gone' });
    expect(cond(status, 'ChannelDeprecated')).toMatchObject({
      status: 'True',
      message: '\nalpha gone\nbeta gone',
    });
    expect(cond(status, 'BundleDeprecated')).toMatchObject({ status: 'True', message: '\nbundle gone' });
  });

  it('moves lastTransitionTime only when a condition’s status changes', () => {
    const first = clusterExtensionStatus(
      ext(),
      { kind: 'progressing', message: 'a', resolved: { bundle } },
      undefined,
      now,
    );
    const second = clusterExtensionStatus(
      { ...ext(), status: first },
      { kind: 'progressing', message: 'b', resolved: { bundle } },
      undefined,
      now + 60_000,
    );
    expect(cond(second, 'Progressing')).toMatchObject({
      message: 'b',
      lastTransitionTime: '2026-11-27T06:00:00Z',
    });
  });
});
