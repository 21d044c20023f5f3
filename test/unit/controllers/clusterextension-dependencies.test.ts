/**
 * What a ClusterExtension's bundle needs from other operators: a package by range, an API by the
 * one package that provides it (unless the cluster has it or a package asked for provides it),
 * and a refusal for what is not read yet (olm.constraint) or cannot be decided (no provider,
 * several); and the ClusterExtension generated for a need.
 */
import { describe, expect, it } from 'vitest';
import type { BundleDoc, GVKProperty } from '../../../src/apis/fbc.js';
import type { ClusterExtension } from '../../../src/apis/olmv1.js';
import {
  generatedExtension,
  generatedExtensionName,
  inRange,
  needsOf,
  needState,
} from '../../../src/controllers/clusterextension-dependencies.js';

const widget: GVKProperty = { group: 'sample.bosun.dev', version: 'v1alpha1', kind: 'Widget' };
const bundle = (...properties: BundleDoc['properties']) => ({ name: 'dash.v1', package: 'dash', properties });
const none = () => false;

describe('needsOf', () => {
  it('asks for a required package in its range', () => {
    const got = needsOf(
      bundle({
        type: 'olm.package.required',
        value: { packageName: 'sample', versionRange: '>=0.2.0 <1.0.0' },
      }),
      () => [],
      none,
    );
    expect(got).toEqual({
      ok: true,
      needs: [
        {
          packageName: 'sample',
          versionRange: '>=0.2.0 <1.0.0',
          why: 'olm.package.required sample >=0.2.0 <1.0.0',
        },
      ],
    });
  });

  it('asks for the one package providing a required API, unless a package asked for or the cluster provides it', () => {
    const gvk = bundle({ type: 'olm.gvk.required', value: widget });
    expect(needsOf(gvk, () => ['sample', 'sample'], none)).toEqual({
      ok: true,
      needs: [
        {
          packageName: 'sample',
          versionRange: '',
          why: 'olm.gvk.required sample.bosun.dev/v1alpha1, Kind=Widget',
        },
      ],
    });
    expect(
      needsOf(
        gvk,
        () => ['sample'],
        () => true,
      ),
    ).toEqual({ ok: true, needs: [] });
    const both = bundle(
      { type: 'olm.package.required', value: { packageName: 'sample', versionRange: '>=0.2.0' } },
      { type: 'olm.gvk.required', value: widget },
    );
    expect(needsOf(both, () => ['sample'], none)).toMatchObject({
      ok: true,
      needs: [{ packageName: 'sample' }],
    });
  });

  it('does not count the bundle’s own package as a provider', () => {
    expect(needsOf(bundle({ type: 'olm.gvk.required', value: widget }), () => ['dash'], none)).toEqual({
      ok: false,
      message:
        'bundle dash.v1 requires sample.bosun.dev/v1alpha1, Kind=Widget, which no package of the catalogs provides',
    });
  });

  it('refuses an API several packages provide, naming them', () => {
    expect(needsOf(bundle({ type: 'olm.gvk.required', value: widget }), () => ['b', 'a'], none)).toEqual({
      ok: false,
      message:
        'bundle dash.v1 requires sample.bosun.dev/v1alpha1, Kind=Widget, which packages a, b all provide: install the one to use first',
    });
  });

  it('refuses an olm.constraint, saying what it is', () => {
    const got = needsOf(
      bundle({ type: 'olm.constraint', value: { failureMessage: 'needs etcd', cel: { rule: 'true' } } }),
      () => [],
      none,
    );
    expect(got).toEqual({
      ok: false,
      message:
        'bundle dash.v1 has an olm.constraint (needs etcd), which Bosun does not resolve for a ClusterExtension yet',
    });
  });
});

describe('inRange', () => {
  it.each([
    ['0.2.1', '>=0.2.0 <1.0.0', true],
    ['1.0.0', '>=0.2.0 <1.0.0', false],
    ['0.1.9', '>=0.2.0', false],
    ['3.4.5', '', true],
    ['0.2.0', 'not a range', false],
  ])('%s in %j: %s', (version, range, want) => expect(inRange(version, range)).toBe(want));
});

