/**
 * The image commands end to end against a real registry (Debian's docker-registry on 127.0.0.1),
 * run as `bosun ...` in-process: the sample bundles and the sample catalog built, pushed and pulled
 * back byte for byte, through an OCI layout too; `catalog render <image>` against `opm render` of
 * the same folder; `catalog publish <bundle image>` pinning the digest; and each way a command
 * can be given the wrong image, named with the image and the cause, with nothing written.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCatalogFiles } from '../../../src/catalog/image.js';
import { buildImage, pushImage } from '../../../src/oci/build.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { parseReference } from '../../../src/oci/reference.js';
import type { GoProgram } from '../../support/go-tool.js';
import { opmBinary, run } from '../../support/opm.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { gzipLayer, imageOf, type TarEntry } from '../../support/oci-images.js';
import { tempDir } from '../../support/temp-dir.js';
import { json, repo, runBosun, type Run } from '../../unit/cli/run-bosun.js';

const missing = await registryAvailable();
if (missing) console.warn(`image command tests skipped: ${missing}`);

const sampleCatalog = join(repo, 'catalogs/bosun-samples');

/** Every file below `dir`, by relative path. */
async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) {
      const path = join(e.parentPath, e.name);
      out.set(relative(dir, path), await readFile(path, 'utf8'));
    }
  return new Map([...out].sort());
}

/** The sample bundles: `bundles/<package>/<version>`. */
async function sampleBundles(): Promise<string[]> {
  const out: string[] = [];
  for (const pkg of await readdir(join(repo, 'bundles'), { withFileTypes: true }))
    if (pkg.isDirectory())
      for (const v of await readdir(join(repo, 'bundles', pkg.name))) out.push(`bundles/${pkg.name}/${v}`);
  return out.sort();
}

async function dockerConfig(host: string, username: string, password: string): Promise<string> {
  const dir = await tempDir('bosun-docker-config-');
  const auth = Buffer.from(`${username}:${password}`).toString('base64');
  await writeFile(join(dir, 'config.json'), JSON.stringify({ auths: { [host]: { auth } } }));
  return dir;
}

