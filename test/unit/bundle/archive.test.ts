import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync, zstdCompressSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packArchive, readArchive, unsafePathReason } from '../../../src/bundle/archive.js';
import type { FileMap } from '../../../src/util/tar-write.js';
import { readBundle, readBundleFiles } from '../../../src/bundle/read.js';
import { runs } from '../../support/properties.js';
import { tempDir } from '../../support/temp-dir.js';

const fixtures = join(import.meta.dirname, '../../fixtures');

const segment = fc
  .stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}$/)
  .filter((s) => s !== '..' && s !== '.');
const files: fc.Arbitrary<FileMap> = fc
  .uniqueArray(
    fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/')),
    { minLength: 1, maxLength: 8 },
  )
  // no path may also be a directory of another
  .filter((paths) => paths.every((p) => !paths.some((q) => q.startsWith(`${p}/`))))
  .chain((paths) =>
    fc.tuple(
      ...paths.map((p) => fc.uint8Array({ maxLength: 2000 }).map((b) => [p, Buffer.from(b)] as const)),
    ),
  )
  .map((entries) => new Map(entries));

describe('bundle archives', () => {
  it('pack then read gives back the same files', async () => {
    await fc.assert(
      fc.asyncProperty(files, async (input) => {
        const { data } = packArchive(input);
        const read = await readArchive(data, 'b.tar.gz');
        if (!read.ok) throw new Error(JSON.stringify(read.errors));
        expect(new Map([...read.files].sort())).toEqual(new Map([...input].sort()));
      }),
      runs(60),
    );
  });

  it('packing is reproducible: same files, same bytes, whatever the order', () => {
    fc.assert(
      fc.property(files, (input) => {
        const reversed = new Map([...input].reverse());
        expect(packArchive(reversed).digest).toBe(packArchive(input).digest);
      }),
    );
  });

  it('writes no time, name or machine into the gzip header', () => {
    const { data, digest } = packArchive(new Map([['manifests/a.yaml', Buffer.from('kind: ConfigMap\n')]]));
    expect([...data.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(gunzipSync(data).subarray(257, 263).toString('latin1')).toBe('ustar\0');
  });

  it('reads a zstd-compressed tar, and stops one that inflates past the limit', async () => {
    const tar = gunzipSync(packArchive(new Map([['metadata/x', Buffer.from('y')]])).data);
    const read = await readArchive(zstdCompressSync(tar), 'b.tar.zst');
    expect(read.ok && read.files.get('metadata/x')?.toString()).toBe('y');
    const limits = { maxFileBytes: 1_000_000, maxTotalBytes: 1_000_000, maxEntries: 10 };
    const zeros = zstdCompressSync(Buffer.alloc(3_000_000));
    expect(await readArchive(zeros, 'z.tar.zst', limits)).toEqual({
      ok: false,
      errors: [{ file: 'z.tar.zst', message: expect.stringContaining('archive inflates past the limit') }],
    });
    const corrupt = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(64, 7)]);
    expect(await readArchive(corrupt, 'c.tar.zst')).toEqual({
      ok: false,
      errors: [{ file: 'c.tar.zst', message: expect.stringContaining('not a valid zstd stream') }],
    });
  });

  it('reads an uncompressed tar too', async () => {
    const tar = gunzipSync(packArchive(new Map([['metadata/x', Buffer.from('y')]])).data);
    const read = await readArchive(tar, 'b.tar');
    expect(read.ok && read.files.get('metadata/x')?.toString()).toBe('y');
  });

  it.each([
    ['manifests/a.yaml', undefined],
    ['./manifests/a.yaml', undefined],
    ['/etc/passwd', 'is an absolute path'],
    ['C:\\evil', 'is an absolute path'],
    ['manifests/../../evil', 'leaves the archive root with ".."'],
    ['..', 'leaves the archive root with ".."'],
    ['manifests\\..\\evil', 'contains a backslash'],
  ])('entry path %j: %s', (path, reason) => {
    expect(unsafePathReason(path)).toBe(reason);
  });

  it.each([
    [
      'tar-dotdot.tar.gz',
      'tar-dotdot.tar.gz:manifests/../../evil.yaml',
      'entry path leaves the archive root with ".."',
    ],
    ['tar-absolute-path.tar.gz', 'tar-absolute-path.tar.gz:/tmp/evil.yaml', 'entry path is an absolute path'],
    [
      'tar-symlink.tar.gz',
      'tar-symlink.tar.gz:manifests/passwd.yaml',
      'symlink to "/etc/passwd" is not allowed',
    ],
    [
      'tar-bomb.tar.gz',
      'tar-bomb.tar.gz:manifests/huge.yaml',
      'is 65.0 MiB, past the limit of 16.0 MiB for one file of a bundle (BOSUN_BUNDLE_MAX_FILE_MIB raises it)',
    ],
  ])('refuses %s', async (name, file, message) => {
    const path = join(fixtures, 'bad', name);
    const read = await readArchive(await readFile(path), name);
    expect(read).toEqual({ ok: false, errors: [{ file, message: expect.stringContaining(message) }] });
  });

  it('stops a stream that inflates past the whole bundle’s limit, and files that add up past it', async () => {
    const many = new Map(
      Array.from({ length: 4 }, (_, i) => [`manifests/f${i}.yaml`, Buffer.alloc(400_000, 0x61)]),
    );
    const { data } = packArchive(many);
    const limits = { maxFileBytes: 1_000_000, maxTotalBytes: 1_000_000, maxEntries: 10 };
    expect(await readArchive(data, 'b.tar.gz', limits)).toEqual({
      ok: false,
      errors: [
        {
          file: 'b.tar.gz',
          message: expect.stringContaining('the files of the archive go past the limit of 0.95 MiB'),
        },
      ],
    });
    // A stream of nothing but zeros: no entry at all, only bytes past the limit.
    const zeros = gzipSync(Buffer.alloc(3_000_000));
    expect(await readArchive(zeros, 'z.tar.gz', limits)).toEqual({
      ok: false,
      errors: [{ file: 'z.tar.gz', message: expect.stringContaining('archive inflates past the limit') }],
    });
  });

  it('refuses bytes that are not an archive', async () => {
    const read = await readArchive(Buffer.from('just text, not a tar archive at all'.repeat(20)), 'x.tar');
    expect(read.ok).toBe(false);
  });

  it('reads a bundle archive made from a directory with one root folder', async () => {
    const dir = await tempDir('bosun-archive-');
    const inner = await readBundleFiles(join(fixtures, 'bundles/minimal'));
    if (!inner.ok) throw new Error('fixture');
    const rooted = new Map([...inner.value].map(([p, b]) => [`minimal/${p}`, b]));
    await writeFile(join(dir, 'b.tgz'), packArchive(rooted).data);
    const read = await readBundle(join(dir, 'b.tgz'));
    if (!read.ok) throw new Error(JSON.stringify(read.errors));
    expect(read.value.archive).toBe(true);
    expect(read.value.manifests.map((m) => m.file)).toEqual([
      'manifests/gizmo.csv.yaml',
      'manifests/gizmos.crd.yaml',
    ]);
  });
});
