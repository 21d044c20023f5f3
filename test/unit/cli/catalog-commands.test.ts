import { cp, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseYamlStream } from '../../../src/bundle/yaml.js';
import { snapshot } from '../catalog/snapshot.js';
import { bosun, fixtures, json, workdir } from './run-bosun.js';

describe('bosun catalog init', () => {
  it('prints an olm.package document', async () => {
    const dir = await workdir();
    await writeFile(join(dir, 'README.md'), 'Kites fly.\n');
    const r = await bosun(
      dir,
      'catalog',
      'init',
      'kite',
      '--default-channel',
      'stable',
      '--description',
      'README.md',
    );
    expect(r).toEqual({
      code: 0,
      stdout: '---\ndefaultChannel: stable\ndescription: |\n  Kites fly.\nname: kite\nschema: olm.package\n',
      stderr: '',
    });
  });

  it('refuses a package name Kubernetes would not accept', async () => {
    const r = await bosun(await workdir(), 'catalog', 'init', 'Kite_Op');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a DNS-1123 label');
  });
});

describe('bosun catalog render', () => {
  it('renders bundles, package-manifest packages and catalogs together', async () => {
    const dir = await workdir('bundles', 'test/fixtures/package-manifests', 'test/fixtures/catalogs');
    const r = await bosun(
      dir,
      'catalog',
      'render',
      'bundles/bosun-sample/0.1.0',
      'package-manifests/community/gadget',
      'catalogs/mixed',
      '-o',
      'json',
    );
    expect(r.stderr).toBe('');
    const docs = r.stdout.split(/\n(?=\{)/).map((d) => JSON.parse(d));
    expect(docs.filter((d) => d.schema === 'olm.package').map((d) => d.name)).toEqual([
      'alpha',
      'beta',
      'gadget',
    ]);
    expect(docs.filter((d) => d.schema === 'olm.bundle').map((d) => d.name)).toContain('bosun-sample.v0.1.0');
  });

  it('prints nothing when an input is invalid', async () => {
    const dir = await workdir('bundles', 'test/fixtures/bad');
    const r = await bosun(dir, 'catalog', 'render', 'bundles/bosun-sample/0.1.0', 'bad/two-csvs');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: bad\/two-csvs: the bundle has 2 ClusterServiceVersions/m);
  });
});

