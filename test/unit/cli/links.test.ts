/**
 * Symbolic links below a catalog or a bundle, through the real commands: a link leading out of
 * the tree (or anywhere, or nowhere) is refused by name, nothing is read or written through it,
 * and the catalog and whatever the link points at are byte for byte as they were. The folder the
 * user names may itself be a link.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { treeSnapshot } from '../../support/tree-snapshot.js';
import { bosun, repo, workdir } from './run-bosun.js';

const sampleCatalog = join(repo, 'catalogs/bosun-samples');
const sampleBundle = join(repo, 'bundles/bosun-sample/0.2.1');

/**
 * A work folder with `cat/` (the sample catalog) and `outside/` (what a link may point at). The
 * snapshot of the whole folder covers both, so one comparison proves neither changed.
 */
async function catalogWithOutside(): Promise<string> {
  const base = await workdir();
  await cp(sampleCatalog, join(base, 'cat'), { recursive: true });
  await mkdir(join(base, 'outside'));
  return base;
}

interface Layout {
  name: string;
  /** Builds the layout in `base`; returns the path (relative to base) the refusal must name. */
  build(base: string): Promise<string>;
  /** Whether loading the catalog meets the link (the loader passes over what it never reads). */
  loaderSees: boolean;
}

/** A package folder outside the catalog holding what publish would overwrite. */
async function outsidePackage(base: string): Promise<string> {
  const out = join(base, 'outside/bosun-sample');
  await cp(join(sampleCatalog, 'bosun-sample'), out, { recursive: true });
  return out;
}

const catalogLayouts: Layout[] = [
  {
    name: 'a package folder linked to a folder outside the catalog',
    loaderSees: true,
    build: async (base) => {
      await rm(join(base, 'cat/bosun-sample'), { recursive: true });
      await symlink(await outsidePackage(base), join(base, 'cat/bosun-sample'));
      return 'cat/bosun-sample';
    },
  },
  {
    name: 'a package folder linked out of the catalog and left out by .indexignore',
    loaderSees: false,
    build: async (base) => {
      await rm(join(base, 'cat/bosun-sample'), { recursive: true });
      await symlink(await outsidePackage(base), join(base, 'cat/bosun-sample'));
      await writeFile(join(base, 'cat/.indexignore'), 'bosun-sample\n');
      return 'cat/bosun-sample';
    },
  },
  {
    name: 'a catalog file linked to a file outside the catalog',
    loaderSees: true,
    build: async (base) => {
      const out = await outsidePackage(base);
      await rm(join(base, 'cat/bosun-sample/catalog.yaml'));
      await symlink(join(out, 'catalog.yaml'), join(base, 'cat/bosun-sample/catalog.yaml'));
      return 'cat/bosun-sample/catalog.yaml';
    },
  },
  {
    name: 'a link to a folder inside the catalog that links on out of it (nested)',
    loaderSees: true,
    build: async (base) => {
      await rm(join(base, 'cat/bosun-sample'), { recursive: true });
      await mkdir(join(base, 'cat/shelf'));
      await symlink(await outsidePackage(base), join(base, 'cat/shelf/pkg'));
      await symlink('shelf/pkg', join(base, 'cat/bosun-sample'));
      return 'cat/bosun-sample';
    },
  },
  {
    name: 'a dangling link where the package folder goes',
    loaderSees: false,
    build: async (base) => {
      await rm(join(base, 'cat/bosun-sample'), { recursive: true });
      await symlink(join(base, 'outside/not-yet'), join(base, 'cat/bosun-sample'));
      return 'cat/bosun-sample';
    },
  },
  {
    name: 'a package folder linked to another folder inside the catalog',
    loaderSees: true,
    build: async (base) => {
      await rename(join(base, 'cat/bosun-sample'), join(base, 'cat/kept'));
      await symlink('kept', join(base, 'cat/bosun-sample'));
      return 'cat/bosun-sample';
    },
  },
];

