/**
 * Layer extraction on layers made here: whiteouts across layers, and each class of hostile entry
 * refused in several shapes, into a folder (which is then gone, with nothing written outside it)
 * and into memory alike, each refusal naming the image, the layer and the entry.
 */
import { catalogExtractLimits } from '../../../src/catalog/image.js';
import { CatalogLimitEnv } from '../../../src/catalog/limits.js';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { beforeEach, describe, expect, it } from 'vitest';
import { LayerEntryError } from '../../../src/oci/errors.js';
import { type ExtractLimits, extractLayers, type LayerSource, readLayers } from '../../../src/oci/extract.js';
import { MediaType } from '../../../src/oci/media-types.js';
import { gzip, sha256, type TarEntry, tarOf, zstd } from '../../support/oci-images.js';
import { tempDir } from '../../support/temp-dir.js';

const image = 'registry.test/bosun/catalog:v1';

function layer(entries: TarEntry[] | Buffer, compress: 'gzip' | 'zstd' | 'none' = 'gzip'): LayerSource {
  const tar = Buffer.isBuffer(entries) ? entries : tarOf(entries);
  const data = compress === 'gzip' ? gzip(tar) : compress === 'zstd' ? zstd(tar) : tar;
  return {
    digest: sha256(data),
    mediaType:
      compress === 'gzip'
        ? MediaType.OciLayerGzip
        : compress === 'zstd'
          ? MediaType.OciLayerZstd
          : MediaType.OciLayer,
    open: async () => Readable.from([data]),
  };
}

let work: string;
let dest: string;
beforeEach(async () => {
  work = await tempDir('bosun-extract-');
  dest = join(work, 'rootfs');
  // Something outside the destination an attack would want to reach.
  await mkdir(join(work, 'outside'));
  await writeFile(join(work, 'outside', 'secret'), 'untouched');
});

/** What the folder holds: path -> content, `-> target` for links, `/` for folders. */
async function tree(dir: string, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(dir, prefix))).sort()) {
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    const st = await lstat(join(dir, rel));
    if (st.isSymbolicLink()) out[rel] = `-> ${await readlink(join(dir, rel))}`;
    else if (st.isDirectory()) {
      out[rel] = '/';
      Object.assign(out, await tree(dir, rel));
    } else out[rel] = await readFile(join(dir, rel), 'utf8');
  }
  return out;
}

/** The refusal of `layers`, into a folder and into memory: the same error both ways; the folder is gone. */
async function refusal(layers: LayerSource[], limits?: ExtractLimits): Promise<LayerEntryError> {
  const onDisk = await extractLayers(layers, dest, { image, ...(limits && { limits }) }).catch(
    (e: unknown) => e,
  );
  expect(onDisk).toBeInstanceOf(LayerEntryError);
  expect(existsSync(dest)).toBe(false);
  expect(await tree(work)).toEqual({ outside: '/', 'outside/secret': 'untouched' });
  const inMemory = await readLayers(layers, { image, ...(limits && { limits }) }).catch((e: unknown) => e);
  expect((inMemory as Error).message).toBe((onDisk as Error).message);
  return onDisk as LayerEntryError;
}

