import { cp, open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { bosun, fixtures, json, repo, workdir } from './run-bosun.js';

describe('bosun bundle validate', () => {
  it('accepts the sample bundles with nothing to say', async () => {
    const dir = await workdir('bundles');
    for (const b of ['bosun-sample/0.1.0', 'bosun-sample/0.2.1', 'bosun-sample-dashboard/0.2.0']) {
      const r = await bosun(dir, 'bundle', 'validate', `bundles/${b}`);
      expect(r).toEqual({
        code: 0,
        stdout: `valid bundle bundles/${b} (package ${b.split('/')[0]})\n`,
        stderr: '',
      });
    }
  });

  it('prints the result object with --output json', async () => {
    const dir = await workdir('test/fixtures/bad');
    const r = await bosun(dir, 'bundle', 'validate', 'bad/non-semver-version', '--output', 'json');
    expect(r.code).toBe(1);
    expect(json(r)).toEqual({
      ok: false,
      packages: 1,
      bundles: 1,
      errors: [
        {
          file: 'bad/non-semver-version/manifests/gizmo.csv.yaml',
          object: 'ClusterServiceVersion/gizmo.v1.0.0',
          field: 'spec.version',
          message: '"v1.0" is not a semver version (like 1.2.3 or 1.2.3-rc.1)',
        },
      ],
      warnings: [],
    });
  });

  it.each([
    ['bad/csv-without-version', 'spec.version: is required'],
    ['bad/two-csvs', 'the bundle has 2 ClusterServiceVersions'],
    [
      'bad/tar-dotdot.tar.gz',
      'bad/tar-dotdot.tar.gz:manifests/../../evil.yaml: entry path leaves the archive root',
    ],
    [
      'bad/tar-absolute-path.tar.gz',
      'bad/tar-absolute-path.tar.gz:/tmp/evil.yaml: entry path is an absolute path',
    ],
    ['bad/tar-symlink.tar.gz', 'symlink to "/etc/passwd" is not allowed'],
    ['bad/tar-bomb.tar.gz', 'manifests/huge.yaml: is 65.0 MiB, past the limit of 16.0 MiB for one file'],
  ])('refuses %s with a clear error', async (path, message) => {
    const dir = await workdir('test/fixtures/bad');
    const r = await bosun(dir, 'bundle', 'validate', path);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: ${path.endsWith('.gz') ? '' : path}`);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });
});

describe('huge input', () => {
  const GiB = 2 ** 30;
  /** A sparse file: its size is 1 GiB, but it takes no disk and reading it would take 1 GiB. */
  async function sparse(path: string): Promise<void> {
    const h = await open(path, 'w');
    await h.truncate(GiB);
    await h.close();
  }

  it('a 1 GiB manifest file is refused by its size, naming it, before anything is read', async () => {
    const dir = await workdir();
    const bundle = join(dir, 'b');
    await cp(join(fixtures, 'bundles/minimal'), bundle, { recursive: true });
    await sparse(join(bundle, 'manifests/huge.yaml'));
    const before = process.memoryUsage().rss;
    const r = await bosun(dir, 'bundle', 'validate', 'b');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'b/manifests/huge.yaml: is 1024.0 MiB, past the limit of 16.0 MiB for one file of a bundle (BOSUN_BUNDLE_MAX_FILE_MIB raises it)',
    );
    expect(r.stderr).not.toContain('unexpected error');
    // Nothing of the file was held: far below its size (the test's own process).
    expect(process.memoryUsage().rss - before).toBeLessThan(GiB / 4);
  });

  it('a 1 GiB archive is refused by its size, unopened', async () => {
    const dir = await workdir();
    await sparse(join(dir, 'b.tar.gz'));
    const r = await bosun(dir, 'bundle', 'validate', 'b.tar.gz');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'b.tar.gz: the archive is already past the limit of 64.0 MiB for a whole bundle',
    );
  });

  it('the limits are overridable, and a bad value is a usage error', async () => {
    const dir = await workdir('test/fixtures/bundles/minimal');
    vi.stubEnv('BOSUN_BUNDLE_MAX_FILE_MIB', '0.0005');
    const small = await bosun(dir, 'bundle', 'validate', 'minimal');
    expect(small.code).toBe(1);
    expect(small.stderr).toContain('past the limit of 0.00 MiB for one file');
    vi.stubEnv('BOSUN_BUNDLE_MAX_FILE_MIB', undefined);
    vi.stubEnv('BOSUN_BUNDLE_MAX_MIB', 'lots');
    const bad = await bosun(dir, 'bundle', 'validate', 'minimal');
    vi.unstubAllEnvs();
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('BOSUN_BUNDLE_MAX_MIB: "lots" is not a positive number of MiB');
  });
});

describe('bosun bundle pack', () => {
  it('writes the same archive and digest every time, and the archive validates', async () => {
    const dir = await workdir('bundles');
    const a = await bosun(dir, 'bundle', 'pack', 'bundles/bosun-sample/0.2.1', '-o', 'a.tar.gz');
    const b = await bosun(
      dir,
      'bundle',
      'pack',
      'bundles/bosun-sample/0.2.1',
      '-o',
      'b.tar.gz',
      '--output',
      'json',
    );
    expect(a.code).toBe(0);
    const digest = json(b).digest as string;
    expect(a.stdout).toBe(`a.tar.gz ${digest}\n`);
    expect(json(b)).toMatchObject({
      ok: true,
      archive: 'b.tar.gz',
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(await readFile(join(dir, 'a.tar.gz'))).toEqual(await readFile(join(dir, 'b.tar.gz')));
    expect((await bosun(dir, 'bundle', 'validate', 'a.tar.gz')).code).toBe(0);
  });

  it('does not pack an invalid bundle, and writes nothing', async () => {
    const dir = await workdir('test/fixtures/bad');
    const r = await bosun(dir, 'bundle', 'pack', 'bad/two-csvs', '-o', 'out.tar.gz');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('not packed');
    await expect(stat(join(dir, 'out.tar.gz'))).rejects.toThrow();
  });

  it('needs -o', async () => {
    const r = await bosun(repo, 'bundle', 'pack', join(fixtures, 'bundles/minimal'));
    expect(r).toMatchObject({ code: 2, stderr: 'error: bundle pack: -o <file.tar.gz> is required\n' });
  });
});

describe('bosun bundle build', () => {
  it('builds a valid bundle into an OCI layout, and refuses an invalid one with its errors and nothing written', async () => {
    const dir = await workdir('bundles/bosun-sample', 'test/fixtures/bad');
    const good = await bosun(dir, 'bundle', 'build', 'bosun-sample/0.1.0', '--oci-layout', 'good');
    expect(good.code).toBe(0);
    expect(good.stdout).toMatch(
      /^built bundle bosun-sample\/0\.1\.0 \(package bosun-sample\) as sha256:[0-9a-f]{64}: written to good:latest\n$/,
    );
    expect((await stat(join(dir, 'good', 'index.json'))).isFile()).toBe(true);

    for (const [path, message] of [
      ['bad/csv-without-version', 'spec.version: is required'],
      ['bad/two-csvs', 'the bundle has 2 ClusterServiceVersions'],
    ]) {
      const r = await bosun(dir, 'bundle', 'build', path!, '--oci-layout', 'out');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stdout + r.stderr).toMatch(
        new RegExp(`not built: ${RegExp.escape(path!)} is not a valid bundle \\(\\d+ errors?`),
      );
      await expect(stat(join(dir, 'out'))).rejects.toThrow(/ENOENT/);
    }
  });
});