const bosun = (cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> =>
  runBosun(args, { cwd, env: { ...process.env, DOCKER_CONFIG: join(cwd, 'no-docker-config'), ...env } });

/** The command failed as a user error and wrote `dest` nowhere. */
function refused(r: Run, ...parts: (string | RegExp)[]) {
  expect(r.code, r.stdout + r.stderr).not.toBe(0);
  expect(r.stderr).not.toMatch(/unexpected error/);
  for (const p of parts) expect(r.stderr).toMatch(p);
}

describe.skipIf(missing !== undefined)('bundle and catalog images through a registry', () => {
  let registry: TestRegistry;
  let work: string;
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'plain' });
    work = await tempDir('bosun-image-commands-');
  });

  it('every sample bundle is built, pushed and pulled back byte for byte, and builds again to the same digest', async () => {
    const bundles = await sampleBundles();
    expect(bundles.length).toBeGreaterThanOrEqual(4);
    for (const [i, dir] of bundles.entries()) {
      const ref = `${registry.host}/bundles/${dir.split('/')[1]}:${dir.split('/')[2]}`;
      const built = await bosun(repo, ['bundle', 'build', dir, '-t', ref, '--output', 'json']);
      expect(built.code, built.stderr).toBe(0);
      const { digest, pushed } = json(built);
      expect(pushed).toBe(`${ref}@${digest}`);
      const again = await bosun(repo, ['bundle', 'build', dir, '-t', ref, '--output', 'json']);
      expect(json(again).digest).toBe(digest);

      const dest = join(work, `bundle-${i}`);
      const pulled = await bosun(work, ['bundle', 'pull', ref, dest]);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stdout).toContain(`${ref.slice(0, ref.lastIndexOf(':'))}@${digest}`);
      expect(await filesUnder(dest)).toEqual(await filesUnder(join(repo, dir)));
    }
  });

  it('the sample catalog is built, pushed and pulled back as the files it is loaded from', async () => {
    const ref = `${registry.host}/catalogs/samples:v1`;
    const built = await bosun(repo, [
      'catalog',
      'build',
      'catalogs/bosun-samples',
      '-t',
      ref,
      '--output',
      'json',
    ]);
    expect(built.code, built.stderr).toBe(0);
    expect(json(built)).toMatchObject({ ok: true, packages: 2 });
    const dest = join(work, 'catalog');
    const pulled = await bosun(work, ['catalog', 'pull', ref, dest]);
    expect(pulled.code, pulled.stderr).toBe(0);
    const files = await readCatalogFiles(sampleCatalog);
    if (!files.ok) throw new Error(JSON.stringify(files.errors));
    expect(await filesUnder(dest)).toEqual(
      new Map([...files.value].map(([p, d]) => [p, d.toString('utf8')] as const).sort()),
    );
  });

  it('an image written to an OCI layout and pushed from it has the digest of the same image built and pushed', async () => {
    const layout = join(work, 'layout');
    for (const [kind, dir] of [
      ['catalog', 'catalogs/bosun-samples'],
      ['bundle', 'bundles/bosun-sample/0.2.1'],
    ] as const) {
      const built = await bosun(repo, [
        kind,
        'build',
        dir,
        '--oci-layout',
        `${layout}:${kind}`,
        '--output',
        'json',
      ]);
      expect(built.code, built.stderr).toBe(0);
      expect(existsSync(join(layout, 'oci-layout'))).toBe(true);
      const ref = `${registry.host}/layout/${kind}:v1`;
      const pushed = await bosun(work, [kind, 'push', `${layout}:${kind}`, ref, '--output', 'json']);
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(json(pushed).digest).toBe(json(built).digest);
      const direct = await bosun(repo, [
        kind,
        'build',
        dir,
        '-t',
        `${registry.host}/direct/${kind}:v1`,
        '--output',
        'json',
      ]);
      expect(json(direct).digest).toBe(json(built).digest);
    }
    const dest = join(work, 'from-layout');
    const pulled = await bosun(work, ['bundle', 'pull', `${registry.host}/layout/bundle:v1`, dest]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(await filesUnder(dest)).toEqual(await filesUnder(join(repo, 'bundles/bosun-sample/0.2.1')));
    // A layout's catalog image is not pushed as a bundle image, nor the reverse.
    refused(
      await bosun(work, ['bundle', 'push', `${layout}:catalog`, `${registry.host}/layout/wrong:v1`]),
      /layout:catalog: is a file-based catalog image/,
    );
    refused(
      await bosun(work, ['catalog', 'push', `${layout}:bundle`, `${registry.host}/layout/wrong:v1`]),
      /is a registry\+v1 bundle image .* not a file-based catalog image/,
    );
  });

  it('a layout is never written into a folder that is not one', async () => {
    const r = await bosun(repo, [
      'catalog',
      'build',
      'catalogs/bosun-samples',
      '--oci-layout',
      join(repo, 'bundles'),
    ]);
    refused(r, /is a folder that is not an OCI image layout/);
    expect(existsSync(join(repo, 'bundles/oci-layout'))).toBe(false);
  });

  it('`catalog render <catalog image>` prints what opm render prints of the same folder, byte for byte', async (t) => {
    const opm: GoProgram = await opmBinary();
    if (!opm.ok) return t.skip(opm.why);
    const ref = `${registry.host}/catalogs/render:v1`;
    expect((await bosun(repo, ['catalog', 'build', 'catalogs/bosun-samples', '-t', ref])).code).toBe(0);
    const ours = await bosun(work, ['catalog', 'render', ref, '-o', 'json']);
    expect(ours.code, ours.stderr).toBe(0);
    const theirs = await run(opm.path, ['render', sampleCatalog, '-o', 'json'], work);
    expect(theirs.code, theirs.out).toBe(0);
    expect(ours.stdout).toBe(theirs.stdout);
  });

  it('`catalog render <bundle image>` renders the bundle with the image as given, as opm does', async () => {
    const ref = `${registry.host}/render/bundle:v1`;
    expect((await bosun(repo, ['bundle', 'build', 'bundles/bosun-sample/0.1.0', '-t', ref])).code).toBe(0);
    const r = await bosun(work, ['catalog', 'render', ref, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { schema: string; image: string; name: string };
    expect(doc).toMatchObject({ schema: 'olm.bundle', image: ref, name: 'bosun-sample.v0.1.0' });
  });

  it('`catalog publish <bundle image>` writes the bundle with its image pinned to the digest it was pulled by', async () => {
    const ref = `${registry.host}/publish/sample:0.1.0`;
    const built = await bosun(repo, [
      'bundle',
      'build',
      'bundles/bosun-sample/0.1.0',
      '-t',
      ref,
      '--output',
      'json',
    ]);
    const pinned = `${registry.host}/publish/sample@${json(built).digest}`;
    const catalog = join(work, 'published');
    const r = await bosun(work, ['catalog', 'publish', catalog, ref]);
    expect(r.code, r.stderr).toBe(0);
    const rendered = await bosun(work, ['catalog', 'render', catalog, '-o', 'json']);
    const bundles = rendered.stdout
      .split(/\n(?=\{)/)
      .map((d) => JSON.parse(d) as { schema: string; image?: string; relatedImages?: { image: string }[] })
      .filter((d) => d.schema === 'olm.bundle');
    expect(bundles.map((b) => b.image)).toEqual([pinned]);
    expect(bundles[0]!.relatedImages?.map((i) => i.image)).toContain(pinned);
    refused(
      await bosun(work, ['catalog', 'publish', catalog, ref, '--image-ref-template', 'x/{{.Package}}']),
      /--image-ref-template: a bundle image is published as its own image/,
    );
  });

  describe('failures name the image and the cause, and write nothing', () => {
    it('an unknown tag', async () => {
      const ref = `${registry.host}/bundles/bosun-sample:9.9.9`;
      const dest = join(work, 'unknown-tag');
      refused(await bosun(work, ['bundle', 'pull', ref, dest]), ref, /no such thing \(404\)/);
      refused(await bosun(work, ['catalog', 'pull', ref, dest]), ref, /404/);
      refused(await bosun(work, ['catalog', 'render', ref]), ref, /404/);
      refused(await bosun(work, ['catalog', 'publish', join(work, 'nothing'), ref]), ref, /404/);
      expect(existsSync(dest)).toBe(false);
      expect(existsSync(join(work, 'nothing'))).toBe(false);
    });

    it('a catalog image given to bundle pull, and a bundle image given to catalog pull', async () => {
      const catalogRef = `${registry.host}/catalogs/samples:v1`;
      const bundleRef = `${registry.host}/bundles/bosun-sample:0.1.0`;
      const dest = join(work, 'wrong-kind');
      refused(
        await bosun(work, ['bundle', 'pull', catalogRef, dest]),
        `${registry.host}/catalogs/samples`,
        /is a file-based catalog image \(label operators.operatorframework.io.index.configs.v1=\/configs\), not a registry\+v1 bundle image/,
      );
      refused(
        await bosun(work, ['catalog', 'publish', join(work, 'wrong-kind-catalog'), catalogRef]),
        /not a registry\+v1 bundle image/,
      );
      refused(
        await bosun(work, ['catalog', 'pull', bundleRef, dest]),
        `${registry.host}/bundles/bosun-sample`,
        /is a registry\+v1 bundle image .*not a file-based catalog image/,
      );
      expect(existsSync(dest)).toBe(false);
      expect(existsSync(join(work, 'wrong-kind-catalog'))).toBe(false);
    });

    it('a catalog image without the configs label, and one whose label names a folder it lacks or leads out of it', async () => {
      const client = new RegistryClient();
      const files = new Map([['configs/p/catalog.json', Buffer.from('{"schema":"olm.package","name":"p"}')]]);
      const push = (repo: string, labels: Record<string, string>) =>
        pushImage(
          client,
          parseReference(`${registry.host}/${repo}:v1`),
          buildImage({ files, labels, createdBy: 'test' }),
        );
      await push('nolabel/catalog', { 'org.opencontainers.image.title': 'a catalog' });
      await push('elsewhere/catalog', { 'operators.operatorframework.io.index.configs.v1': '/srv/catalog' });
      await push('escape/catalog', {
        'operators.operatorframework.io.index.configs.v1': '/configs/../../etc',
      });
      await client.close();
      const dest = join(work, 'no-label');
      refused(
        await bosun(work, ['catalog', 'pull', `${registry.host}/nolabel/catalog:v1`, dest]),
        `${registry.host}/nolabel/catalog`,
        /is not a file-based catalog image: its config has no label operators.operatorframework.io.index.configs.v1 \(its labels are org.opencontainers.image.title=a catalog\)/,
      );
      refused(
        await bosun(work, ['catalog', 'render', `${registry.host}/nolabel/catalog:v1`]),
        /is neither a file-based catalog image .* nor a registry\+v1 bundle image/,
      );
      refused(
        await bosun(work, ['catalog', 'pull', `${registry.host}/elsewhere/catalog:v1`, dest]),
        /has no folder \/srv\/catalog, which its label operators.operatorframework.io.index.configs.v1 names/,
      );
      refused(
        await bosun(work, ['catalog', 'render', `${registry.host}/escape/catalog:v1`]),
        /label operators.operatorframework.io.index.configs.v1="\/configs\/..\/..\/etc" does not name a folder inside the image/,
      );
      expect(existsSync(dest)).toBe(false);
      expect((await readdir(work)).filter((f) => f.endsWith('.partial'))).toEqual([]);
    });

    it('a label written to deceive the terminal is shown inert, on the one line of the error', async () => {
      const client = new RegistryClient();
      const files = new Map([['manifests/x.yaml', Buffer.from('{}')]]);
      await pushImage(
        client,
        parseReference(`${registry.host}/hostile/bundle:v1`),
        buildImage({
          files,
          labels: {
            'operators.operatorframework.io.bundle.package.v1':
              'p\nerror: forged\r\x1b[2J\x1b]8;;http://x\x07\u202e',
          },
          createdBy: 'test',
        }),
      );
      await client.close();
      const r = await bosun(work, [
        'catalog',
        'pull',
        `${registry.host}/hostile/bundle:v1`,
        join(work, 'hostile'),
      ]);
      refused(r, /not a file-based catalog image/, /p\\x0aerror: forged\\x0d\\x1b\[2J/);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      // eslint-disable-next-line no-control-regex -- the characters under test
      expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    });

    describe('a hostile layer is refused, naming the image and the entry, with nothing written anywhere', () => {
      const bundleLabels = { 'operators.operatorframework.io.bundle.package.v1': 'p' };
      const catalogLabels = { 'operators.operatorframework.io.index.configs.v1': '/configs' };
      const attacks: [string, (root: string) => TarEntry[], RegExp][] = [
        ['a path climbing out with ..', (r) => [{ path: `${r}/../../escape.yaml`, data: 'x' }], /\.\./],
        ['an absolute path', (r) => [{ path: `/${r}/abs.yaml`, data: 'x' }], /absolute/],
        [
          'a symlink leading out of the image',
          (r) => [{ path: `${r}/link.yaml`, type: 'symlink', linkpath: '/etc/passwd' }],
          /link/,
        ],
        [
          'a file written through a symlink an earlier entry made',
          (r) => [
            { path: `${r}/`, type: 'dir' },
            { path: `${r}/sub`, type: 'symlink', linkpath: '.' },
            { path: `${r}/sub/through.yaml`, data: 'x' },
          ],
          /link/,
        ],
        [
          'a hard link to a file outside',
          (r) => [{ path: `${r}/hard.yaml`, type: 'link', linkpath: '/etc/passwd' }],
          /link/,
        ],
        ['a device file', (r) => [{ path: `${r}/dev`, type: 'char' }], /device|char/],
      ];
      for (const [what, entries, why] of attacks) {
        it(what, async () => {
          const client = new RegistryClient();
          const slug = what.replace(/\W+/g, '-').replace(/-+$/, '');
          const push = async (repository: string, root: string, labels: Record<string, string>) => {
            const layer = gzipLayer(entries(root));
            const image = imageOf([layer], { labels });
            const ref = parseReference(`${registry.host}/${repository}:v1`);
            for (const blob of [image.config, layer])
              await client.pushBlob(ref, { ...blob.descriptor, data: blob.data });
            await client.pushManifest(ref, image.manifest, image.mediaType, 'v1');
            return { ref: `${registry.host}/${repository}:v1` };
          };
          const bundle = await push(`hostile-bundle/${slug}`, 'manifests', bundleLabels);
          const catalog = await push(`hostile-catalog/${slug}`, 'configs', catalogLabels);
          await client.close();
          const dest = join(work, `hostile-${slug}`);
          refused(
            await bosun(work, ['bundle', 'pull', bundle.ref, dest]),
            `${registry.host}/hostile-bundle/${slug}`,
            // The entry; the layer too, when extraction refuses it (a symlink is refused after).
            'manifests/',
            why,
          );
          refused(
            await bosun(work, ['catalog', 'pull', catalog.ref, dest]),
            `${registry.host}/hostile-catalog/${slug}`,
            'configs/',
            why,
          );
          refused(
            await bosun(work, ['catalog', 'render', catalog.ref]),
            `${registry.host}/hostile-catalog/${slug}`,
            'configs/',
            why,
          );
          refused(
            await bosun(work, ['catalog', 'publish', join(work, `hostile-cat-${slug}`), bundle.ref]),
            `${registry.host}/hostile-bundle/${slug}`,
            'manifests/',
            why,
          );
          expect(existsSync(dest)).toBe(false);
          expect(existsSync(join(work, `hostile-cat-${slug}`))).toBe(false);
          expect(existsSync(join(work, 'escape.yaml'))).toBe(false);
          expect((await readdir(work)).filter((f) => f.endsWith('.partial'))).toEqual([]);
        });
      }

      it('a bundle file past the bundle limit, however well it compresses', async () => {
        const client = new RegistryClient();
        const layer = gzipLayer([{ path: 'manifests/bomb.yaml', data: Buffer.alloc(17 * 1024 * 1024) }]);
        const image = imageOf([layer], { labels: bundleLabels });
        const ref = parseReference(`${registry.host}/hostile-bundle/bomb:v1`);
        for (const blob of [image.config, layer])
          await client.pushBlob(ref, { ...blob.descriptor, data: blob.data });
        await client.pushManifest(ref, image.manifest, image.mediaType, 'v1');
        await client.close();
        expect(layer.descriptor.size).toBeLessThan(100_000);
        const dest = join(work, 'hostile-bomb');
        refused(
          await bosun(work, ['bundle', 'pull', `${registry.host}/hostile-bundle/bomb:v1`, dest]),
          layer.descriptor.digest,
          /manifests\/bomb.yaml.*past the limit of 16777216 for one file \(BOSUN_BUNDLE_MAX_FILE_MIB raises it\)/,
        );
        expect(existsSync(dest)).toBe(false);
      });
    });

    it('a path that is neither a folder nor an image is named as a missing path, not looked up in a registry', async () => {
      const r = await bosun(work, ['catalog', 'render', 'catalogs/bosun-sampels']);
      refused(r, /catalogs\/bosun-sampels/);
      expect(r.stderr).not.toMatch(/registry|docker\.io/);
    });
  });
});

describe.skipIf(missing !== undefined)('images in a registry that asks for credentials', () => {
  let registry: TestRegistry;
  let work: string;
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'basic', username: 'alice', password: 's3cret' });
    work = await tempDir('bosun-image-auth-');
  });

  it('push and pull with the credentials of the Docker config; wrong or missing ones are named, with nothing written', async () => {
    const ref = `${registry.host}/team/sample:0.1.0`;
    const good = { DOCKER_CONFIG: await dockerConfig(registry.host, 'alice', 's3cret') };
    const bad = { DOCKER_CONFIG: await dockerConfig(registry.host, 'alice', 'wrong') };
    const built = await bosun(repo, ['bundle', 'build', 'bundles/bosun-sample/0.1.0', '-t', ref], good);
    expect(built.code, built.stderr).toBe(0);
    const dest = join(work, 'pulled');
    const refusedAlice = /the registry refused the credentials of alice \(.*config.json\)/;
    refused(
      await bosun(repo, ['bundle', 'build', 'bundles/bosun-sample/0.1.0', '-t', ref], bad),
      ref,
      refusedAlice,
    );
    for (const [env, why] of [
      [bad, refusedAlice],
      [{}, /the registry asks for credentials and none are configured for 127.0.0.1/],
    ] as const) {
      refused(await bosun(work, ['bundle', 'pull', ref, dest], env), ref, why);
      refused(await bosun(work, ['catalog', 'render', ref], env), ref, why);
      refused(await bosun(work, ['catalog', 'publish', join(work, 'cat'), ref], env), ref, why);
    }
    expect(existsSync(join(work, 'cat'))).toBe(false);
    expect(existsSync(dest)).toBe(false);
    const pulled = await bosun(work, ['bundle', 'pull', ref, dest], good);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(await filesUnder(dest)).toEqual(await filesUnder(join(repo, 'bundles/bosun-sample/0.1.0')));
  });
});

