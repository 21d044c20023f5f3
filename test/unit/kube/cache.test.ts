import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import { deepFreeze, mutableCopy, ObjectCache, objectKey, splitKey } from '../../../src/kube/cache.js';

const obj = (
  name: string,
  rv: string,
  namespace: string | null = 'ns',
  data = {},
): KubeObject & { data: object } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: namespace === null ? { name, resourceVersion: rv } : { name, namespace, resourceVersion: rv },
  data,
});

describe('object keys', () => {
  it.each([
    [obj('a', '1'), 'ns/a'],
    [obj('a', '1', null), 'a'],
  ])('keys %j as %s and splits it back', (o, key) => {
    expect(objectKey(o)).toBe(key);
    expect(objectKey(o.metadata?.namespace, o.metadata?.name)).toBe(key);
    expect(splitKey(key)).toEqual({ namespace: o.metadata?.namespace, name: 'a' });
  });
});

describe('ObjectCache', () => {
  it('reports add, then update only for a new resourceVersion, then delete', () => {
    const cache = new ObjectCache<KubeObject>();
    expect(cache.upsert(obj('a', '1'))?.type).toBe('add');
    expect(cache.upsert(obj('a', '1'))).toBeUndefined();
    const update = cache.upsert(obj('a', '2'));
    expect(update).toMatchObject({
      type: 'update',
      old: { metadata: { resourceVersion: '1' } },
      object: { metadata: { resourceVersion: '2' } },
    });
    expect(cache.remove(obj('a', '3'))).toMatchObject({
      type: 'delete',
      object: { metadata: { resourceVersion: '3' } },
    });
    expect(cache.remove(obj('a', '3'))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('on replace, reports what changed since it last knew, including deletions', () => {
    const cache = new ObjectCache<KubeObject>();
    cache.replace([obj('same', '1'), obj('changed', '1'), obj('gone', '1')]);
    const notes = cache.replace([obj('same', '1'), obj('changed', '2'), obj('new', '5')]);
    expect(notes.map((n) => [n.type, n.object.metadata?.name])).toEqual([
      ['update', 'changed'],
      ['add', 'new'],
      ['delete', 'gone'],
    ]);
    expect(cache.keys().sort()).toEqual(['ns/changed', 'ns/new', 'ns/same']);
  });

  it('lists all objects or one namespace', () => {
    const cache = new ObjectCache<KubeObject>();
    cache.replace([obj('a', '1', 'x'), obj('b', '1', 'y'), obj('c', '1', 'x')]);
    expect(cache.list('x').map((o) => o.metadata?.name)).toEqual(['a', 'c']);
    expect(cache.list()).toHaveLength(3);
  });

  it('hands out frozen objects: changing one in place throws', () => {
    const cache = new ObjectCache<ReturnType<typeof obj>>();
    cache.upsert(obj('a', '1', 'ns', { key: 'value' }));
    const cached = cache.get('ns/a')!;
    expect(() => {
      (cached.metadata as { name: string }).name = 'b';
    }).toThrow(TypeError);
    expect(() => {
      (cached.data as Record<string, string>).key = 'changed';
    }).toThrow(TypeError);
    const copy = mutableCopy(cached);
    (copy.data as Record<string, string>).key = 'changed';
    expect(cache.get('ns/a')?.data).toEqual({ key: 'value' });
  });

  it('deepFreeze freezes nested arrays and objects', () => {
    const v = deepFreeze({ a: [{ b: 1 }] });
    expect(Object.isFrozen(v.a[0])).toBe(true);
  });
});
