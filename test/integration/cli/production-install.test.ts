/**
 * The production install is the tested install: Bosun packed with `npm pack` and installed with
 * `npm install -g` into an empty prefix (production dependencies only, as users and container
 * images get it), then run from that prefix, in a folder outside the repository, so that nothing
 * resolves from the repository's node_modules. A module missing from the package (a file left
 * out of package.json `files`, an import of a devDependency) fails here, as it would for users.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CatalogSource } from '../../../src/apis/operators.js';
import type { Command } from '../../../src/cli/command.js';
import { root } from '../../../src/cli/main.js';
import {
  bosun,
  cleanEnv,
  type Installed,
  installGlobal,
  pack,
  type Packed,
  repo,
  type Run,
  run,
  startBosun,
} from '../../support/production-install.js';
import { tempDir } from '../../support/temp-dir.js';
import { olmReaderRole, serviceAccountToken } from '../../support/users.js';
import { catalogSource, client, create, get, Resources } from '../controllers/support.js';
import { eventually, freshNamespace } from '../support.js';

/** What a broken install prints: a module or file it does not have, or a crash. */
const broken = /ERR_MODULE_NOT_FOUND|Cannot find (module|package)|ENOENT|unexpected error/;

/** A command that worked: exit 0, and nothing on stderr of a module or file the install lacks. */
function ok(r: Run, what: string): Run {
  expect(r.stderr, what).not.toMatch(broken);
  expect(r.code, `${what} exited ${r.code}:\n${r.stderr}`).toBe(0);
  return r;
}

/** Every command of the CLI's own tree, as the words that name it (the root is `[]`). */
function commandPaths(cmd: Command, path: string[] = []): string[][] {
  return [path, ...(cmd.subcommands ?? []).flatMap((c) => commandPaths(c, [...path, c.name]))];
}