describe('bosun catalog validate', () => {
  it.each([
    [
      'malformed-yaml.yaml',
      {
        file: 'bad/malformed-yaml.yaml',
        object: null,
        field: null,
        message: expect.stringMatching(/^invalid YAML: line 5/),
      },
    ],
    [
      'no-schema.yaml',
      {
        file: 'bad/no-schema.yaml',
        object: 'stable',
        field: 'schema',
        message: expect.stringContaining('needs a "schema"'),
      },
    ],
    [
      'duplicate-keys.yaml',
      {
        file: 'bad/duplicate-keys.yaml',
        message: expect.stringContaining('line 5, column 1: duplicated mapping key'),
      },
    ],
    [
      'replaces-cycle.yaml',
      {
        file: 'bad/replaces-cycle.yaml',
        object: 'channel cycle/stable',
        field: 'entries',
        message: expect.stringContaining('replaces cycle'),
      },
    ],
    [
      'two-heads.yaml',
      { object: 'channel twoheads/stable', message: expect.stringContaining('multiple channel heads') },
    ],
    [
      'stranded-bundle.yaml',
      { object: 'channel stranded/stable', message: expect.stringContaining('stranded entries') },
    ],
    ['unknown-default-channel.yaml', { object: 'package nodefault', field: 'defaultChannel' }],
  ])('reports %s and exits 1', async (file, error) => {
    const dir = await workdir('test/fixtures/bad');
    const r = await bosun(dir, 'catalog', 'validate', `bad/${file}`, '--output', 'json');
    expect(r.code).toBe(1);
    expect(json(r)).toMatchObject({ ok: false, errors: [expect.objectContaining(error)] });
  });

  it('sends problems to stderr and the verdict to stdout in text mode', async () => {
    const dir = await workdir('test/fixtures/bad', 'catalogs');
    const bad = await bosun(dir, 'catalog', 'validate', 'bad/two-heads.yaml');
    expect(bad.stderr).toBe(
      'error: bad/two-heads.yaml: channel twoheads/stable: entries: multiple channel heads: twoheads.v1.1.0, twoheads.v2.0.0; exactly one entry may be left un-replaced and un-skipped\n' +
        'invalid catalog bad/two-heads.yaml: 1 package, 3 bundles (1 error)\n',
    );
    const good = await bosun(dir, 'catalog', 'validate', 'catalogs/bosun-samples');
    expect(good).toEqual({
      code: 0,
      stdout: 'valid catalog catalogs/bosun-samples: 2 packages, 6 bundles\n',
      stderr: '',
    });
  });

  it('tells a catalog file named package.yaml from a package-manifest package by its content', async () => {
    const dir = await workdir('catalogs');
    await mkdir(join(dir, 'fbc', 'sample'), { recursive: true });
    await cp(
      join(dir, 'catalogs/bosun-samples/bosun-sample/catalog.yaml'),
      join(dir, 'fbc/sample/package.yaml'),
    );
    const fbc = await bosun(dir, 'catalog', 'validate', 'fbc');
    expect(fbc).toEqual({ code: 0, stdout: 'valid catalog fbc: 1 package, 4 bundles\n', stderr: '' });
    const rendered = await bosun(dir, 'catalog', 'render', 'fbc', '-o', 'json');
    expect(rendered.code).toBe(0);
    const diff = await bosun(dir, 'catalog', 'diff', 'fbc', 'catalogs/bosun-samples');
    expect(diff.code).toBe(0);
    // A real package-manifest package file still reads as one.
    await mkdir(join(dir, 'legacy', 'kite'), { recursive: true });
    await writeFile(
      join(dir, 'legacy/kite/kite.package.yaml'),
      'packageName: kite\ndefaultChannel: stable\nchannels:\n- name: stable\n  currentCSV: kite.v1.0.0\n',
    );
    const legacy = await bosun(dir, 'catalog', 'validate', 'legacy/kite');
    expect(legacy.code).toBe(2);
    expect(legacy.stderr).toContain('is a package-manifest package, not a catalog');
  });

  it('points at bundle validate for a bundle', async () => {
    const dir = await workdir('bundles');
    const r = await bosun(dir, 'catalog', 'validate', 'bundles/bosun-sample/0.1.0');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('use `bosun bundle validate`');
  });
});

