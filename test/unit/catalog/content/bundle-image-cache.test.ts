/**
 * The on-disk cache of unpacked bundle images: what is put is got back byte for byte, the least
 * recently used entries go once the bound is passed (a get counts as a use), an entry larger than
 * the bound is never kept, and nothing but a sha256 digest can name a file in it.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BundleImageCache } from '../../../../src/catalog/content/bundle-image-cache.js';
import { tempDir } from '../../../support/temp-dir.js';

const digest = (c: string) => `sha256:${c.repeat(64)}`;
const bytes = (n: number, fill = 1) => Buffer.alloc(n, fill);

async function cache(maxBytes: number) {
  return BundleImageCache.open(join(await tempDir('bosun-bundle-cache-'), 'cache'), maxBytes);
}

describe('the bundle image cache', () => {
  it('gives back what was put, by digest', async () => {
    const c = await cache(100);
    await c.put(digest('a'), Buffer.from('{"objects":["eA=="]}'));
    expect((await c.get(digest('a')))?.toString()).toBe('{"objects":["eA=="]}');
    expect(await c.get(digest('b'))).toBeUndefined();
  });

  it('evicts the least recently used entries beyond its bound, a get counting as a use', async () => {
    const c = await cache(100);
    await c.put(digest('a'), bytes(40));
    await c.put(digest('b'), bytes(40));
    await c.get(digest('a')); // a is now more recent than b
    await c.put(digest('c'), bytes(40));
    expect(c.has(digest('a'))).toBe(true);
    expect(c.has(digest('b'))).toBe(false);
    expect(c.has(digest('c'))).toBe(true);
    expect(c.size()).toBe(80);
    expect((await readdir(c.dir)).sort()).toEqual([`${'a'.repeat(64)}.json`, `${'c'.repeat(64)}.json`]);
  });

  it('keeps nothing larger than its bound, and evicts nothing for it', async () => {
    const c = await cache(100);
    await c.put(digest('a'), bytes(60));
    await c.put(digest('b'), bytes(101));
    expect(c.has(digest('b'))).toBe(false);
    expect(c.has(digest('a'))).toBe(true);
  });

  it('counts an entry put again once', async () => {
    const c = await cache(100);
    await c.put(digest('a'), bytes(60));
    await c.put(digest('a'), bytes(60, 2));
    expect(c.size()).toBe(60);
    expect((await c.get(digest('a')))?.[0]).toBe(2);
  });

  it.each([
    ['sha256:../../etc/passwd'],
    ['sha512:' + 'a'.repeat(128)],
    [`sha256:${'A'.repeat(64)}`],
    ['../x'],
  ])('refuses %s as a name: only a sha256 digest names a file', async (name) => {
    const c = await cache(100);
    await expect(c.put(name, bytes(1))).rejects.toThrow('is not a sha256 digest');
    expect((await readdir(c.dir)).filter((f) => !f.endsWith('.tmp'))).toEqual([]);
  });
});