/** The documents of a JSON stream as `-o json` prints them: each starts a line with `{`. */
const jsonDocs = (text: string) =>
  text
    .trim()
    .split(/\n(?=\{)/)
    .map((d) => JSON.parse(d) as { schema?: string; name?: string; package?: string; entries?: unknown });

let packed: Packed;
let installed: Installed;
/** The working folder of every command: outside the repository, holding copies of its samples. */
let work: string;

const run$ = (...args: string[]) => bosun(installed, work, args);

beforeAll(async () => {
  const dir = await tempDir('bosun-production-');
  packed = await pack(join(dir, 'pack'));
  installed = await installGlobal(packed.tarball, join(dir, 'prefix'));
  work = join(dir, 'work');
  await mkdir(work);
  for (const p of [
    'catalogs/bosun-samples',
    'bundles',
    'test/fixtures/package-manifests',
    'deploy/examples/subscription-bosun-sample.yaml',
  ]) {
    await cp(join(repo, p), join(work, p.split('/').at(-1)!), { recursive: true });
  }
}, 1_200_000);

describe('the production install', () => {
  it('has its bins on PATH, production dependencies only, and nothing above it to resolve from', async () => {
    expect((await readdir(installed.bin)).sort()).toEqual(['bosun', 'kubectl-bosun']);
    for (let d = dirname(installed.prefix); d !== dirname(d); d = dirname(d)) {
      expect(existsSync(join(d, 'node_modules')), `${d}/node_modules would be found by imports`).toBe(false);
    }
    const pkg = JSON.parse(await readFile(join(installed.packageDir, 'package.json'), 'utf8'));
    const modules = join(installed.packageDir, 'node_modules');
    for (const dep of Object.keys(pkg.dependencies)) {
      expect(existsSync(join(modules, dep, 'package.json')), `dependency ${dep}`).toBe(true);
    }
    // A devDependency may be there only because a production dependency needs it too.
    const needed = new Set<string>();
    for (const dir of await installedPackages(modules)) {
      const p = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
      for (const d of Object.keys({ ...p.dependencies, ...p.optionalDependencies, ...p.peerDependencies }))
        needed.add(d);
    }
    const devOnly = Object.keys(pkg.devDependencies).filter(
      (d) => existsSync(join(modules, d)) && !needed.has(d),
    );
    expect(devOnly, 'devDependencies installed without a production dependency needing them').toEqual([]);
  });

  it('ships every module the bosun command can load, importing only its dependencies', async () => {
    const pkg = JSON.parse(await readFile(join(installed.packageDir, 'package.json'), 'utf8'));
    const graph = await moduleGraph(installed.packageDir);
    expect(graph.modules.length).toBeGreaterThan(100);
    expect(graph.missing, 'relative imports of files the package does not have').toEqual([]);
    const notDependencies = graph.packages.filter(
      (i) =>
        !(i.name in pkg.dependencies) && !DevOnlyImports.some((d) => d.from === i.from && d.name === i.name),
    );
    expect(
      notDependencies.map(
        (i) =>
          `${i.from} imports ${i.name}, ${i.name in pkg.devDependencies ? 'a devDependency' : 'not a dependency'}`,
      ),
    ).toEqual([]);
    const unresolved = graph.packages.filter(
      (i) => i.name in pkg.dependencies && !findPackage(join(installed.packageDir, i.from), i.name),
    );
    expect(unresolved.map((i) => `${i.from}: ${i.name}`)).toEqual([]);
    // Files a module reads beside itself (new URL('...', import.meta.url)): the CRDs, the web
    // catalog's page, package.json, the control plane's recipes, the precompiled checkers.
    const absent = graph.files.filter((f) => !existsSync(f.target));
    expect(absent.map((f) => `${f.from}: ${relative(installed.packageDir, f.target)}`)).toEqual([]);
    expect(graph.files.length).toBeGreaterThan(3);
  });

  it('prints its version, and refuses an older Node by name', async () => {
    const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
    expect(ok(await run$('--version'), 'bosun --version').stdout).toBe(`bosun ${version}\n`);
  });

  it.skipIf(!olderSystemNode())('names the Node it needs when the first node on PATH is older', async () => {
    const env = {
      ...installed.env,
      PATH: [installed.bin, ...cleanEnv().PATH!.split(delimiter).slice(1)].join(delimiter),
    };
    const r = await run('bosun', ['--version'], { cwd: work, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: Bosun needs Node.js 24 or newer');
  });
});

describe('bosun --help from the install', () => {
  it.each(commandPaths(root).map((p) => [p.join(' ') || '(root)', p] as const))(
    'bosun %s --help',
    async (_name, path) => {
      const r = ok(await run$(...path, '--help'), ['bosun', ...path, '--help'].join(' '));
      expect(r.stdout).toContain(`Usage:\n  ${['bosun', ...path].join(' ')}`);
    },
  );

  it('covers a command added to the tree without naming it here', () => {
    const names = commandPaths(root).map((p) => p.join(' '));
    expect(names).toEqual(expect.arrayContaining(['catalog serve', 'operator run', 'upgrade retry']));
  });
});

describe('the offline commands from the install, on the samples', () => {
  it('catalog validate and render (YAML and JSON)', async () => {
    expect(ok(await run$('catalog', 'validate', 'bosun-samples'), 'validate').stdout).toBe(
      'valid catalog bosun-samples: 2 packages, 6 bundles\n',
    );
    const yaml = ok(await run$('catalog', 'render', 'bosun-samples'), 'render').stdout;
    expect(yaml).toMatch(/^---\ndefaultChannel: stable\n/);
    expect(yaml).toContain('name: bosun-sample.v0.2.1\n');
    const docs = jsonDocs(
      ok(await run$('catalog', 'render', 'bosun-samples', '-o', 'json'), 'render json').stdout,
    );
    expect(docs.filter((d) => d.schema === 'olm.package').map((d) => d.name)).toEqual([
      'bosun-sample',
      'bosun-sample-dashboard',
    ]);
    expect(docs.filter((d) => d.schema === 'olm.bundle')).toHaveLength(6);
    expect(
      docs.find((d) => d.schema === 'olm.channel' && d.name === 'stable' && d.package === 'bosun-sample')
        ?.entries,
    ).toEqual([
      { name: 'bosun-sample.v0.1.0' },
      { name: 'bosun-sample.v0.1.1', replaces: 'bosun-sample.v0.1.0' },
      { name: 'bosun-sample.v0.2.0', replaces: 'bosun-sample.v0.1.1' },
      { name: 'bosun-sample.v0.2.1', replaces: 'bosun-sample.v0.1.1', skips: ['bosun-sample.v0.2.0'] },
    ]);
  });

  it('catalog import of package-manifest packages (in worker threads, given two cores), then validate', async () => {
    const r = ok(
      await run$('catalog', 'import', 'package-manifests/community', 'imported', '--output', 'json'),
      'import',
    );
    expect(JSON.parse(r.stdout)).toEqual({
      ok: true,
      packages: 2,
      bundles: 7,
      errors: [],
      warnings: [],
      written: ['doohickey/catalog.yaml', 'gadget/catalog.yaml'],
    });
    expect(ok(await run$('catalog', 'validate', 'imported'), 'validate imported').stdout).toBe(
      'valid catalog imported: 2 packages, 7 bundles\n',
    );
  });

  it('bundle validate and pack, catalog publish (directories and an archive), and diff', async () => {
    for (const b of await sampleBundles()) {
      expect(ok(await run$('bundle', 'validate', b), `bundle validate ${b}`).stdout).toBe(
        `valid bundle ${b} (package ${b.split('/')[1]})\n`,
      );
    }
    for (const v of ['0.1.0', '0.1.1', '0.2.0'])
      ok(await run$('catalog', 'publish', 'cat', `bundles/bosun-sample/${v}`), `publish ${v}`);
    await cp(join(work, 'cat'), join(work, 'cat-before'), { recursive: true });
    ok(await run$('bundle', 'pack', 'bundles/bosun-sample/0.2.1', '-o', '0.2.1.tgz'), 'bundle pack');
    const published = ok(await run$('catalog', 'publish', 'cat', '0.2.1.tgz', '--output', 'json'), 'publish');
    expect(JSON.parse(published.stdout)).toMatchObject({
      ok: true,
      bundle: 'bosun-sample.v0.2.1',
      channels: [
        { name: 'candidate', entry: { replaces: 'bosun-sample.v0.1.1', skips: ['bosun-sample.v0.2.0'] } },
        { name: 'stable', entry: { replaces: 'bosun-sample.v0.1.1', skips: ['bosun-sample.v0.2.0'] } },
      ],
      written: ['bosun-sample/catalog.yaml'],
    });
    const diff = ok(await run$('catalog', 'diff', 'cat-before', 'cat', '--fail-on-breaking'), 'diff');
    expect(diff.stdout).toBe(
      '         bosun-sample: bundle bosun-sample.v0.2.1 was added\n' +
        '         bosun-sample: head of candidate changed from bosun-sample.v0.2.0 to bosun-sample.v0.2.1\n' +
        '         bosun-sample: head of stable changed from bosun-sample.v0.2.0 to bosun-sample.v0.2.1\n' +
        '3 changes, 0 breaking\n',
    );

    // Published again into a copy of the sample catalog, the catalog is the same, byte for byte.
    await cp(join(work, 'bosun-samples'), join(work, 'samples-copy'), { recursive: true });
    ok(
      await run$('catalog', 'publish', 'samples-copy', 'bundles/bosun-sample/0.2.1', '--replace'),
      'republish',
    );
    expect(await readFile(join(work, 'samples-copy/bosun-sample/catalog.yaml'), 'utf8')).toBe(
      await readFile(join(repo, 'catalogs/bosun-samples/bosun-sample/catalog.yaml'), 'utf8'),
    );
    expect(ok(await run$('catalog', 'diff', 'bosun-samples', 'samples-copy'), 'diff same').stdout).toBe(
      '0 changes, 0 breaking\n',
    );
  });

  it('catalog init and template semver', async () => {
    await writeFile(join(work, 'KITE.md'), 'Kites fly.\n');
    expect(
      ok(
        await run$('catalog', 'init', 'kite', '--default-channel', 'stable', '--description', 'KITE.md'),
        'init',
      ).stdout,
    ).toBe('---\ndefaultChannel: stable\ndescription: |\n  Kites fly.\nname: kite\nschema: olm.package\n');
    await writeFile(
      join(work, 'template.yaml'),
      'schema: olm.semver\ngenerateMajorChannels: true\n' +
        'candidate:\n  bundles:\n  - image: bundles/bosun-sample/0.1.0\n  - image: bundles/bosun-sample/0.2.0\n' +
        'stable:\n  bundles:\n  - image: bundles/bosun-sample/0.1.1\n  - image: bundles/bosun-sample/0.2.1\n',
    );
    const docs = jsonDocs(
      ok(await run$('catalog', 'template', 'semver', 'template.yaml', '-o', 'json'), 'template').stdout,
    );
    expect(docs[0]).toMatchObject({
      schema: 'olm.package',
      name: 'bosun-sample',
      defaultChannel: 'stable-v0',
    });
    expect(docs.find((d) => d.name === 'stable-v0')?.entries).toEqual([
      { name: 'bosun-sample.v0.1.1' },
      { name: 'bosun-sample.v0.2.1', replaces: 'bosun-sample.v0.1.1' },
    ]);
  });

  it('resolve and explain a Subscription against the sample catalog', async () => {
    const catalog = '--catalog=olm/bosun-catalog=bosun-samples';
    expect(
      ok(await run$('resolve', catalog, '--subscription=subscription-bosun-sample.yaml'), 'resolve').stdout,
    ).toBe(
      'install bosun-sample.v0.2.1 (0.2.1) from channel stable of catalog bosun-catalog, for subscription bosun-sample\n',
    );
    // The dashboard requires the sample operator's API and package: a dependency comes along.
    await writeFile(
      join(work, 'dashboard.yaml'),
      'apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\n' +
        'metadata: {name: dashboard, namespace: operators}\n' +
        'spec: {name: bosun-sample-dashboard, channel: stable, source: bosun-catalog, sourceNamespace: olm}\n',
    );
    const explained = ok(await run$('explain', catalog, '--subscription=dashboard.yaml'), 'explain');
    expect(explained.stdout).toBe(
      [
        'Resolved: 2 bundles to install or upgrade.',
        '  bosun-sample.v0.2.1 (0.2.1) from channel stable of catalog bosun-catalog as a dependency',
        '  bosun-sample-dashboard.v0.2.0 (0.2.0) from channel stable of catalog bosun-catalog for subscription dashboard',
        '',
        'Why:',
        'subscription dashboard (package bosun-sample-dashboard, channel stable, catalog bosun-catalog): gets bosun-sample-dashboard.v0.2.0 (0.2.0, channel stable of catalog bosun-catalog)',
        'bosun-sample-dashboard.v0.2.0 requires a provider of sample.bosun.dev/v1alpha1 Widget: met by bosun-sample.v0.2.1 (0.2.1, channel stable of catalog bosun-catalog)',
        'bosun-sample-dashboard.v0.2.0 requires package bosun-sample in range >=0.2.0 <1.0.0: met by bosun-sample.v0.2.1 (0.2.1, channel stable of catalog bosun-catalog)',
        '',
      ].join('\n'),
    );
  });

  it('catalog serve: the catalog as JSON, and the web catalog with every file its page loads', async () => {
    const serve = startBosun(installed, work, ['catalog', 'serve', 'bosun-samples', '--addr', '127.0.0.1:0']);
    try {
      const url = await untilOutput(serve, 'the URL on the first line', firstLine);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const catalog = await fetch(url);
      expect(catalog.status).toBe(200);
      expect(await catalog.text()).toBe(
        ok(await run$('catalog', 'render', 'bosun-samples', '-o', 'json'), 'render').stdout,
      );
      await expectWebCatalog(url);
    } finally {
      expect(await stop(serve.child)).toBe(0);
    }
    expect(serve.stderr()).not.toMatch(broken);
  });

  it('bosun start finds its default catalog in the install (and stops at the missing kubeconfig)', async () => {
    const kubeconfig = join(work, 'no-such-kubeconfig');
    const r = await run$('start', '--kubeconfig', kubeconfig, '--metrics-addr', '127.0.0.1:0');
    expect(r.stderr).toContain(`error: kubeconfig ${kubeconfig} does not exist`);
    expect(r.stderr).not.toContain('catalog');
    expect(r.code).toBe(1);
  });
});

describe('kubectl bosun from the install', () => {
  it('is a kubectl plugin: kubectl bosun --help prints Bosun’s help, and kubectl plugin list lists it', async () => {
    const help = ok(
      await run('kubectl', ['bosun', '--help'], { cwd: work, env: installed.env }),
      'kubectl bosun',
    );
    expect(help.stdout).toBe(ok(await run$('--help'), 'bosun --help').stdout);
    expect(help.stdout).toContain('Usage:\n  bosun <command>');
    const plugins = await run('kubectl', ['plugin', 'list'], { cwd: work, env: installed.env });
    expect(plugins.stdout).toContain(join(installed.bin, 'kubectl-bosun'));
  });
});

describe('the manager from the install', () => {
  it('has the runtime files it reads: the CRDs, the web catalog’s page and the precompiled checkers', async () => {
    const help = ok(await run$('operator', 'run', '--help'), 'operator run --help');
    expect(help.stdout).toContain('--install-crds');
    expect((await readdir(join(installed.packageDir, 'deploy/crds'))).sort()).toEqual(
      (await readdir(join(repo, 'deploy/crds'))).sort(),
    );
    const client = await readdir(join(installed.packageDir, 'dist/web/client'));
    expect(client).toEqual(expect.arrayContaining(['index.html', 'app.js', 'style.css', 'favicon.svg']));
    expect((await readdir(join(installed.packageDir, 'dist/apis/crds/compiled'))).length).toBeGreaterThan(0);
  });

  let manager: Started | undefined;
  let serve: Started | undefined;
  afterAll(async () => {
    for (const p of [manager, serve]) if (p) await stop(p.child);
  });

  it('bosun operator run --install-crds reconciles an http CatalogSource served by bosun catalog serve', async () => {
    const catalog = startBosun(installed, work, [
      'catalog',
      'serve',
      'bosun-samples',
      '--addr',
      '127.0.0.1:0',
    ]);
    serve = catalog;
    const m = startBosun(installed, work, [
      'operator',
      'run',
      '--kubeconfig',
      inject('kubeconfig'),
      '--install-crds',
      '--metrics-addr',
      '127.0.0.1:0',
      '--log-format',
      'json',
    ]);
    manager = m;
    const catalogUrl = await untilOutput(catalog, 'the catalog URL', firstLine);
    // The manager logs where it serves HTTP in a JSON record with `url`.
    const managerUrl = await untilOutput(
      m,
      'the manager to serve HTTP',
      (out) =>
        out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { url?: string })
          .find((r) => r.url)?.url,
    );
    const ns = await freshNamespace('prodinstall');
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'samples', { sourceType: 'http', address: catalogUrl }),
    );
    await eventually('the CatalogSource to be READY', async () => {
      const cs = await get<CatalogSource>(Resources.CatalogSource, ns, 'samples');
      return cs?.status?.connectionState?.lastObservedState === 'READY' ? cs : undefined;
    });
    expect((await fetch(`${managerUrl}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${managerUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /^bosun_reconcile_total\{controller="catalogsource",outcome="(success|requeue)"\} [1-9]/m,
    );
    await expectWebCatalog(`${managerUrl}/`);
    // The catalog is this namespace's: the web catalog shows it to a viewer who may list it there.
    expect(await (await fetch(`${managerUrl}/api/index`)).text()).not.toContain('"bosun-sample-dashboard"');
    const role = `prodinstall-reader-${process.pid}`;
    await olmReaderRole(client(), role);
    try {
      const token = await serviceAccountToken(client(), ns, 'viewer', [{ role, namespace: ns }]);
      const headers = { Authorization: `Bearer ${token}` };
      const index = await (await fetch(`${managerUrl}/api/index`, { headers })).text();
      expect(index).toContain('"bosun-sample-dashboard"');
    } finally {
      await client()
        .request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}` })
        .catch(() => undefined);
    }

    expect(await stop(m.child)).toBe(0);
    expect(m.stderr()).not.toMatch(broken);
    expect(m.stdout()).not.toMatch(broken);
  });
});

