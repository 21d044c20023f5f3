/**
 * Images Bosun did not build: a bundle image and a catalog image made with crane v0.22.1
 * (go-containerregistry) alone, from a tar of the folder (`crane append`) and the labels OLM
 * reads (`crane mutate --label`), in Docker's media types and in OCI's. Bosun reads them unchanged:
 * bundle pull writes the bundle's files, catalog render prints what it prints of the folder,
 * catalog publish pins the digest crane reports.
 */
import { cp, mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { craneBinary, craneImage as buildWithCrane, runWithoutInput as run } from '../../support/crane.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { tempDir } from '../../support/temp-dir.js';
import { repo, runBosun, type Run } from '../../unit/cli/run-bosun.js';

const missing = await registryAvailable();
const crane = await craneBinary();
const why = missing ?? (crane.ok ? undefined : crane.why);
if (why) console.warn(`crane interoperability tests skipped: ${why}`);

const BundlePackageLabel = 'operators.operatorframework.io.bundle.package.v1';
const ConfigsLabel = 'operators.operatorframework.io.index.configs.v1';

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile())
      out.set(relative(dir, join(e.parentPath, e.name)), await readFile(join(e.parentPath, e.name), 'utf8'));
  return new Map([...out].sort());
}

const bosun = (cwd: string, ...args: string[]): Promise<Run> =>
  runBosun(args, { cwd, env: { ...process.env, DOCKER_CONFIG: join(cwd, 'no-docker-config') } });

describe.skipIf(why !== undefined)('bundle and catalog images built with crane alone', () => {
  let registry: TestRegistry;
  let work: string;
  const craneRun = async (...args: string[]) => {
    if (!crane.ok) throw new Error('unreachable');
    const r = await run(crane.path, args, work, { DOCKER_CONFIG: join(work, 'no-docker-config') });
    expect(r.code, r.out).toBe(0);
    return r.stdout.trim();
  };
  const craneImage = (
    ref: string,
    dir: string,
    names: string[],
    labels: Record<string, string>,
    oci: boolean,
  ) => {
    if (!crane.ok) throw new Error('unreachable');
    return buildWithCrane(crane.path, work, { ref, dir, names, labels, oci });
  };

  beforeAll(async () => {
    registry = await startRegistry({ kind: 'plain' });
    work = await tempDir('bosun-crane-');
  });

  for (const oci of [false, true]) {
    const kind = oci ? 'OCI' : 'Docker';
    it(`a bundle image of ${kind} media types is pulled, rendered and published as built`, async () => {
      const bundle = join(repo, 'bundles/bosun-sample/0.2.1');
      const annotations = (await readFile(join(bundle, 'metadata/annotations.yaml'), 'utf8'))
        .split('\n')
        .map((l) => /^\s+(\S+):\s*(\S+)\s*$/.exec(l))
        .filter((m) => m !== null)
        .map((m) => [m[1]!, m[2]!.replace(/^["']|["']$/g, '')] as const);
      expect(Object.fromEntries(annotations)[BundlePackageLabel]).toBe('bosun-sample');
      const ref = `${registry.host}/crane/${kind.toLowerCase()}-bundle:0.2.1`;
      const digest = await craneImage(
        ref,
        bundle,
        ['manifests', 'metadata'],
        Object.fromEntries(annotations),
        oci,
      );

      const dest = join(work, `${kind}-pulled`);
      const pulled = await bosun(work, 'bundle', 'pull', ref, dest);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(await filesUnder(dest)).toEqual(await filesUnder(bundle));

      const rendered = await bosun(work, 'catalog', 'render', ref, '-o', 'json');
      expect(rendered.code, rendered.stderr).toBe(0);
      expect(JSON.parse(rendered.stdout)).toMatchObject({
        schema: 'olm.bundle',
        image: ref,
        name: 'bosun-sample.v0.2.1',
      });

      const catalog = join(work, `${kind}-catalog`);
      const published = await bosun(work, 'catalog', 'publish', catalog, ref);
      expect(published.code, published.stderr).toBe(0);
      const written = await readFile(join(catalog, 'bosun-sample/catalog.yaml'), 'utf8');
      expect(written).toContain(`image: ${registry.host}/crane/${kind.toLowerCase()}-bundle@${digest}`);
    });

    it(`a catalog image of ${kind} media types renders as its folder does`, async () => {
      const root = join(work, `${kind}-catalog-root`);
      await mkdir(root);
      await cp(join(repo, 'catalogs/bosun-samples'), join(root, 'configs'), { recursive: true });
      const ref = `${registry.host}/crane/${kind.toLowerCase()}-catalog:v1`;
      await craneImage(ref, root, ['configs'], { [ConfigsLabel]: '/configs' }, oci);
      const fromImage = await bosun(work, 'catalog', 'render', ref, '-o', 'json');
      expect(fromImage.code, fromImage.stderr).toBe(0);
      const fromDir = await bosun(repo, 'catalog', 'render', 'catalogs/bosun-samples', '-o', 'json');
      expect(fromImage.stdout).toBe(fromDir.stdout);
      const dest = join(work, `${kind}-catalog-pulled`);
      const pulled = await bosun(work, 'catalog', 'pull', ref, dest);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(await filesUnder(dest)).toEqual(await filesUnder(join(repo, 'catalogs/bosun-samples')));
    });
  }

  it('an OCI layout crane writes, whose image has no tag, is pushed by bundle push as the same digest', async () => {
    const ref = `${registry.host}/crane/layout-source:v1`;
    const built = await bosun(
      repo,
      'bundle',
      'build',
      'bundles/bosun-sample/0.1.0',
      '-t',
      ref,
      '--output',
      'json',
    );
    expect(built.code, built.stderr).toBe(0);
    const digest = (JSON.parse(built.stdout) as { digest: string }).digest;
    const layout = join(work, 'crane-layout');
    await craneRun('pull', '--format', 'oci', ref, layout);
    for (const [source, target] of [
      [layout, 'by-default'],
      [`${layout}@${digest}`, 'by-digest'],
    ] as const) {
      const pushed = await bosun(work, 'bundle', 'push', source, `${registry.host}/crane/${target}:v1`);
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(pushed.stdout).toContain(`${registry.host}/crane/${target}:v1@${digest}`);
    }
    const wrong = await bosun(work, 'catalog', 'push', layout, `${registry.host}/crane/wrong:v1`);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/is a registry\+v1 bundle image/);
  });
});