describe('the generated ClusterExtension', () => {
  const ext: ClusterExtension = {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterExtension',
    metadata: { name: 'dash' },
    spec: {
      namespace: 'team',
      serviceAccount: { name: 'installer' },
      source: {
        sourceType: 'Catalog',
        catalog: { packageName: 'dash', selector: { matchLabels: { tier: 'prod' } } },
      },
    },
  };
  it('installs the package in the range, in the same namespace, as the same account, from the same catalogs, marked as generated', () => {
    const g = generatedExtension(ext, { packageName: 'sample', versionRange: '>=0.2.0 <1.0.0', why: '' });
    expect(g.metadata).toEqual({
      name: generatedExtensionName('dash', 'sample'),
      annotations: { 'olm.operatorframework.io/generated-by': 'dash' },
    });
    expect(g.spec).toEqual({
      namespace: 'team',
      serviceAccount: { name: 'installer' },
      source: {
        sourceType: 'Catalog',
        catalog: {
          packageName: 'sample',
          version: '>=0.2.0 <1.0.0',
          selector: { matchLabels: { tier: 'prod' } },
        },
      },
    });
  });
  it('has a stable DNS-label name per dependent and package', () => {
    const name = generatedExtensionName('dash', 'a'.repeat(80));
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(generatedExtensionName('dash', 'sample')).toBe(generatedExtensionName('dash', 'sample'));
    expect(generatedExtensionName('other', 'sample')).not.toBe(generatedExtensionName('dash', 'sample'));
  });
});

describe('needState', () => {
  const ext: ClusterExtension = {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterExtension',
    metadata: { name: 'dash' },
    spec: {
      namespace: 'team',
      serviceAccount: { name: 'installer' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'dash' } },
    },
  };
  const need = {
    packageName: 'sample',
    versionRange: '>=0.2.0 <1.0.0',
    why: 'olm.package.required sample >=0.2.0 <1.0.0',
  };
  it('is met by a Subscription’s CSV in range, or an extension that installed a version in range', () => {
    expect(needState(ext, need, { subscribedVersions: ['0.2.1'] })).toEqual({ kind: 'met' });
    expect(
      needState(ext, need, {
        subscribedVersions: [],
        extension: { name: 's', installed: { name: 'sample.v0.3.0', version: '0.3.0' } },
      }),
    ).toEqual({ kind: 'met' });
  });
  it('waits for an extension that has not installed it, and names one installed out of range', () => {
    expect(needState(ext, need, { subscribedVersions: ['0.1.0'], extension: { name: 's' } })).toEqual({
      kind: 'waiting',
      message:
        'waiting for ClusterExtension s to install package sample >=0.2.0 <1.0.0 (olm.package.required sample >=0.2.0 <1.0.0)',
    });
    expect(
      needState(ext, need, {
        subscribedVersions: [],
        extension: { name: 's', installed: { name: 'sample.v1.2.0', version: '1.2.0' } },
      }),
    ).toEqual({
      kind: 'waiting',
      message:
        'needs package sample >=0.2.0 <1.0.0 (olm.package.required sample >=0.2.0 <1.0.0), but ClusterExtension s has 1.2.0 installed',
    });
  });
  it('generates an extension when nothing manages the package (a Subscription’s CSV out of range does not count)', () => {
    const state = needState(ext, need, { subscribedVersions: ['0.1.0'] });
    expect(state.kind).toBe('generate');
    if (state.kind !== 'generate') return;
    expect(state.extension.metadata.name).toBe(generatedExtensionName('dash', 'sample'));
    expect(state.message).toBe(
      `waiting for ClusterExtension ${generatedExtensionName('dash', 'sample')}, generated for it, to install package sample >=0.2.0 <1.0.0 (olm.package.required sample >=0.2.0 <1.0.0)`,
    );
  });
});
