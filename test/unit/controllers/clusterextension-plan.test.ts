/**
 * How a ClusterExtension maps onto the engine's objects: its InstallPlan (name, labels, owner,
 * source, what it replaces), its OperatorGroup, and which CSV counts as installed.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterExtension } from '../../../src/apis/olmv1.js';
import type { ClusterServiceVersion, InstallPlan, OperatorGroup } from '../../../src/apis/operators.js';
import {
  desiredExtensionGroup,
  desiredExtensionPlan,
  extensionGroupStep,
  extensionPlanName,
  failedPlanRetryAt,
  installedBundle,
  isExtensionObject,
  owningExtension,
} from '../../../src/controllers/clusterextension-plan.js';

const ext: ClusterExtension = {
  apiVersion: 'olm.operatorframework.io/v1',
  kind: 'ClusterExtension',
  metadata: { name: 'argocd', uid: 'u-1' },
  spec: {
    namespace: 'argocd-ns',
    serviceAccount: { name: 'installer' },
    source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator' } },
  },
};

const csv = (name: string, phase: string, version: string, deleting = false): ClusterServiceVersion =>
  ({
    metadata: {
      name,
      namespace: 'argocd-ns',
      ...(deleting ? { deletionTimestamp: '2026-11-27T00:00:00Z' } : {}),
    },
    spec: { version },
    status: { phase },
  }) as unknown as ClusterServiceVersion;

describe('the extension’s InstallPlan', () => {
  it('is named from the extension and the bundle, labelled and owned as v1 labels what it installs, and names its ClusterCatalog', () => {
    const plan = desiredExtensionPlan(
      ext,
      { name: 'argocd-operator.v0.6.0', image: 'q/b@sha256:1' },
      'operatorhubio',
      'argocd-operator.v0.5.0',
      4,
    );
    expect(plan.metadata).toEqual({
      name: extensionPlanName(ext, 'argocd-operator.v0.6.0', 'argocd-operator.v0.5.0'),
      namespace: 'argocd-ns',
      labels: {
        'olm.operatorframework.io/owner-kind': 'ClusterExtension',
        'olm.operatorframework.io/owner-name': 'argocd',
      },
      annotations: {
        'olm.operatorframework.io/bundle-image': 'q/b@sha256:1',
        'olm.operatorframework.io/extension-generation': '0',
        'olm.operatorframework.io/crd-upgrade-safety': 'Strict',
        'olm.operatorframework.io/replaces': 'argocd-operator.v0.5.0',
      },
      ownerReferences: [
        {
          apiVersion: 'olm.operatorframework.io/v1',
          kind: 'ClusterExtension',
          name: 'argocd',
          uid: 'u-1',
          controller: false,
          blockOwnerDeletion: false,
        },
      ],
    });
    expect(plan.spec).toEqual({
      clusterServiceVersionNames: ['argocd-operator.v0.6.0'],
      approval: 'Automatic',
      approved: true,
      generation: 4,
      source: 'operatorhubio',
      sourceNamespace: '',
    });
    expect(isExtensionObject(plan, 'argocd')).toBe(true);
    expect(isExtensionObject(plan, 'other')).toBe(false);
    expect(owningExtension(plan)).toBe('argocd');
  });

  it('has a name of its own per extension, generation, bundle and what it replaces, stable across calls', () => {
    const a = extensionPlanName(ext, 'argocd-operator.v0.6.0', undefined);
    expect(a).toMatch(/^extension-[0-9a-f]{10}$/);
    expect(extensionPlanName(ext, 'argocd-operator.v0.6.0', undefined)).toBe(a);
    expect(extensionPlanName(ext, 'argocd-operator.v0.6.1', undefined)).not.toBe(a);
    // The same bundle again later, in place of another: a plan of its own.
    expect(extensionPlanName(ext, 'argocd-operator.v0.6.0', 'argocd-operator.v0.7.0')).not.toBe(a);
    expect(
      extensionPlanName(
        { metadata: { ...ext.metadata, generation: 2 } },
        'argocd-operator.v0.6.0',
        undefined,
      ),
    ).not.toBe(a);
    expect(
      extensionPlanName({ metadata: { ...ext.metadata, uid: 'u-2' } }, 'argocd-operator.v0.6.0', undefined),
    ).not.toBe(a);
  });

  it('is told from a Subscription’s plan, which v1’s labels do not mark', () => {
    const subs = { metadata: { labels: { 'operators.coreos.com/subscription': 'argocd' } } };
    expect(isExtensionObject(subs)).toBe(false);
  });
});

describe('the extension’s OperatorGroup', () => {
  it('targets every namespace, in the extension’s namespace, owned by it, installing as the extension’s ServiceAccount', () => {
    const og = desiredExtensionGroup(ext);
    expect(og.metadata).toMatchObject({ name: 'argocd', namespace: 'argocd-ns' });
    expect(og.spec).toEqual({ serviceAccountName: 'installer' });
    expect(owningExtension(og)).toBe('argocd');
  });

  it('targets watchNamespace alone when it is set', () => {
    expect(desiredExtensionGroup(ext, 'team-a').spec).toEqual({
      serviceAccountName: 'installer',
      targetNamespaces: ['team-a'],
    });
  });
});

describe('what the extension does about its namespace’s OperatorGroup', () => {
  const own = (targetNamespaces?: string[]) => desiredExtensionGroup(ext, targetNamespaces?.[0]);
  const users = (spec: OperatorGroup['spec'], status?: OperatorGroup['status']) =>
    ({
      metadata: { name: 'mine', namespace: 'argocd-ns' },
      spec,
      ...(status ? { status } : {}),
    }) as OperatorGroup;

  it('makes one where there is none, targeting watchNamespace or every namespace', () => {
    expect(extensionGroupStep(ext, [], 'team-a')).toMatchObject({
      kind: 'create',
      group: { spec: { targetNamespaces: ['team-a'] } },
    });
    const all = extensionGroupStep(ext, [], undefined);
    expect(all.kind === 'create' && all.group.spec?.targetNamespaces).toBe(undefined);
  });

  it('retargets its own group when watchNamespace changes, and back to every namespace when it is unset', () => {
    expect(extensionGroupStep(ext, [own(['argocd-ns'])], 'team-a')).toEqual({
      kind: 'retarget',
      name: 'argocd',
      targetNamespaces: ['team-a'],
    });
    expect(extensionGroupStep(ext, [own(['team-a'])], undefined)).toEqual({
      kind: 'retarget',
      name: 'argocd',
      targetNamespaces: null,
    });
    expect(extensionGroupStep(ext, [own()], 'team-a')).toMatchObject({ kind: 'retarget' });
    expect(extensionGroupStep(ext, [own(['team-a'])], 'team-a')).toEqual({ kind: 'keep' });
    expect(extensionGroupStep(ext, [own()], undefined)).toEqual({ kind: 'keep' });
  });

  it('never changes a group it did not make, even one labelled as its own', () => {
    const labelled = {
      ...users({ targetNamespaces: ['x'] }),
      metadata: { ...own().metadata, ownerReferences: [] },
    };
    expect(extensionGroupStep(ext, [labelled], 'team-a').kind).toBe('conflict');
    const namesake = {
      ...own(['x']),
      metadata: {
        ...own().metadata,
        ownerReferences: [{ ...own().metadata.ownerReferences![0]!, uid: 'other' }],
      },
    };
    expect(extensionGroupStep(ext, [namesake], 'team-a').kind).toBe('conflict');
  });

  it('keeps the user’s group when it agrees with watchNamespace or watchNamespace is unset', () => {
    expect(extensionGroupStep(ext, [users({ targetNamespaces: ['team-a'] })], 'team-a')).toEqual({
      kind: 'keep',
    });
    expect(extensionGroupStep(ext, [users({ targetNamespaces: ['team-a', 'team-a'] })], 'team-a')).toEqual({
      kind: 'keep',
    });
    expect(extensionGroupStep(ext, [users({ targetNamespaces: ['b'] })], undefined)).toEqual({
      kind: 'keep',
    });
    expect(
      extensionGroupStep(
        ext,
        [
          users({ selector: { matchLabels: { team: 'a' } } }, {
            namespaces: ['team-a'],
          } as OperatorGroup['status']),
        ],
        'team-a',
      ),
    ).toEqual({ kind: 'keep' });
  });

  it('reports a user’s group that targets other namespaces, naming both', () => {
    expect(extensionGroupStep(ext, [users({ targetNamespaces: ['argocd-ns'] })], 'team-a')).toEqual({
      kind: 'conflict',
      message:
        'spec.config.inline.watchNamespace is "team-a", but OperatorGroup argocd-ns/mine, which ClusterExtension argocd did not make, targets ["argocd-ns"]; the extension does not change a group it did not make: set watchNamespace to what the group targets, or change the group\'s spec.targetNamespaces to ["team-a"]',
    });
    expect(extensionGroupStep(ext, [users({})], 'team-a')).toMatchObject({
      kind: 'conflict',
      message: expect.stringContaining('targets every namespace'),
    });
    expect(extensionGroupStep(ext, [users({ targetNamespaces: ['team-a', 'b'] })], 'team-a')).toMatchObject({
      message: expect.stringContaining('targets ["b","team-a"]'),
    });
    // The user's list, however long or strange, is quoted and cut short.
    const many = ['a'.repeat(5000), 'bad\nline', ...Array.from({ length: 5000 }, (_, i) => `ns-${i}`)];
    const long = extensionGroupStep(ext, [users({ targetNamespaces: many })], 'team-a');
    const said = long.kind === 'conflict' ? long.message : '';
    expect(said).toContain(`"${'a'.repeat(63)}..."`);
    expect(said).toContain('"bad\\nline"');
    expect(said).not.toContain('bad\nline');
    expect(said).toContain('and 4992 more');
    expect(said.length).toBeLessThan(1000);
    expect(
      extensionGroupStep(ext, [users({ selector: { matchLabels: { team: 'a' } } })], 'team-a'),
    ).toMatchObject({
      message: expect.stringContaining('targets the namespaces its selector matches'),
    });
  });
});

describe('installedBundle', () => {
  const plans = (...names: string[]) =>
    names.map(
      (n) =>
        ({
          metadata: { annotations: { 'olm.operatorframework.io/bundle-image': `img/${n}` } },
          spec: { clusterServiceVersionNames: [n] },
        }) as unknown as InstallPlan,
    );
  it('is the CSV of its plans that has Succeeded, with the image its plan names', () => {
    const csvs = new Map([
      ['a.v1', csv('a.v1', 'Replacing', '1.0.0')],
      ['a.v2', csv('a.v2', 'Succeeded', '2.0.0')],
    ]);
    expect(installedBundle(plans('a.v1', 'a.v2'), (n) => csvs.get(n))).toMatchObject({
      bundle: { name: 'a.v2', version: '2.0.0' },
      image: 'img/a.v2',
    });
  });
  it('is the one being replaced while the newer one installs', () => {
    const csvs = new Map([
      ['a.v1', csv('a.v1', 'Replacing', '1.0.0')],
      ['a.v2', csv('a.v2', 'Installing', '2.0.0')],
    ]);
    expect(installedBundle(plans('a.v1', 'a.v2'), (n) => csvs.get(n))?.bundle.name).toBe('a.v1');
  });
  it('stays the one installed again in place when its Deployments change (a new watchNamespace), not one that failed', () => {
    const withHistory = (...steps: [string, string][]) => {
      const c = csv('a.v1', steps.at(-1)![0], '1.0.0');
      c.status!.conditions = steps.map(([phase, reason]) => ({ phase, reason }) as never);
      return c;
    };
    const of = (c: ClusterServiceVersion) => installedBundle(plans('a.v1'), () => c)?.bundle.name;
    const installed: [string, string][] = [
      ['Pending', 'RequirementsUnknown'],
      ['InstallReady', 'AllRequirementsMet'],
      ['Installing', 'InstallWaiting'],
      ['Succeeded', 'InstallSucceeded'],
    ];
    expect(of(withHistory(...installed, ['InstallReady', 'NeedsReinstall']))).toBe('a.v1');
    expect(
      of(withHistory(...installed, ['InstallReady', 'NeedsReinstall'], ['Installing', 'InstallWaiting'])),
    ).toBe('a.v1');
    // Failed on the way: no longer installed, whatever it went through before.
    expect(
      of(
        withHistory(
          ...installed,
          ['Failed', 'ComponentUnhealthy'],
          ['Pending', 'NeedsReinstall'],
          ['InstallReady', 'AllRequirementsMet'],
          ['Installing', 'InstallWaiting'],
        ),
      ),
    ).toBeUndefined();
    // A first install never counts before it succeeds.
    expect(of(withHistory(...installed.slice(0, 3)))).toBeUndefined();
  });
  it('is none before a CSV succeeds, or when the only one is being deleted', () => {
    expect(installedBundle(plans('a.v1'), () => csv('a.v1', 'Installing', '1.0.0'))).toBeUndefined();
    expect(installedBundle(plans('a.v1'), () => csv('a.v1', 'Succeeded', '1.0.0', true))).toBeUndefined();
    expect(installedBundle(plans('a.v1'), () => undefined)).toBeUndefined();
  });
});

describe('failedPlanRetryAt', () => {
  const failed = (generation: string, at: string) =>
    ({
      metadata: { annotations: { 'olm.operatorframework.io/extension-generation': generation } },
      spec: { clusterServiceVersionNames: ['a.v1'] },
      status: {
        phase: 'Failed',
        conditions: [{ type: 'Installed', status: 'False', lastTransitionTime: at }],
      },
    }) as unknown as InstallPlan;
  const at = (generation: number) => ({ ...ext, metadata: { ...ext.metadata, generation } });
  it('is 30 s after the plan failed while the extension’s spec is the one it was made for', () => {
    expect(failedPlanRetryAt(failed('4', '2026-11-27T06:00:00Z'), at(4))).toBe(
      Date.parse('2026-11-27T06:00:30Z'),
    );
  });
  it('is now once the spec changed (its enforcement turned off, say)', () => {
    expect(failedPlanRetryAt(failed('4', '2026-11-27T06:00:00Z'), at(5))).toBe(0);
  });
});

describe('the CRD upgrade safety a plan carries', () => {
  it('is the extension’s enforcement, Strict by default', () => {
    const plan = (e: ClusterExtension) =>
      desiredExtensionPlan(e, { name: 'a.v1', image: '' }, 'c', undefined, 1);
    expect(plan(ext).metadata.annotations?.['olm.operatorframework.io/crd-upgrade-safety']).toBe('Strict');
    const none = {
      ...ext,
      spec: { ...ext.spec!, install: { preflight: { crdUpgradeSafety: { enforcement: 'None' as const } } } },
    };
    expect(plan(none).metadata.annotations?.['olm.operatorframework.io/crd-upgrade-safety']).toBe('None');
  });
});