describe('a manifest file of several documents', () => {
  // As the corpus' litmuschaos 1.9.0 ships it: one file, three CRDs, the CSV owning the first.
  it('is read the same by render and import: its first document, with a warning', async () => {
    const dir = await workdir();
    const bundle = join(dir, 'src/gizmo/1.0.0');
    await cp(join(fixtures, 'bundles/minimal'), bundle, { recursive: true });
    const crd = await readFile(join(bundle, 'manifests/gizmos.crd.yaml'), 'utf8');
    const other = (name: string) =>
      crd.replaceAll('gizmos', `${name}s`).replace(/kind: Gizmo\b/g, `kind: ${name}`);
    await writeFile(
      join(bundle, 'manifests/gizmos.crd.yaml'),
      `---\n${crd}---\n${other('Sprocket')}---\n${other('Cog')}`,
    );

    const rendered = await bosun(dir, 'catalog', 'render', bundle, '-o', 'json');
    expect(rendered.code, rendered.stderr).toBe(0);
    expect(rendered.stderr).toContain('holds 3 documents; only the first is read');
    const imported = await bosun(dir, 'catalog', 'import', 'src', 'out');
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain('holds 3 documents; only the first is read');
    const fromImport = await bosun(dir, 'catalog', 'render', 'out', '-o', 'json');
    const bundleOf = (text: string) =>
      text
        .split(/\n(?=\{)/)
        .map((d) => JSON.parse(d))
        .find((d) => d.schema === 'olm.bundle');
    const doc = bundleOf(rendered.stdout);
    expect(doc.properties.filter((p: { type: string }) => p.type === 'olm.gvk')).toHaveLength(1);
    expect(bundleOf(fromImport.stdout)).toEqual(doc);
  });
});

describe('bosun catalog import', () => {
  it('imports a directory of packages and says what it wrote', async () => {
    const dir = await workdir('test/fixtures/package-manifests');
    const r = await bosun(dir, 'catalog', 'import', 'package-manifests/community', 'cat', '--output', 'json');
    expect(json(r)).toEqual({
      ok: true,
      packages: 2,
      bundles: 7,
      errors: [],
      warnings: [],
      written: ['doohickey/catalog.yaml', 'gadget/catalog.yaml'],
    });
    expect(json(await bosun(dir, 'catalog', 'validate', 'cat', '--output', 'json'))).toMatchObject({
      ok: true,
      packages: 2,
      bundles: 7,
    });
  });

  it('imports one package directory, as JSON files', async () => {
    const dir = await workdir('test/fixtures/package-manifests');
    const r = await bosun(
      dir,
      'catalog',
      'import',
      'package-manifests/community/gadget',
      'cat',
      '--format',
      'json',
    );
    expect(r).toMatchObject({ code: 0, stdout: 'imported 1 package and 4 bundles into cat\n' });
    expect(
      JSON.parse((await readFile(join(dir, 'cat/gadget/catalog.json'), 'utf8')).split('\n}\n')[0] + '\n}'),
    ).toMatchObject({ schema: 'olm.package', name: 'gadget' });
  });

  it('writes nothing when a package has errors, and reports the file and field', async () => {
    const dir = await workdir('test/fixtures/package-manifests');
    const r = await bosun(dir, 'catalog', 'import', 'package-manifests/with-defect', 'cat');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'error: package-manifests/with-defect/headless/headless.package.yaml: package headless: channels[1].currentCSV: headless.v0.9.0 is not a CSV of package headless',
    );
    expect(r.stderr).toContain('nothing was written');
    expect(await snapshot(join(dir, 'cat'))).toEqual({});
  });

  it('with --skip-invalid leaves the bad package out and writes the rest', async () => {
    const dir = await workdir('test/fixtures/package-manifests');
    const r = await bosun(
      dir,
      'catalog',
      'import',
      'package-manifests/with-defect',
      'cat',
      '--skip-invalid',
      '--output',
      'json',
    );
    expect(json(r)).toMatchObject({
      ok: true,
      packages: 1,
      bundles: 2,
      errors: [],
      written: ['widgetry/catalog.yaml'],
    });
    expect(json(r).warnings.map((w: { object: string | null }) => w.object)).toEqual([
      'package headless',
      'package headless',
    ]);
  });

  it('refuses to overwrite a package the catalog has, unless --replace', async () => {
    const dir = await workdir('test/fixtures/package-manifests');
    expect((await bosun(dir, 'catalog', 'import', 'package-manifests/community', 'cat')).code).toBe(0);
    const before = await snapshot(join(dir, 'cat'));
    const again = await bosun(dir, 'catalog', 'import', 'package-manifests/community/gadget', 'cat');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('the catalog already has package gadget; pass --replace to replace it');
    expect(await snapshot(join(dir, 'cat'))).toEqual(before);
    const replaced = await bosun(
      dir,
      'catalog',
      'import',
      'package-manifests/community/gadget',
      'cat',
      '--replace',
      '--format',
      'json',
    );
    expect(replaced.code).toBe(0);
    expect(Object.keys(await snapshot(join(dir, 'cat'))).sort()).toEqual([
      'doohickey/catalog.yaml',
      'gadget/catalog.json',
    ]);
  });
});