const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus)
  console.warn('corpus catalog image test skipped: set BOSUN_CORPUS_DIR to the OperatorHub corpus');

describe.skipIf(missing !== undefined || !corpus)('the 2021 corpus as one catalog image', () => {
  it('renders from its image byte for byte as from its folder', async () => {
    const registry = await startRegistry({ kind: 'plain' });
    const work = await tempDir('bosun-image-corpus-');
    const dir = join(work, 'catalog');
    const imported = await bosun(work, [
      'catalog',
      'import',
      '--skip-invalid',
      '--format',
      'json',
      corpus!,
      dir,
    ]);
    expect(imported.code, imported.stderr.slice(-2000)).toBe(0);
    const ref = `${registry.host}/corpus/catalog:2021`;
    const built = await bosun(work, ['catalog', 'build', dir, '-t', ref, '--output', 'json']);
    expect(built.code, built.stderr.slice(-2000)).toBe(0);
    expect(json(built).packages).toBeGreaterThan(150);
    const fromImage = await bosun(work, ['catalog', 'render', ref, '-o', 'json']);
    expect(fromImage.code, fromImage.stderr.slice(-2000)).toBe(0);
    const fromDir = await bosun(work, ['catalog', 'render', dir, '-o', 'json']);
    expect(fromImage.stdout.length).toBeGreaterThan(100_000_000);
    expect(fromImage.stdout === fromDir.stdout).toBe(true);
  });
});
