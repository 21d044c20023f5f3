import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitFiles } from '../../../src/catalog/write.js';
import { type ConfinedFs, linkInTheWay, pathParts, realConfinedFs } from '../../../src/util/confined-fs.js';
import { tempDir } from '../../support/temp-dir.js';
import { treeSnapshot } from '../../support/tree-snapshot.js';

/** `cat/a/catalog.yaml`, `cat/b/catalog.yaml`, and `outside/a/catalog.yaml` beside the catalog. */
async function seeded(): Promise<{ base: string; cat: string; outside: string }> {
  const base = await tempDir('bosun-confined-');
  const cat = join(base, 'cat');
  const outside = join(base, 'outside');
  for (const d of [join(cat, 'a'), join(cat, 'b'), join(outside, 'a')]) await mkdir(d, { recursive: true });
  await writeFile(join(cat, 'a/catalog.yaml'), 'old a\n');
  await writeFile(join(cat, 'b/catalog.yaml'), 'old b\n');
  await writeFile(join(outside, 'a/catalog.yaml'), 'precious\n');
  return { base, cat, outside };
}

const changes = [
  { path: 'a/catalog.yaml', content: 'new a\n' },
  { path: 'b/catalog.yaml', content: 'new b\n' },
];

describe('linkInTheWay', () => {
  it.each([
    [
      'a folder linked out',
      async (cat: string, out: string) => symlink(join(out, 'a'), join(cat, 'x')),
      'x/catalog.yaml',
      'x',
    ],
    [
      'a file linked out',
      async (cat: string, out: string) => {
        await rm(join(cat, 'a/catalog.yaml'));
        await symlink(join(out, 'a/catalog.yaml'), join(cat, 'a/catalog.yaml'));
      },
      'a/catalog.yaml',
      'a/catalog.yaml',
    ],
    [
      'a dangling link',
      async (cat: string, out: string) => symlink(join(out, 'none'), join(cat, 'x')),
      'x/catalog.yaml',
      'x',
    ],
    [
      'a link deeper down',
      async (cat: string, out: string) => symlink(out, join(cat, 'a/deeper')),
      'a/deeper/a/catalog.yaml',
      'a/deeper',
    ],
    ['a link to a folder inside', async (cat: string) => symlink('b', join(cat, 'x')), 'x/catalog.yaml', 'x'],
  ])('%s is in the way, named', async (_, make, rel, named) => {
    const { cat, outside } = await seeded();
    await make(cat, outside);
    expect(await linkInTheWay(cat, rel)).toEqual({
      file: join(cat, named),
      message: expect.stringMatching(/^is a symbolic link \(to .+\); Bosun does not write through links/),
    });
  });

  it('a file where a folder belongs, and a folder where the file goes, are in the way', async () => {
    const { cat } = await seeded();
    expect((await linkInTheWay(cat, 'a/catalog.yaml/x'))?.message).toMatch(/^is not a folder/);
    expect((await linkInTheWay(cat, 'a'))?.message).toMatch(/^is not a regular file/);
  });

  it('nothing is in the way of a plain path, existing or not', async () => {
    const { cat } = await seeded();
    expect(await linkInTheWay(cat, 'a/catalog.yaml')).toBeUndefined();
    expect(await linkInTheWay(cat, 'new/deep/catalog.yaml')).toBeUndefined();
  });

  it.each(['../outside/a/catalog.yaml', '/etc/passwd', 'a/../../x', 'a//b', './a', ''])(
    'refuses %j, which is no plain path inside the tree',
    async (rel) => {
      expect(pathParts(rel)).toBeUndefined();
      const { cat } = await seeded();
      expect((await linkInTheWay(cat, rel))?.message).toMatch(/is not a path inside the catalog/);
    },
  );
});

describe('commitFiles when a link appears while it writes', () => {
  it('a package folder swapped for a link out after the check: refused, undone, outside unchanged', async () => {
    const { base, cat, outside } = await seeded();
    const before = await treeSnapshot(outside);
    let swapped = false;
    const fs: ConfinedFs = {
      ...realConfinedFs,
      // The attacker's move lands after `a` was checked and written, while `b` is being written.
      createFile: async (p, d) => {
        if (!swapped && p.includes(`${join(cat, 'b')}/`)) {
          swapped = true;
          await rename(join(cat, 'a'), join(base, 'moved-a'));
          await symlink(join(outside, 'a'), join(cat, 'a'));
        }
        return realConfinedFs.createFile(p, d);
      },
    };
    const problems = await commitFiles(cat, changes, fs);
    expect(swapped).toBe(true);
    expect(problems).toEqual([
      {
        file: join(cat, 'a'),
        message: expect.stringMatching(
          /^is a symbolic link \(to .*outside\/a\); Bosun does not write through links/,
        ),
      },
    ]);
    expect(await treeSnapshot(outside)).toEqual(before);
    expect(await readFile(join(base, 'moved-a/catalog.yaml'), 'utf8')).toBe('old a\n');
    expect(await readFile(join(cat, 'b/catalog.yaml'), 'utf8')).toBe('old b\n');
    // No temporary file left in the catalog or outside it (the one written into `a` before the
    // move went with the folder the attacker moved).
    for (const dir of [cat, outside])
      expect(Object.keys(await treeSnapshot(dir)).filter((k) => k.includes('.tmp'))).toEqual([]);
  });

  it('a link put at the temporary file`s name is not followed: the write fails, outside unchanged', async () => {
    const { cat, outside } = await seeded();
    const before = await treeSnapshot(cat);
    const fs: ConfinedFs = {
      ...realConfinedFs,
      createFile: async (p, d) => {
        await symlink(join(outside, 'a/catalog.yaml'), p);
        return realConfinedFs.createFile(p, d);
      },
    };
    await expect(commitFiles(cat, changes, fs)).rejects.toThrow(/nothing was changed: EEXIST/);
    expect(await readFile(join(outside, 'a/catalog.yaml'), 'utf8')).toBe('precious\n');
    // Only the planted link is left; the catalog's own files are as they were.
    const after = await treeSnapshot(cat);
    for (const [k, v] of Object.entries(before)) expect(after[k]).toBe(v);
  });

  it('a new folder the commit made is removed again when it is refused', async () => {
    const { cat, outside } = await seeded();
    const before = await treeSnapshot(cat);
    const fs: ConfinedFs = {
      ...realConfinedFs,
      createFile: async (p, d) => {
        // `c/` was just made by the commit; it becomes a link before its file is written.
        if (p.includes(`${join(cat, 'c')}/`) && !p.includes('deep')) {
          await mkdir(join(cat, 'c/deep'));
          await symlink(outside, join(cat, 'c/deep/x'));
        }
        return realConfinedFs.createFile(p, d);
      },
    };
    const problems = await commitFiles(
      cat,
      [
        { path: 'c/catalog.yaml', content: 'c\n' },
        { path: 'c/deep/x/catalog.yaml', content: 'x\n' },
      ],
      fs,
    );
    expect(problems[0]?.file).toBe(join(cat, 'c/deep/x'));
    expect(await readFile(join(outside, 'a/catalog.yaml'), 'utf8')).toBe('precious\n');
    expect(Object.keys(await treeSnapshot(outside))).toEqual(['a', 'a/catalog.yaml']);
    // The link the "attacker" made keeps `c/` from being removed; nothing of the commit's is left.
    const after = await treeSnapshot(cat);
    expect(Object.keys(after).filter((k) => !(k in before))).toEqual(['c', 'c/deep', 'c/deep/x']);
  });
});