describe('layers applied in order', () => {
  it('applies whiteouts and opaque folders to the layers below, not to their own layer', async () => {
    const lower = layer([
      { path: 'configs/', type: 'dir' },
      { path: 'configs/a.json', data: 'a' },
      { path: 'configs/b.json', data: 'b' },
      { path: 'old/', type: 'dir' },
      { path: 'old/x', data: 'x' },
      { path: 'opaque/', type: 'dir' },
      { path: 'opaque/lower', data: 'lower' },
      { path: 'opaque/sub/deep', data: 'deep' },
      { path: 'bin', type: 'symlink', linkpath: '/usr/bin' },
    ]);
    const upper = layer(
      [
        { path: 'configs/.wh.a.json' },
        { path: '.wh.old' },
        { path: 'opaque/upper', data: 'upper, before the marker' },
        { path: 'opaque/.wh..wh..opq' },
        { path: 'opaque/later', data: 'after the marker' },
        { path: 'configs/b.json', data: 'b2' },
        { path: '.wh.not-there' },
        { path: 'configs/.wh..wh.plnk' },
      ],
      'zstd',
    );
    const summary = await extractLayers([lower, upper], dest, { image });
    const expected = {
      bin: '-> usr/bin',
      configs: '/',
      'configs/b.json': 'b2',
      opaque: '/',
      'opaque/later': 'after the marker',
      'opaque/upper': 'upper, before the marker',
    };
    expect(await tree(dest)).toEqual(expected);
    // Every file written, before the upper layer's whiteouts removed some.
    expect(summary.files).toBe(8);
    const memory = await readLayers([lower, upper], { image });
    expect(Object.fromEntries([...memory.files].map(([p, d]) => [p, d.toString()]))).toEqual({
      'configs/b.json': 'b2',
      'opaque/later': 'after the marker',
      'opaque/upper': 'upper, before the marker',
    });
    expect([...memory.symlinks]).toEqual([['bin', 'usr/bin']]);
  });

  it('replaces a file by a folder and a folder by a file from a higher layer', async () => {
    const lower = layer(
      [
        { path: 'a', data: 'file' },
        { path: 'b/c', data: 'in a folder' },
      ],
      'none',
    );
    const upper = layer([
      { path: 'a/', type: 'dir' },
      { path: 'a/inside', data: 'now' },
      { path: 'b', data: 'flat' },
    ]);
    await extractLayers([lower, upper], dest, { image });
    expect(await tree(dest)).toEqual({ a: '/', 'a/inside': 'now', b: 'flat' });
  });

  it('keeps in-root symlinks, written so that they cannot leave the root', async () => {
    await extractLayers(
      [
        layer([
          { path: 'usr/lib/x', data: 'x' },
          { path: 'lib', type: 'symlink', linkpath: 'usr/lib' },
          { path: 'usr/bin/tool', type: 'symlink', linkpath: '../lib/x' },
          { path: 'etc/abs', type: 'symlink', linkpath: '/usr/lib/../lib/x' },
          { path: 'self', type: 'symlink', linkpath: '.' },
          { path: 'hard', type: 'link', linkpath: 'usr/lib/x' },
        ]),
      ],
      dest,
      { image },
    );
    const t = await tree(dest);
    expect(t.lib).toBe('-> usr/lib');
    expect(t['usr/bin/tool']).toBe('-> ../../usr/lib/x');
    expect(t['etc/abs']).toBe('-> ../usr/lib/x');
    expect(t.self).toBe('-> .');
    expect(t.hard).toBe('x');
    expect(await readFile(join(dest, 'usr/bin/tool'), 'utf8')).toBe('x');
  });

  it('keeps only the paths asked for', async () => {
    const files = await readLayers(
      [
        layer([
          { path: 'configs/a', data: 'a' },
          { path: 'etc/passwd', data: 'root' },
          { path: 'dev/null', type: 'char' },
        ]),
      ],
      { image, only: ['configs'] },
    );
    expect([...files.files.keys()]).toEqual(['configs/a']);
  });

  it('refuses a folder that exists already, leaving it as it was', async () => {
    await mkdir(dest);
    await writeFile(join(dest, 'mine'), 'keep');
    await expect(extractLayers([layer([{ path: 'a', data: 'a' }])], dest, { image })).rejects.toThrow(
      `${image}: cannot extract into ${dest}: it exists already; extraction needs a fresh folder`,
    );
    expect(await readFile(join(dest, 'mine'), 'utf8')).toBe('keep');
  });
});