describe('bosun catalog publish', () => {
  it('reports what it placed where, as JSON', async () => {
    const dir = await workdir('bundles');
    await bosun(dir, 'catalog', 'publish', 'cat', 'bundles/bosun-sample/0.1.1');
    const r = await bosun(dir, 'catalog', 'publish', 'cat', 'bundles/bosun-sample/0.2.1', '--output', 'json');
    expect(json(r)).toEqual({
      ok: true,
      packages: 1,
      bundles: 1,
      errors: [],
      warnings: [],
      package: 'bosun-sample',
      bundle: 'bosun-sample.v0.2.1',
      version: '0.2.1',
      channels: [
        {
          name: 'candidate',
          created: true,
          entry: {
            name: 'bosun-sample.v0.2.1',
            replaces: 'bosun-sample.v0.1.1',
            skips: ['bosun-sample.v0.2.0'],
          },
        },
        {
          name: 'stable',
          created: false,
          entry: {
            name: 'bosun-sample.v0.2.1',
            replaces: 'bosun-sample.v0.1.1',
            skips: ['bosun-sample.v0.2.0'],
          },
        },
      ],
      defaultChannel: 'stable',
      replaced: null,
      written: ['bosun-sample/catalog.yaml'],
    });
  });

  it('publishes an archive as well as a directory', async () => {
    const dir = await workdir('bundles');
    expect((await bosun(dir, 'bundle', 'pack', 'bundles/bosun-sample/0.1.0', '-o', 'b.tgz')).code).toBe(0);
    const r = await bosun(dir, 'catalog', 'publish', 'cat', 'b.tgz');
    expect(r).toMatchObject({
      code: 0,
      stdout: 'published bosun-sample.v0.1.0 (0.1.0) to bosun-sample in cat: stable\n',
    });
  });

  it('refuses a version already published, unless --replace', async () => {
    const dir = await workdir('bundles', 'catalogs');
    const before = await snapshot(join(dir, 'catalogs'));
    const r = await bosun(dir, 'catalog', 'publish', 'catalogs/bosun-samples', 'bundles/bosun-sample/0.1.1');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'bundle bosun-sample.v0.1.1 is already published in package bosun-sample; pass --replace to overwrite it',
    );
    expect(await snapshot(join(dir, 'catalogs'))).toEqual(before);
    const again = await bosun(
      dir,
      'catalog',
      'publish',
      'catalogs/bosun-samples',
      'bundles/bosun-sample/0.1.1',
      '--replace',
    );
    expect(again.code).toBe(0);
    expect(await snapshot(join(dir, 'catalogs'))).toEqual(before);
  });

  it.each([
    ['bad/two-csvs', 'the bundle has 2 ClusterServiceVersions'],
    ['bad/csv-without-version', 'spec.version: is required'],
    ['bad/non-semver-version', 'is not a semver version'],
    ['bad/tar-dotdot.tar.gz', 'leaves the archive root'],
    ['bad/tar-absolute-path.tar.gz', 'is an absolute path'],
    ['bad/tar-symlink.tar.gz', 'symlink'],
    ['bad/tar-bomb.tar.gz', 'past the limit of 16.0 MiB for one file'],
  ])('refuses the bad bundle %s and leaves the catalog as it was', async (bundle, message) => {
    const dir = await workdir('catalogs', 'test/fixtures/bad');
    const before = await snapshot(join(dir, 'catalogs'));
    const r = await bosun(dir, 'catalog', 'publish', 'catalogs/bosun-samples', bundle);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(await snapshot(join(dir, 'catalogs'))).toEqual(before);
  });

  it.each([
    'malformed-yaml.yaml',
    'no-schema.yaml',
    'duplicate-keys.yaml',
    'replaces-cycle.yaml',
    'two-heads.yaml',
    'stranded-bundle.yaml',
    'unknown-default-channel.yaml',
  ])('will not write into a catalog holding %s', async (file) => {
    const dir = await workdir('test/fixtures/bundles', 'catalogs');
    await mkdir(join(dir, 'catalogs/bosun-samples/broken'));
    await writeFile(
      join(dir, 'catalogs/bosun-samples/broken', file),
      await readFile(join(import.meta.dirname, '../../fixtures/bad', file)),
    );
    const before = await snapshot(join(dir, 'catalogs'));
    const r = await bosun(dir, 'catalog', 'publish', 'catalogs/bosun-samples', 'bundles/minimal');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`catalogs/bosun-samples/broken/${file}`);
    expect(await snapshot(join(dir, 'catalogs'))).toEqual(before);
  });

  it('with --semver places and links by version', async () => {
    const dir = await workdir('bundles');
    for (const v of ['0.1.0', '0.1.1', '0.2.0']) {
      expect(
        (
          await bosun(
            dir,
            'catalog',
            'publish',
            'cat',
            `bundles/bosun-sample/${v}`,
            '--semver',
            '--archetype',
            'fast',
          )
        ).code,
      ).toBe(0);
    }
    const channels = (await readFile(join(dir, 'cat/bosun-sample/catalog.yaml'), 'utf8')).match(
      /^name: fast-v\S+$/gm,
    );
    expect(channels).toEqual(['name: fast-v0.1', 'name: fast-v0.2']);
  });
});