/** The page at `url` for a browser, and every file under assets/ it names, each 200. */
async function expectWebCatalog(url: string): Promise<void> {
  const page = await fetch(url, { headers: { accept: 'text/html' } });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  const html = await page.text();
  const assets = [...new Set([...html.matchAll(/(?:href|src)="(assets\/[^"]+)"/g)].map((m) => m[1]!))];
  expect(assets).toEqual(expect.arrayContaining(['assets/app.js', 'assets/style.css']));
  for (const a of assets) {
    const r = await fetch(new URL(a, url));
    expect(r.status, a).toBe(200);
    expect((await r.arrayBuffer()).byteLength, a).toBeGreaterThan(0);
  }
}

type Started = ReturnType<typeof startBosun>;

/** The first line a process printed, once it has printed one. */
const firstLine = (out: string) => (out.includes('\n') ? out.split('\n')[0] : undefined);

/**
 * Waits until `find` finds what it looks for in the output of `p`; fails at once, with its
 * stderr, when the process exits first, and after `timeoutMs`.
 */
async function untilOutput<T>(
  p: Started,
  what: string,
  find: (stdout: string) => T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find(p.stdout());
    if (found !== undefined) return found;
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      throw new Error(
        `waiting for ${what}: bosun exited (${p.child.exitCode ?? p.child.signalCode}):\n${p.stderr()}`,
      );
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${p.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops a process with SIGTERM; resolves with its exit code. */
async function stop(child: import('node:child_process').ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

/** The sample bundles, as paths in the working folder. */
async function sampleBundles(): Promise<string[]> {
  const out: string[] = [];
  for (const pkg of (await readdir(join(work, 'bundles'), { withFileTypes: true })).filter((e) =>
    e.isDirectory(),
  ))
    for (const v of await readdir(join(work, 'bundles', pkg.name))) out.push(`bundles/${pkg.name}/${v}`);
  return out.sort();
}

/** Every package folder under a node_modules (scoped ones too, and nested node_modules). */
async function installedPackages(modules: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(modules, { withFileTypes: true }).catch(() => [])) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    const dirs = e.name.startsWith('@')
      ? (await readdir(join(modules, e.name))).map((n) => join(modules, e.name, n))
      : [join(modules, e.name)];
    for (const d of dirs) {
      if (existsSync(join(d, 'package.json'))) out.push(d);
      out.push(...(await installedPackages(join(d, 'node_modules'))));
    }
  }
  return out;
}

/**
 * Imports of packages that are not dependencies, each reached only where it cannot run in an
 * install: the web catalog compiles its page's TypeScript modules with `typescript` only when it
 * runs from the sources (the install has the compiled modules, and no sources).
 */
const DevOnlyImports = [{ from: 'dist/web/assets.js', name: 'typescript' }];

interface ModuleGraph {
  /** Every module reachable, relative to the package. */
  modules: string[];
  /** Relative imports whose file is not there, `<module>: <specifier>`. */
  missing: string[];
  /** Imports of packages: the importing module and the package's name. */
  packages: { from: string; name: string }[];
  /** Files modules name beside themselves with `new URL('<path>', import.meta.url)`. */
  files: { from: string; target: string }[];
}

/**
 * The modules the installed `bosun` can load, read without running them: from its bins, through
 * static and dynamic imports, the worker threads it starts (`workerStarter(import.meta.url,
 * '<module>')`) and the schema checkers compiled ahead of time (loaded by path).
 */
async function moduleGraph(packageDir: string): Promise<ModuleGraph> {
  const pkg = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8'));
  const compiled = join(packageDir, 'dist/apis/crds/compiled');
  const queue = [
    ...new Set(Object.values(pkg.bin as Record<string, string>).map((b) => join(packageDir, b))),
    ...(await readdir(compiled)).map((f) => join(compiled, f)),
  ];
  const seen = new Set<string>();
  const graph: ModuleGraph = { modules: [], missing: [], packages: [], files: [] };
  const rel = (f: string) => relative(packageDir, f);
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    graph.modules.push(rel(file));
    const text = await readFile(file, 'utf8');
    const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
    for (const m of text.matchAll(/workerStarter\(\s*import\.meta\.url\s*,\s*['"]([^'"]+)['"]\s*\)/g))
      specifiers.push(`./${m[1]}.js`);
    for (const spec of specifiers) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (existsSync(target)) queue.push(target);
        else graph.missing.push(`${rel(file)}: ${spec}`);
      } else if (!isBuiltin(spec)) {
        const parts = spec.split('/');
        graph.packages.push({
          from: rel(file),
          name: parts.slice(0, spec.startsWith('@') ? 2 : 1).join('/'),
        });
      }
    }
    for (const m of text.matchAll(/new URL\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g))
      graph.files.push({ from: rel(file), target: resolve(dirname(file), m[2]!) });
  }
  return graph;
}

/** Where Node finds package `name` from `file`: the nearest node_modules/<name> above it. */
function findPackage(file: string, name: string): string | undefined {
  for (let d = dirname(file); d !== dirname(d); d = dirname(d)) {
    if (existsSync(join(d, 'node_modules', name, 'package.json'))) return join(d, 'node_modules', name);
  }
  return undefined;
}

/** Whether the first `node` on the system's PATH is older than Node 24 (the bin then refuses it). */
function olderSystemNode(): boolean {
  try {
    const path = cleanEnv().PATH!.split(delimiter).slice(1).join(delimiter);
    const v = execFileSync('node', ['-p', 'process.versions.node'], {
      env: { PATH: path },
      encoding: 'utf8',
    });
    return Number(v.split('.')[0]) < 24;
  } catch {
    return false;
  }
}