describe('hostile layers are refused, naming the image, the layer and the entry', () => {
  it.each(['../evil', 'a/../../evil', './../outside/secret', 'a/b/../../../evil', '..'])(
    'a path that climbs out: %j',
    async (path) => {
      const l = layer([
        { path: 'a/b/c', data: 'ok' },
        { path, data: 'evil' },
      ]);
      const err = await refusal([l]);
      expect(err.message).toBe(
        `${image}: layer ${l.digest}: entry "${path}": its path leaves the image root with ".."; nothing was extracted`,
      );
      expect(err.entry).toBe(path);
    },
  );

  it.each(['/etc/passwd', '//etc/x', '/'.concat('a'.repeat(120)), 'C:\\windows', 'a\\..\\..\\x'])(
    'an absolute path or one with backslashes: %j',
    async (path) => {
      const l = layer([{ path, data: 'evil' }]);
      const err = await refusal([l]);
      expect(err.message).toMatch(/: its path (is absolute|contains a backslash); nothing was extracted$/);
    },
  );

  it.each([
    ['l', '..'],
    ['l', '../outside'],
    ['a/l', '../../outside/secret'],
    ['a/l', 'b/../../../x'],
    ['l', '/../outside'],
    ['a/b/l', `${'../'.repeat(3)}outside`],
  ])('a symlink %j to %j, which leads out of the root', async (path, target) => {
    const l = layer([{ path, type: 'symlink', linkpath: target }]);
    const err = await refusal([l]);
    expect(err.message).toBe(
      `${image}: layer ${l.digest}: entry "${path}": it is a symlink to "${target}", which leads out of the image root; nothing was extracted`,
    );
  });

  it.each([
    { name: 'to a folder inside', link: 'configs', target: 'etc' },
    { name: 'absolute, to the host folder', link: 'configs', target: '/etc' },
    { name: 'to the root itself', link: 'configs', target: '.' },
  ])('a file written through a symlink made before it ($name)', async ({ link, target }) => {
    for (const layers of [
      [
        layer([
          { path: link, type: 'symlink', linkpath: target },
          { path: `${link}/passwd`, data: 'evil' },
        ]),
      ],
      // The link in one layer, the file through it in the next.
      [
        layer([{ path: link, type: 'symlink', linkpath: target }]),
        layer([{ path: `${link}/passwd`, data: 'evil' }]),
      ],
    ]) {
      const err = await refusal(layers);
      expect(err.message).toBe(
        `${image}: layer ${layers.at(-1)!.digest}: entry "${link}/passwd": it would be written through the symlink ${link}, which extraction never follows; nothing was extracted`,
      );
    }
  });

  it('a symlink whose target climbs through another symlink stays inside the root', async () => {
    // `a/up` points at the root; `a/b/l` -> `../up/..` read by the kernel would climb from the
    // root to its parent. Written canonically, it leads to the root.
    await extractLayers(
      [
        layer([
          { path: 'a/up', type: 'symlink', linkpath: '..' },
          { path: 'a/b/l', type: 'symlink', linkpath: '../up/..' },
        ]),
      ],
      dest,
      { image },
    );
    expect(await readlink(join(dest, 'a/b/l'))).toBe('../../a');
    expect(await readdir(join(dest, 'a/b/l'))).toEqual(['b', 'up']);
  });

  it.each([
    ['../outside/secret', 'its path leaves the image root with ".."'],
    ['/etc/passwd', 'its path is absolute'],
    ['missing', 'which is not a file extracted before it'],
    ['dir', 'which is not a file extracted before it'],
    ['link', 'which is not a file extracted before it'],
  ])('a hard link to %j', async (target, why) => {
    const l = layer([
      { path: 'dir/', type: 'dir' },
      { path: 'link', type: 'symlink', linkpath: 'dir' },
      { path: 'h', type: 'link', linkpath: target },
    ]);
    const err = await refusal([l]);
    expect(err.message).toContain(`entry "h": it is a hard link to "`);
    expect(err.message).toContain(why);
  });

  it.each([
    ['char', 'device file'],
    ['block', 'device file'],
    ['fifo', 'FIFO'],
  ] as const)('a %s entry', async (type, what) => {
    const l = layer([{ path: `dev/${type}`, type }]);
    const err = await refusal([l]);
    expect(err.message).toBe(
      `${image}: layer ${l.digest}: entry "dev/${type}": it is a ${what}, which images of catalogs and bundles never need; nothing was extracted`,
    );
  });

  const small: ExtractLimits = { maxFileBytes: 1000, maxTotalBytes: 5000, maxEntries: 20 };

  it('too many entries, across layers', async () => {
    const many = (from: number) =>
      Array.from({ length: 12 }, (_, i) => ({ path: `f${from + i}`, data: 'x' }));
    const err = await refusal([layer(many(0)), layer(many(100))], small);
    expect(err.message).toMatch(
      /: entry "f108": the image has more than 20 entries, the limit; nothing was extracted$/,
    );
  });

  it('a file past the per-file limit, refused from its header', async () => {
    const l = layer([{ path: 'big', data: 'x'.repeat(1001) }]);
    const err = await refusal([l], small);
    expect(err.message).toBe(
      `${image}: layer ${l.digest}: entry "big": it is 1001 bytes, past the limit of 1000 for one file; nothing was extracted`,
    );
  });

  it('a catalog image file past the catalog file limit, naming the setting that raises it', async () => {
    const limits = catalogExtractLimits({ [CatalogLimitEnv.File]: '1' });
    const l = layer([{ path: 'configs/huge/catalog.json', data: 'x'.repeat(2 ** 20 + 1) }]);
    const err = await refusal([l], limits);
    expect(err.message).toBe(
      `${image}: layer ${l.digest}: entry "configs/huge/catalog.json": it is ${2 ** 20 + 1} bytes, past the limit of ${2 ** 20} for one file (BOSUN_CATALOG_MAX_FILE_MIB raises it, up to 500); nothing was extracted`,
    );
  });

  it('files past the total limit, across layers', async () => {
    const files = (n: string) =>
      Array.from({ length: 3 }, (_, i) => ({ path: `${n}${i}`, data: 'y'.repeat(900) }));
    const err = await refusal([layer(files('a')), layer(files('b'))], small);
    expect(err.message).toMatch(
      /entry "b2": the image's files go past the limit of 5000 bytes in all; nothing was extracted$/,
    );
  });

  it.each(['gzip', 'zstd'] as const)(
    'a %s bomb: a small layer that inflates without end',
    async (compress) => {
      // 64 MiB of zero blocks compress to kilobytes; they hold no entry a header check could stop.
      const zeros = Buffer.alloc(64 * 1024 * 1024);
      const l = layer(zeros, compress);
      const err = await refusal([l], small);
      expect(err.message).toBe(
        `${image}: layer ${l.digest}: it inflates past the limit of 5000 bytes for the image; nothing was extracted`,
      );
    },
  );

  it('a layer compressed twice', async () => {
    const l = layer(gzip(tarOf([{ path: 'a', data: 'a' }])), 'gzip');
    expect((await refusal([l])).message).toBe(
      `${image}: layer ${l.digest}: it is compressed twice; nothing was extracted`,
    );
  });

  it('a layer that is not a tar', async () => {
    const l = layer(Buffer.from('this is not a tar archive at all, not even close'.repeat(20)), 'gzip');
    expect((await refusal([l])).message).toMatch(
      new RegExp(`^${image}: layer ${l.digest}: it is not a valid tar archive: `),
    );
  });

  it('a whiteout that names nothing, or sits below a file', async () => {
    expect((await refusal([layer([{ path: 'a/.wh.' }])])).message).toContain(
      'entry "a/.wh.": it is a whiteout that names nothing',
    );
    const err = await refusal([layer([{ path: 'f', data: 'file' }]), layer([{ path: 'f/.wh.x' }])]);
    expect(err.message).toContain(
      'entry "f/.wh.x": it is a whiteout below something that is not a folder (f is a file)',
    );
  });
});