/** A v1beta1 CRD as many published bundles still carry: schema at the top level, not structural. */
function legacyCrd(group: string, kind: string, plural: string): string {
  return [
    'apiVersion: apiextensions.k8s.io/v1beta1',
    'kind: CustomResourceDefinition',
    'metadata:',
    `  name: ${plural}.${group}`,
    'spec:',
    `  group: ${group}`,
    '  version: v1alpha1',
    '  names:',
    `    kind: ${kind}`,
    `    plural: ${plural}`,
    '  scope: Namespaced',
    '  validation:',
    '    openAPIV3Schema:',
    '      properties:',
    '        spec:',
    '          properties:',
    '            size: {type: integer}',
    '            tags: {type: array, items: {type: string}, uniqueItems: true}',
    '',
  ].join('\n');
}

/** The manifests a written catalog file carries for `bundle`, decoded from olm.bundle.object. */
async function bundleObjects(file: string, bundle: string): Promise<Record<string, unknown>[]> {
  const parsed = parseYamlStream(await readFile(file, 'utf8'), file);
  if (!parsed.ok) throw new Error(parsed.problem.message);
  const doc = parsed.docs
    .map(
      (d) =>
        d.value as {
          schema?: string;
          name?: string;
          properties?: { type: string; value: { data: string } }[];
        },
    )
    .find((d) => d.schema === 'olm.bundle' && d.name === bundle);
  return (doc?.properties ?? [])
    .filter((p) => p.type === 'olm.bundle.object')
    .map((p) => JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8')) as Record<string, unknown>);
}

const crdOf = (objects: Record<string, unknown>[]) =>
  objects.find((o) => o.kind === 'CustomResourceDefinition');

describe('--convert-removed-apis on catalog import and publish', () => {
  async function legacyGadget(): Promise<string> {
    const dir = await workdir('test/fixtures/package-manifests');
    await writeFile(
      join(dir, 'package-manifests/community/gadget/1.0.0/gadgets.crd.yaml'),
      legacyCrd('fixtures.bosun.dev', 'Gadget', 'gadgets'),
    );
    return dir;
  }

  it('import leaves a v1beta1 CRD as published unless asked, as opm does', async () => {
    const dir = await legacyGadget();
    const r = await bosun(
      dir,
      'catalog',
      'import',
      'package-manifests/community/gadget',
      'cat',
      '--output',
      'json',
    );
    expect(json(r)).toMatchObject({ ok: true, warnings: [] });
    const crd = crdOf(await bundleObjects(join(dir, 'cat/gadget/catalog.yaml'), 'gadget.v1.0.0'));
    expect(crd).toMatchObject({ apiVersion: 'apiextensions.k8s.io/v1beta1', spec: { version: 'v1alpha1' } });
  });

  it('import converts a v1beta1 CRD to v1 when asked, and warns what the conversion changed', async () => {
    const dir = await legacyGadget();
    const r = await bosun(
      dir,
      'catalog',
      'import',
      'package-manifests/community/gadget',
      'cat',
      '--convert-removed-apis',
      '--output',
      'json',
    );
    const report = json(r);
    expect(report).toMatchObject({ ok: true, errors: [] });
    const file = 'package-manifests/community/gadget/1.0.0/gadgets.crd.yaml';
    expect(report.warnings).toEqual([
      {
        file,
        object: 'CustomResourceDefinition/gadgets.fixtures.bosun.dev',
        field: 'apiVersion',
        message:
          'apiextensions.k8s.io/v1beta1 is not served by Kubernetes 1.22 and later; converted to apiextensions.k8s.io/v1',
      },
      {
        file,
        object: 'CustomResourceDefinition/gadgets.fixtures.bosun.dev',
        field: 'spec.validation.openAPIV3Schema.properties.spec.properties.tags.uniqueItems',
        message:
          'uniqueItems: true is not allowed in apiextensions.k8s.io/v1; dropped, so repeated items are accepted',
      },
    ]);
    const crd = crdOf(await bundleObjects(join(dir, 'cat/gadget/catalog.yaml'), 'gadget.v1.0.0'));
    expect(crd).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      spec: {
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    expect(json(await bosun(dir, 'catalog', 'validate', 'cat', '--output', 'json'))).toMatchObject({
      ok: true,
    });
  });

  it('publish converts the bundle before validating and writing it, and prints the warnings', async () => {
    const dir = await workdir('bundles');
    await writeFile(
      join(dir, 'bundles/bosun-sample/0.1.0/manifests/widgets.sample.bosun.dev.crd.yaml'),
      legacyCrd('sample.bosun.dev', 'Widget', 'widgets'),
    );
    const plain = await bosun(dir, 'catalog', 'publish', 'plain', 'bundles/bosun-sample/0.1.0');
    expect(plain.code).toBe(0);
    const asPublished = crdOf(
      await bundleObjects(join(dir, 'plain/bosun-sample/catalog.yaml'), 'bosun-sample.v0.1.0'),
    );
    expect(asPublished?.apiVersion).toBe('apiextensions.k8s.io/v1beta1');

    const r = await bosun(
      dir,
      'catalog',
      'publish',
      'cat',
      'bundles/bosun-sample/0.1.0',
      '--convert-removed-apis',
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'warning: bundles/bosun-sample/0.1.0/manifests/widgets.sample.bosun.dev.crd.yaml: CustomResourceDefinition/widgets.sample.bosun.dev: apiVersion: apiextensions.k8s.io/v1beta1 is not served by Kubernetes 1.22 and later; converted to apiextensions.k8s.io/v1',
    );
    const crd = crdOf(await bundleObjects(join(dir, 'cat/bosun-sample/catalog.yaml'), 'bosun-sample.v0.1.0'));
    expect(crd?.apiVersion).toBe('apiextensions.k8s.io/v1');
  });

  it('both commands document the flag in their help', async () => {
    for (const command of ['import', 'publish']) {
      const r = await bosun(await workdir(), 'catalog', command, '--help');
      expect(r.stdout).toMatch(/--convert-removed-apis +Convert manifests of removed API versions/);
      expect(r.stdout).toContain('what is written is what opm writes');
    }
  });
});

describe('bosun catalog diff', () => {
  it('flags a version left without an upgrade path as breaking', async () => {
    const dir = await workdir('catalogs');
    await cp(join(dir, 'catalogs/bosun-samples'), join(dir, 'new'), { recursive: true });
    const file = join(dir, 'new/bosun-sample/catalog.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text.replace(
        '- name: bosun-sample.v0.1.0\n- name: bosun-sample.v0.1.1\n  replaces: bosun-sample.v0.1.0\n',
        '- name: bosun-sample.v0.1.1\n',
      ),
    );
    const r = await bosun(dir, 'catalog', 'diff', 'catalogs/bosun-samples', 'new');
    expect(r.stdout).toBe(
      '         bosun-sample: edges of bosun-sample.v0.1.1 in stable changed from replaces bosun-sample.v0.1.0 to (none)\n' +
        'BREAKING bosun-sample: bosun-sample.v0.1.0 was in stable but has no upgrade path to its head bosun-sample.v0.2.1 any more\n' +
        '2 changes, 1 breaking\n',
    );
    expect(r.code).toBe(0);
    expect(
      (await bosun(dir, 'catalog', 'diff', 'catalogs/bosun-samples', 'new', '--fail-on-breaking')).code,
    ).toBe(1);
    expect(
      json(await bosun(dir, 'catalog', 'diff', 'catalogs/bosun-samples', 'new', '--output', 'json')),
    ).toMatchObject({
      breaking: 1,
      changes: [{ kind: 'EdgesChanged' }, { kind: 'Stranded', bundle: 'bosun-sample.v0.1.0' }],
    });
  });
});

describe('bosun catalog template semver', () => {
  it('renders a template whose bundles are directories next to it', async () => {
    const dir = await workdir('bundles');
    await writeFile(
      join(dir, 'template.yaml'),
      'schema: olm.semver\ngenerateMajorChannels: true\ncandidate:\n  bundles:\n  - image: bundles/bosun-sample/0.1.0\n  - image: bundles/bosun-sample/0.2.0\nstable:\n  bundles:\n  - image: bundles/bosun-sample/0.1.1\n  - image: bundles/bosun-sample/0.2.1\n',
    );
    const r = await bosun(dir, 'catalog', 'template', 'semver', 'template.yaml', '-o', 'json');
    expect(r.stderr).toBe('');
    const docs = r.stdout.split(/\n(?=\{)/).map((d) => JSON.parse(d));
    // The default channel's head (0.2.1) gives the package its description and icon.
    expect(docs[0]).toEqual({
      schema: 'olm.package',
      name: 'bosun-sample',
      defaultChannel: 'stable-v0',
      description: expect.stringContaining('The Bosun sample operator keeps Widgets'),
      icon: { base64data: expect.stringMatching(/^PHN2Zy/), mediatype: 'image/svg+xml' },
    });
    expect(docs.filter((d) => d.schema === 'olm.channel').map((d) => d.name)).toEqual([
      'candidate-v0',
      'stable-v0',
    ]);
    expect(docs.find((d) => d.name === 'stable-v0').entries).toEqual([
      { name: 'bosun-sample.v0.1.1' },
      { name: 'bosun-sample.v0.2.1', replaces: 'bosun-sample.v0.1.1' },
    ]);
    expect(docs.filter((d) => d.schema === 'olm.bundle')).toHaveLength(4);
  });

  it('links as opm v1.73’s semver template does, all three archetypes, both channel kinds', async () => {
    // The rules of operator-registry v1.73's semver template (alpha/template/semver); the
    // integration test opm-differential.test.ts compares whole outputs with opm itself.
    const dir = await workdir('bundles');
    const ref = (v: string) => `  - image: bundles/bosun-sample/${v}\n`;
    await writeFile(
      join(dir, 't.yaml'),
      'schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\n' +
        `candidate:\n  bundles:\n${['0.1.0', '0.1.1', '0.2.0', '0.2.1'].map(ref).join('')}` +
        `fast:\n  bundles:\n${['0.1.1', '0.2.0'].map(ref).join('')}` +
        `stable:\n  bundles:\n${ref('0.1.1')}`,
    );
    const r = await bosun(dir, 'catalog', 'template', 'semver', 't.yaml', '-o', 'json');
    const docs = r.stdout.split(/\n(?=\{)/).map((d) => JSON.parse(d));
    const s = (v: string) => `bosun-sample.v${v}`;
    expect(docs[0].defaultChannel).toBe('stable-v0.1');
    expect(
      Object.fromEntries(docs.filter((d) => d.schema === 'olm.channel').map((d) => [d.name, d.entries])),
    ).toEqual({
      'candidate-v0': [
        { name: s('0.1.0') },
        { name: s('0.1.1'), skips: [s('0.1.0')] },
        { name: s('0.2.0') },
        { name: s('0.2.1'), replaces: s('0.1.1'), skips: [s('0.1.0'), s('0.2.0')] },
      ],
      'candidate-v0.1': [{ name: s('0.1.0') }, { name: s('0.1.1'), skips: [s('0.1.0')] }],
      'candidate-v0.2': [
        { name: s('0.2.0') },
        { name: s('0.2.1'), replaces: s('0.1.1'), skips: [s('0.1.0'), s('0.2.0')] },
      ],
      'fast-v0': [{ name: s('0.1.1') }, { name: s('0.2.0'), replaces: s('0.1.1') }],
      'fast-v0.1': [{ name: s('0.1.1') }],
      'fast-v0.2': [{ name: s('0.2.0'), replaces: s('0.1.1') }],
      'stable-v0': [{ name: s('0.1.1') }],
      'stable-v0.1': [{ name: s('0.1.1') }],
    });
  });

  it('names the template field that is wrong', async () => {
    const dir = await workdir();
    await writeFile(
      join(dir, 't.yaml'),
      'schema: olm.semver\nstable:\n  bundles:\n  - image: nowhere/bundle\n',
    );
    const r = await bosun(dir, 'catalog', 'template', 'semver', 't.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('t.yaml: nowhere/bundle: Bosun renders bundle directories and archives');
  });
});

describe('bosun catalog build', () => {
  it('builds a valid catalog into an OCI layout, and refuses an invalid one with its errors and nothing written', async () => {
    const dir = await workdir('catalogs/bosun-samples', 'test/fixtures/bad');
    const good = await bosun(dir, 'catalog', 'build', 'bosun-samples', '--oci-layout', 'good');
    expect(good.code).toBe(0);
    expect(good.stdout).toMatch(
      /^built catalog bosun-samples \(2 packages, \d+ bundles\) as sha256:[0-9a-f]{64}: written to good:latest\n$/,
    );
    await mkdir(join(dir, 'invalid'));
    await cp(join(dir, 'bad', 'replaces-cycle.yaml'), join(dir, 'invalid', 'catalog.yaml'));
    const r = await bosun(dir, 'catalog', 'build', 'invalid', '--oci-layout', 'out');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('invalid/catalog.yaml');
    expect(r.stdout + r.stderr).toMatch(/not built: invalid is not a valid catalog \(\d+ errors?/);
    await expect(stat(join(dir, 'out'))).rejects.toThrow(/ENOENT/);
  });
});
