import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../../src/apis/fbc.js';
import { MemoryCatalogStore } from '../../../../src/catalog/content/memory-store.js';
import type { CatalogRef, CatalogSnapshot } from '../../../../src/catalog/content/store.js';

const snapshot = (namespace: string, name: string, digest = 'd1'): CatalogSnapshot => {
  const config = emptyConfig();
  config.bundles.push({ schema: 'olm.bundle', package: 'p', name: `${name}.b`, image: 'i', properties: [] });
  return { ref: { namespace, name }, priority: 0, config, digest, fetchedAt: 0 };
};

describe('MemoryCatalogStore', () => {
  it("a namespace sees its own catalogs and the global namespace's, in a stable order", () => {
    const store = new MemoryCatalogStore('olm');
    store.set(snapshot('team-b', 'b'));
    store.set(snapshot('olm', 'global'));
    store.set(snapshot('team-a', 'z'));
    store.set(snapshot('team-a', 'a'));
    const names = (ns: string) => store.visibleFrom(ns).map((s) => `${s.ref.namespace}/${s.ref.name}`);
    expect(names('team-a')).toEqual(['olm/global', 'team-a/a', 'team-a/z']);
    expect(names('team-c')).toEqual(['olm/global']);
    expect(names('olm')).toEqual(['olm/global']);
  });

  it('listeners hear about new content and health changes, not about repeats', () => {
    const store = new MemoryCatalogStore('olm');
    const heard: CatalogRef[] = [];
    const off = store.onChange((ref) => heard.push(ref));
    const ref = { namespace: 'ns', name: 'c' };
    store.set(snapshot('ns', 'c', 'd1'));
    store.set(snapshot('ns', 'c', 'd1'));
    store.setHealth({ ref, healthy: true, checkedAt: 1 });
    store.setHealth({ ref, healthy: true, checkedAt: 2 });
    store.setHealth({ ref, healthy: false, message: 'down', checkedAt: 3 });
    store.setHealth({ ref, healthy: false, message: 'down', checkedAt: 4 });
    store.set(snapshot('ns', 'c', 'd2'));
    expect(heard).toHaveLength(4);
    off();
    store.delete(ref);
    expect(heard).toHaveLength(4);
  });

  it('finds bundles by name and forgets a deleted catalog entirely', () => {
    const store = new MemoryCatalogStore('olm');
    const ref = { namespace: 'ns', name: 'c' };
    store.set(snapshot('ns', 'c'));
    store.setHealth({ ref, healthy: true, checkedAt: 1 });
    expect(store.findBundle(ref, 'c.b')?.package).toBe('p');
    expect(store.findBundle(ref, 'nope')).toBeUndefined();
    store.delete(ref);
    expect(store.get(ref)).toBeUndefined();
    expect(store.health(ref)).toBeUndefined();
    expect(store.findBundle(ref, 'c.b')).toBeUndefined();
  });

  it("releases a snapshot's spooled file once it is replaced by other content or deleted", () => {
    const released: string[] = [];
    const store = new MemoryCatalogStore('olm', (file) => released.push(file));
    const ref = { namespace: 'ns', name: 'c' };
    store.set({ ...snapshot('ns', 'c', 'd1'), payloadFile: '/spool/d1' });
    store.set({ ...snapshot('ns', 'c', 'd1'), priority: 5, payloadFile: '/spool/d1' });
    expect(released).toEqual([]);
    store.set({ ...snapshot('ns', 'c', 'd2'), payloadFile: '/spool/d2' });
    expect(released).toEqual(['/spool/d1']);
    store.delete(ref);
    expect(released).toEqual(['/spool/d1', '/spool/d2']);
  });
});