describe('catalog publish writes nothing through a link below the catalog', () => {
  it.each(catalogLayouts)('$name: refused by name, catalog and target unchanged', async (layout) => {
    const base = await catalogWithOutside();
    const named = await layout.build(base);
    const before = await treeSnapshot(base);
    const r = await bosun(base, 'catalog', 'publish', 'cat', sampleBundle, '--replace');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: ${named}: is a symbolic link (to `);
    expect(r.stderr).toMatch(/nothing was published/);
    expect(await treeSnapshot(base)).toEqual(before);
  });

  it.each(catalogLayouts)('$name: catalog import refuses it the same way', async (layout) => {
    const base = await catalogWithOutside();
    const named = await layout.build(base);
    const before = await treeSnapshot(base);
    const r = await bosun(base, 'catalog', 'import', join(repo, 'bundles/bosun-sample'), 'cat', '--replace');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: ${named}: is a symbolic link (to `);
    expect(await treeSnapshot(base)).toEqual(before);
  });

  it.each(catalogLayouts.filter((l) => l.loaderSees))(
    '$name: catalog validate refuses to read through it',
    async (layout) => {
      const base = await catalogWithOutside();
      const named = await layout.build(base);
      const r = await bosun(base, 'catalog', 'validate', 'cat');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: ${named}: is a symbolic link (to `);
      expect(r.stderr).toContain('a catalog is read without following links');
    },
  );

  it('a link the loader never reads (README.md) is passed over, as before', async () => {
    const base = await catalogWithOutside();
    await writeFile(join(base, 'outside/README.md'), 'hello\n');
    await symlink(join(base, 'outside/README.md'), join(base, 'cat/README.md'));
    const r = await bosun(base, 'catalog', 'validate', 'cat');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('the catalog folder itself may be a link: the user named it', async () => {
    const base = await catalogWithOutside();
    await symlink('cat', join(base, 'catalog-link'));
    const before = await treeSnapshot(base);
    const r = await bosun(base, 'catalog', 'publish', 'catalog-link', sampleBundle, '--replace');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = await treeSnapshot(base);
    expect(after['catalog-link']).toBe('link -> cat');
    expect(after['cat/bosun-sample']).toBe('folder');
    // Republished in place: the same bytes, and nothing else written anywhere.
    expect(after).toEqual(before);
  });
});

/** A work folder with a copy of the sample bundle at `bundle/` and room beside it at `outside/`. */
async function bundleWithOutside(): Promise<string> {
  const base = await catalogWithOutside();
  await cp(sampleBundle, join(base, 'bundle'), { recursive: true });
  return base;
}

const bundleLayouts: Layout[] = [
  {
    name: 'manifests/ linked to a folder outside the bundle',
    loaderSees: true,
    build: async (base) => {
      await rename(join(base, 'bundle/manifests'), join(base, 'outside/manifests'));
      await symlink(join(base, 'outside/manifests'), join(base, 'bundle/manifests'));
      return 'bundle/manifests';
    },
  },
  {
    name: 'metadata/ linked to a folder outside the bundle',
    loaderSees: true,
    build: async (base) => {
      await rename(join(base, 'bundle/metadata'), join(base, 'outside/metadata'));
      await symlink(join(base, 'outside/metadata'), join(base, 'bundle/metadata'));
      return 'bundle/metadata';
    },
  },
  {
    name: 'manifests/ linked to a folder inside the bundle',
    loaderSees: true,
    build: async (base) => {
      await rename(join(base, 'bundle/manifests'), join(base, 'bundle/real'));
      await symlink('real', join(base, 'bundle/manifests'));
      return 'bundle/manifests';
    },
  },
  {
    name: 'manifests/ linked to a folder inside the bundle that links on out of it (nested)',
    loaderSees: true,
    build: async (base) => {
      await rename(join(base, 'bundle/manifests'), join(base, 'outside/manifests'));
      await symlink(join(base, 'outside/manifests'), join(base, 'bundle/inner'));
      await symlink('inner', join(base, 'bundle/manifests'));
      return 'bundle/manifests';
    },
  },
  {
    name: 'a manifest linked to a file outside the bundle',
    loaderSees: true,
    build: async (base) => {
      const csv = 'bosun-sample.clusterserviceversion.yaml';
      await rename(join(base, 'bundle/manifests', csv), join(base, 'outside', csv));
      await symlink(join(base, 'outside', csv), join(base, 'bundle/manifests', csv));
      return `bundle/manifests/${csv}`;
    },
  },
  {
    name: 'a manifest linked to a sibling file in manifests/',
    loaderSees: true,
    build: async (base) => {
      const crd = 'widgets.sample.bosun.dev.crd.yaml';
      await rename(join(base, 'bundle/manifests', crd), join(base, 'bundle/manifests/crd.txt'));
      await symlink('crd.txt', join(base, 'bundle/manifests', crd));
      return `bundle/manifests/${crd}`;
    },
  },
  {
    name: 'a dangling link in manifests/',
    loaderSees: true,
    build: async (base) => {
      await symlink(join(base, 'outside/nothing.yaml'), join(base, 'bundle/manifests/extra.yaml'));
      return 'bundle/manifests/extra.yaml';
    },
  },
];

describe('a bundle is read without following links below it', () => {
  it.each(bundleLayouts)('$name: bundle validate refuses it by name', async (layout) => {
    const base = await bundleWithOutside();
    const named = await layout.build(base);
    const r = await bosun(base, 'bundle', 'validate', 'bundle');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: ${named}: is a symbolic link (to `);
    expect(r.stderr).toContain('invalid bundle bundle');
  });

  it.each(bundleLayouts)('$name: catalog publish refuses it, the catalog unchanged', async (layout) => {
    const base = await bundleWithOutside();
    const named = await layout.build(base);
    const before = await treeSnapshot(base);
    const r = await bosun(base, 'catalog', 'publish', 'cat', 'bundle', '--replace');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: ${named}: is a symbolic link (to `);
    expect(await treeSnapshot(base)).toEqual(before);
  });

  it('manifests/ linked out: bundle pack writes no archive', async () => {
    const base = await bundleWithOutside();
    await bundleLayouts[0]!.build(base);
    const r = await bosun(base, 'bundle', 'pack', 'bundle', '-o', 'b.tar.gz');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: bundle/manifests: is a symbolic link (to ');
    expect((await treeSnapshot(base))['b.tar.gz']).toBeUndefined();
  });

  it('the bundle folder itself may be a link: the user named it', async () => {
    const base = await bundleWithOutside();
    await symlink('bundle', join(base, 'bundle-link'));
    const validate = await bosun(base, 'bundle', 'validate', 'bundle-link');
    expect(validate.stdout).toMatch(/^valid bundle bundle-link/);
    expect(validate.code).toBe(0);
    const publish = await bosun(base, 'catalog', 'publish', 'cat', 'bundle-link', '--replace');
    expect(publish.stderr).toBe('');
    expect(publish.code).toBe(0);
  });
});

// Real bundles: the first few bundle-layout folders of the OperatorHub 2021 corpus.
const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus) {
  console.warn(
    'skipping the link tests on corpus bundles: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
  );
}

/** `<package>/<version>` of the first `n` corpus bundles that have manifests/ and metadata/. */
async function corpusBundles(n: number): Promise<string[]> {
  const out: string[] = [];
  for (const pkg of (await readdir(corpus!)).sort()) {
    for (const version of (await readdir(join(corpus!, pkg)).catch(() => [])).sort()) {
      const inner = await readdir(join(corpus!, pkg, version)).catch(() => [] as string[]);
      if (inner.includes('manifests') && inner.includes('metadata')) out.push(`${pkg}/${version}`);
      if (out.length === n) return out;
    }
  }
  return out;
}

describe.skipIf(!haveCorpus)('links in real bundles of the OperatorHub corpus (BOSUN_CORPUS_DIR)', () => {
  it('manifests/ linked out is refused for each; the same bundle named through a link reads as itself', async () => {
    const bundles = await corpusBundles(3);
    expect(bundles).toHaveLength(3);
    for (const b of bundles) {
      const base = await workdir();
      await cp(join(corpus!, b), join(base, 'bundle'), { recursive: true });
      await symlink('bundle', join(base, 'bundle-link'));
      const direct = await bosun(base, 'bundle', 'validate', 'bundle', '-o', 'json');
      const linked = await bosun(base, 'bundle', 'validate', 'bundle-link', '-o', 'json');
      expect(linked.stdout.replaceAll('bundle-link/', 'bundle/'), b).toBe(direct.stdout);

      await mkdir(join(base, 'outside'));
      await rename(join(base, 'bundle/manifests'), join(base, 'outside/manifests'));
      await symlink(join(base, 'outside/manifests'), join(base, 'bundle/manifests'));
      const refused = await bosun(base, 'bundle', 'validate', 'bundle');
      expect(refused.code, b).toBe(1);
      expect(refused.stderr, b).toContain('error: bundle/manifests: is a symbolic link (to ');
    }
  });
});
