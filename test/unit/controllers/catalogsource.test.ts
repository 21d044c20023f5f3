import { describe, expect, it } from 'vitest';
import type { CatalogSource } from '../../../src/apis/operators.js';
import {
  catalogSourceStatus,
  digestOf,
  parseCatalogFiles,
  parseGoDuration,
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

const pkg = { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' };
const channel = { schema: 'olm.channel', package: 'foo', name: 'stable', entries: [{ name: 'foo.v1.0.0' }] };
const bundle = {
  schema: 'olm.bundle',
  package: 'foo',
  name: 'foo.v1.0.0',
  image: 'example.com/foo:v1',
  properties: [{ type: 'olm.package', value: { packageName: 'foo', version: '1.0.0' } }],
};
const json = [pkg, channel, bundle].map((d) => JSON.stringify(d)).join('\n');

describe('parseCatalogFiles', () => {
  it('reads documents split over several files, YAML or JSON', () => {
    const parsed = parseCatalogFiles(
      [
        { name: 'a.json', text: JSON.stringify(pkg) },
        {
          name: 'b.yaml',
          text: `schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v1.0.0\n`,
        },
        { name: 'c.json', text: JSON.stringify(bundle) },
      ],
      'ConfigMap ns/cat',
    );
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.config.bundles.map((b) => b.name)).toEqual(['foo.v1.0.0']);
  });

  it('names the source and the problem when the catalog is invalid', () => {
    const parsed = parseCatalogFiles(
      [{ name: 'x', text: json.replace('"defaultChannel":"stable"', '"defaultChannel":"beta"') }],
      'ConfigMap ns/cat',
    );
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toMatch(/^ConfigMap ns\/cat is not a valid file-based catalog: /);
      expect(parsed.message).toContain('beta');
    }
  });

  it('reports text that is not FBC at all', () => {
    const parsed = parseCatalogFiles([{ name: 'x', text: '<html>502 Bad Gateway</html>' }], 'http://example');
    expect(parsed.ok).toBe(false);
  });

  it('has a digest that depends on content, not on file order', () => {
    const a = { name: 'a', text: 'one' };
    const b = { name: 'b', text: 'two' };
    expect(digestOf([a, b])).toBe(digestOf([b, a]));
    expect(digestOf([a, b])).not.toBe(digestOf([a, { name: 'b', text: 'three' }]));
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
