import { describe, expect, it } from 'vitest';
import type { CatalogSource } from '../../../src/apis/operators.js';
import { SourceKind } from '../../../src/catalog/content/fetcher.js';
import {
  CatalogSourceConditionReason,
  catalogSourceStatus,
  parseGoDuration,
  sourceKindOf,
} from '../../../src/controllers/catalogsource-content.js';

describe('parseGoDuration', () => {
  it.each([
    ['30s', 30_000],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['250ms', 250],
    ['0', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each(['', '10', 'ten minutes', '5d', '-1m', 'm10'])('%j does not parse', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});

const source = (status?: CatalogSource['status']): CatalogSource => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { name: 'c', namespace: 'ns', generation: 2 },
  spec: { sourceType: 'http', address: 'http://x' },
  ...(status ? { status } : {}),
});

describe('catalogSourceStatus', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');

  it('a good sync is READY with a Ready=True condition', () => {
    const s = catalogSourceStatus(source(), {
      ok: true,
      at: t0,
      address: 'http://x',
      packages: 1,
      bundles: 2,
    });
    expect(s.connectionState).toEqual({
      lastObservedState: 'READY',
      lastConnect: '2026-01-01T00:00:00Z',
      address: 'http://x',
    });
    expect(s.conditions).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Synced',
        message: 'catalog synced: 1 packages, 2 bundles',
        observedGeneration: 2,
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]);
    expect((s as { lastSync?: string }).lastSync).toBe('2026-01-01T00:00:00Z');
  });

  it('a failure keeps the last sync time, sets OLM reason and message, and recovery clears them', () => {
    const good = catalogSourceStatus(source(), { ok: true, at: t0, packages: 1, bundles: 1 });
    const bad = catalogSourceStatus(source(good), {
      ok: false,
      at: t0 + 60_000,
      reason: 'RegistryServerError',
      message: 'GET http://x: ECONNREFUSED',
    });
    expect(bad.connectionState?.lastObservedState).toBe('TRANSIENT_FAILURE');
    expect(bad.reason).toBe('RegistryServerError');
    expect(bad.message).toBe('GET http://x: ECONNREFUSED');
    expect((bad as { lastSync?: string }).lastSync).toBe('2026-01-01T00:00:00Z');
    expect(bad.conditions?.[0]).toMatchObject({
      status: 'False',
      lastTransitionTime: '2026-01-01T00:01:00Z',
    });

    const healed = catalogSourceStatus(source(bad), { ok: true, at: t0 + 120_000, packages: 1, bundles: 1 });
    expect(healed.reason).toBeUndefined();
    expect(healed.message).toBeUndefined();
    expect(healed.conditions?.[0]).toMatchObject({ status: 'True', reason: 'Synced' });
  });

  it('Bosun-only reasons stay out of status.reason', () => {
    const s = catalogSourceStatus(source(), { ok: false, at: t0, reason: 'InvalidCatalog', message: 'bad' });
    expect(s.reason).toBeUndefined();
    expect(s.conditions?.[0]?.reason).toBe('InvalidCatalog');
  });
});

describe('sourceKindOf', () => {
  it.each<[Partial<CatalogSource['spec']>, SourceKind | undefined]>([
    [{ sourceType: 'configmap', configMap: 'cm' }, SourceKind.ConfigMap],
    [{ sourceType: 'internal', configMap: 'cm' }, SourceKind.ConfigMap],
    [{ sourceType: 'http', address: 'http://x/' }, SourceKind.Http],
    [{ sourceType: 'grpc', address: 'registry.olm.svc:50051' }, SourceKind.Grpc],
    [{ sourceType: 'grpc', image: 'quay.io/x/catalog:v1' }, SourceKind.Image],
    // OLM reads the image when a source names both.
    [{ sourceType: 'grpc', image: 'quay.io/x/catalog:v1', address: 'x:50051' }, SourceKind.Image],
    [{ sourceType: 'grpc' }, SourceKind.Grpc],
    [{ sourceType: 'ftp' as CatalogSource['spec']['sourceType'] }, undefined],
  ])('%j is read by the %s fetcher', (spec, kind) => {
    expect(sourceKindOf({ ...source(), spec: { sourceType: 'grpc', ...spec } })).toBe(kind);
  });

  it('a fetch failure of any kind is a reason of the Ready condition', () => {
    expect(Object.keys(CatalogSourceConditionReason).sort()).toEqual(
      [
        'Synced',
        'ConfigMapError',
        'RegistryServerError',
        'SpecInvalidError',
        'InvalidCatalog',
        'ImagePlatformMissing',
        'SourceTypeNotSupported',
      ].sort(),
    );
  });
});
