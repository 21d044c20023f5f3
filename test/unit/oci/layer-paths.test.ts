import fc from 'fast-check';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sha256Digest, verifyingStream } from '../../../src/oci/digest.js';
import { DigestMismatchError } from '../../../src/oci/errors.js';
import {
  canonicalLinkTarget,
  linkDestination,
  normalizeEntryPath,
  whiteoutOf,
} from '../../../src/oci/layer-paths.js';
import { runs } from '../../support/properties.js';

describe('layer entry paths', () => {
  it.each([
    ['./configs/a.json', 'configs/a.json'],
    ['configs//a.json', 'configs/a.json'],
    ['configs/./a.json', 'configs/a.json'],
    ['configs/', 'configs'],
    ['./', ''],
  ])('%j is %j', (raw, path) => {
    expect(normalizeEntryPath(raw)).toEqual({ ok: true, path });
  });

  it.each(['../a', 'a/../../b', 'a/..', '/abs', 'a\\b', 'C:/x', 'a\0b'])('%j is refused', (raw) => {
    expect(normalizeEntryPath(raw).ok).toBe(false);
  });

  it.each([
    ['a/.wh.b', { kind: 'remove', path: 'a/b' }],
    ['.wh.b', { kind: 'remove', path: 'b' }],
    ['a/.wh..wh..opq', { kind: 'opaque', dir: 'a' }],
    ['.wh..wh..opq', { kind: 'opaque', dir: '' }],
    ['a/.wh..wh.plnk', { kind: 'meta' }],
    ['a/.wh..', { kind: 'invalid' }],
    ['a/.wh.', { kind: 'invalid' }],
    ['a/b.wh.c', { kind: 'none' }],
  ])('the whiteout %j', (path, expected) => {
    expect(whiteoutOf(path)).toEqual(expected);
  });
});

describe('symlink targets', () => {
  const name = fc.constantFrom('a', 'b', 'c', '.', '..', '');
  const path = fc
    .array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 4 })
    .map((p) => p.join('/'));
  const target = fc
    .tuple(fc.boolean(), fc.array(name, { minLength: 0, maxLength: 6 }))
    .map(([abs, parts]) => `${abs ? '/' : ''}${parts.join('/')}`);

  it('a canonical target leads where the original did, and climbs only through the link`s own folders', () => {
    fc.assert(
      fc.property(path, target, (link, t) => {
        const destination = linkDestination(link, t);
        if (destination === undefined) return;
        const canonical = canonicalLinkTarget(link, destination);
        expect(linkDestination(link, canonical)).toBe(destination);
        // Only leading `..` steps, at most as many as the link has folders: each passes a
        // folder extraction made, never a name that could be a link.
        const parts = canonical.split('/');
        const ups = parts.findIndex((p) => p !== '..');
        const climbs = ups === -1 ? parts.length : ups;
        expect(climbs).toBe(link.split('/').length - 1);
        expect(parts.slice(climbs).includes('..')).toBe(false);
      }),
      runs(2000),
    );
  });
});

describe('streams verified against their digest', () => {
  const data = Buffer.from('the content');
  const digest = sha256Digest(data);
  const read = async (chunks: Buffer[], size: number, d = digest) => {
    const out: Buffer[] = [];
    for await (const c of Readable.from(chunks).pipe(verifyingStream({ digest: d, size }, { image: 'img' })))
      out.push(c as Buffer);
    return Buffer.concat(out);
  };

  it('passes content that matches', async () => {
    expect((await read([data.subarray(0, 3), data.subarray(3)], data.length)).equals(data)).toBe(true);
  });

  it.each([
    ['longer', [data, Buffer.from('!')], data.length, /is longer than the 11 bytes its descriptor gives/],
    ['shorter', [data.subarray(0, 5)], data.length, /has 5 bytes where its descriptor gives 11/],
    [
      'other',
      [Buffer.from('the CONTENT')],
      data.length,
      /has the digest sha256:[0-9a-f]{64}: the registry served other content/,
    ],
  ])('fails content that is %s', async (_n, chunks, size, message) => {
    const err = await read(chunks, size).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as Error).message).toMatch(message);
  });
});
