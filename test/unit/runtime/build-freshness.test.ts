/**
 * The integration run starts bosun processes from dist/ and builds it again first when it does not
 * hold the sources' build (test/support/bosun-build.ts): a stale dist/ would test old code.
 */
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { staleBuild } from '../../support/bosun-build.js';
import { tempDir } from '../../support/temp-dir.js';

/** A repository whose every file was written at `at` (seconds), as a build leaves it. */
async function built(files: Record<string, number>): Promise<string> {
  const root = await tempDir('bosun-build-');
  const all = {
    'tsconfig.json': 100,
    'tsconfig.build.json': 100,
    'package.json': 100,
    'src/cli/main.ts': 100,
    'src/web/client/app.ts': 100,
    'src/web/client/style.css': 100,
    'src/web/client/tsconfig.json': 100,
    'src/apis/crds/generate.ts': 100,
    'src/apis/types.d.ts': 100,
    'dist/cli/main.js': 200,
    'dist/web/client/app.js': 200,
    'dist/web/client/style.css': 200,
    'dist/apis/crds/compiled/catalog-abc.js': 300,
    ...files,
  };
  for (const [path, at] of Object.entries(all)) {
    const file = join(root, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, '');
    await utimes(file, at, at);
  }
  return root;
}

describe('staleBuild', () => {
  it.each([
    ['a build newer than every source', {}, undefined],
    // Sources without output in dist/ (left out of the build, declarations, the client's own
    // tsconfig) never make it stale.
    [
      'a newer source the build leaves out',
      { 'src/apis/crds/generate.ts': 900, 'src/apis/types.d.ts': 900, 'src/web/client/tsconfig.json': 900 },
      undefined,
    ],
    [
      'a source edited after the build',
      { 'src/cli/main.ts': 250 },
      'src/cli/main.ts is newer than dist/cli/main.js',
    ],
    [
      'a page file edited after the build',
      { 'src/web/client/style.css': 250 },
      'src/web/client/style.css is newer than dist/web/client/style.css',
    ],
    ['a new source never built', { 'src/cli/new.ts': 100 }, 'dist/cli/new.js is missing'],
    [
      'schema checkers older than a source tsc compiled since',
      { 'src/cli/main.ts': 350, 'dist/cli/main.js': 360 },
      'dist/apis/crds/compiled is older than the sources',
    ],
    [
      'a build configuration changed after the build',
      { 'tsconfig.build.json': 350 },
      'dist/apis/crds/compiled is older than the sources',
    ],
  ])('%s', async (_, files, why) => {
    expect(staleBuild(await built(files))).toBe(why);
  });

  it('a build without its schema checkers is stale', async () => {
    const root = await built({});
    await rm(join(root, 'dist/apis/crds/compiled'), { recursive: true });
    expect(staleBuild(root)).toBe('dist/apis/crds/compiled has no schema checkers');
  });

  it('no build at all is stale', async () => {
    const root = await built({});
    await rm(join(root, 'dist'), { recursive: true });
    expect(staleBuild(root)).toBe('dist/cli/main.js is missing');
  });
});
