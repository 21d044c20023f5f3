/**
 * Bosun's catalog commands against opm v1.73.0 itself (tools/opm, built from operator-registry's
 * Go module on first use and cached): the same verdict from `opm validate` and `bosun catalog
 * validate`, the same objects from `opm render` and `bosun catalog render` (properties compared
 * as sets), the same output from the semver template, and catalogs written by `opm migrate` read
 * and resolved by Bosun. Each comparison prints its agreement count. Differences Bosun makes on
 * purpose are named here and listed in the README:
 * - Bosun's render adds an `olm.csv.metadata` property, which opm writes only when migrating;
 * - a JSON catalog file that is not UTF-8 is refused (opm reads the bad bytes as U+FFFD).
 *
 * Skips, saying why, when opm cannot be built here; the corpus parts need BOSUN_CORPUS_DIR.
 */
import { existsSync, readdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { importedCorpus } from '../../support/corpus-import.js';
import { type GoProgram } from '../../support/go-tool.js';
import { opmBinary, run } from '../../support/opm.js';
import { repo, runBosun } from '../../unit/cli/run-bosun.js';
import { canonicalJson } from '../../../src/util/canonical-json.js';
import { type Doc as BaseDoc, documents } from '../../support/fbc-documents.js';

const CORPUS = process.env.BOSUN_CORPUS_DIR;
const IMAGE_TEMPLATE = 'bundles.example/{{.Package}}:v{{.Version}}';

type Doc = BaseDoc & { properties?: { type?: string }[] };

/** A document as compared: properties as a set, without Bosun's own `olm.csv.metadata`. */
function comparable(doc: Doc, dropCsvMetadata: boolean): string {
  const props = doc.properties
    ?.filter((p) => !(dropCsvMetadata && p.type === 'olm.csv.metadata'))
    .map(canonicalJson)
    .sort();
  return canonicalJson({ ...doc, ...(props ? { properties: props } : {}) });
}

const keyOf = (d: Doc) => `${String(d.schema)}/${String(d.package ?? '')}/${String(d.name ?? '')}`;

/** The keys of documents that differ, or are in one output only. */
function differences(opm: Doc[], bosun: Doc[]): string[] {
  // opm never writes olm.csv.metadata when rendering, so Bosun's is left out only then.
  const opmWritesMetadata = opm.some((d) => d.properties?.some((p) => p.type === 'olm.csv.metadata'));
  const theirs = new Map(opm.map((d) => [keyOf(d), comparable(d, false)]));
  const ours = new Map(bosun.map((d) => [keyOf(d), comparable(d, !opmWritesMetadata)]));
  const keys = new Set([...theirs.keys(), ...ours.keys()]);
  return [...keys].filter((k) => theirs.get(k) !== ours.get(k)).sort();
}

const bosun = (...args: string[]) => runBosun(args);

/**
 * Bundles opm renders and Bosun refuses, on purpose (README): `opm render` checks little, while
 * Bosun's render validates a bundle first, as operator-framework's bundle validator does.
 */
const RENDER_DEPARTURES = [
  {
    name: 'a CRD its CSV does not own',
    matches: (err: string) => err.includes('the CSV does not list it as owned'),
  },
  {
    name: 'two CSVs (opm keeps the first it finds)',
    matches: (err: string) => /the bundle has \d+ ClusterServiceVersions/.test(err),
  },
  {
    name: 'a CSV whose apiVersion is not operators.coreos.com/v1alpha1',
    matches: (err: string) => err.includes('must be operators.coreos.com/v1alpha1'),
  },
  {
    name: 'a CRD schema keyword that is a misplaced property',
    matches: (err: string) => err.includes('is not a JSON-schema keyword'),
  },
];

describe('catalog commands against opm v1.73.0', () => {
  let opm: GoProgram = { ok: false, why: 'not looked for yet' };
  let work = '';

  beforeAll(async () => {
    opm = await opmBinary();
    work = await mkdtemp(join(tmpdir(), 'bosun-opm-diff-'));
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** opm's path, or the test is skipped saying why. */
  function opmPath(ctx: TestContext, what: string): string {
    if (!opm.ok) {
      console.warn(`${what} against opm skipped: ${opm.why}`);
      ctx.skip();
    }
    return opm.ok ? opm.path : '';
  }

  function corpus(ctx: TestContext, what: string): string {
    if (!CORPUS || !existsSync(CORPUS)) {
      console.warn(`${what} against opm skipped: set BOSUN_CORPUS_DIR to the OperatorHub corpus`);
      ctx.skip();
    }
    return CORPUS ?? '';
  }

  /** Catalog directories made for the validate comparison, each with its name. */
  async function validateCases(): Promise<{ name: string; dir: string; departure?: string }[]> {
    const cases: { name: string; dir: string; departure?: string }[] = [];
    const place = async (name: string, file: string, content: string | Buffer, departure?: string) => {
      const dir = join(work, 'validate', name);
      await mkdir(join(dir, 'pkg'), { recursive: true });
      await writeFile(join(dir, 'pkg', file), content);
      cases.push({ name, dir, ...(departure ? { departure } : {}) });
    };
    const bad = join(repo, 'test/fixtures/bad');
    for (const f of readdirSync(bad).filter((f) => f.endsWith('.yaml')))
      await place(`bad/${f}`, 'catalog.yaml', await readFile(join(bad, f)));
    cases.push({ name: 'catalogs/bosun-samples', dir: join(repo, 'catalogs/bosun-samples') });
    cases.push({ name: 'fixtures/catalogs/mixed', dir: join(repo, 'test/fixtures/catalogs/mixed') });

    const sample = await readFile(join(repo, 'catalogs/bosun-samples/bosun-sample/catalog.yaml'), 'utf8');
    await place('a catalog file named package.yaml', 'package.yaml', sample);
    // A valid one-bundle catalog, but for `café` written in Latin-1 (0xE9).
    const docs = [
      { schema: 'olm.package', name: 'pkg', defaultChannel: 'stable', description: 'caf\xe9' },
      { schema: 'olm.channel', package: 'pkg', name: 'stable', entries: [{ name: 'pkg.v1.0.0' }] },
      {
        schema: 'olm.bundle',
        package: 'pkg',
        name: 'pkg.v1.0.0',
        image: 'quay.example/pkg:v1.0.0',
        properties: [{ type: 'olm.package', value: { packageName: 'pkg', version: '1.0.0' } }],
      },
    ];
    const latin1 = (text: string) => Buffer.from(text, 'latin1');
    await place(
      'a YAML file that is not UTF-8',
      'catalog.yaml',
      latin1(docs.map((d) => `---\n${JSON.stringify(d)}\n`).join('')),
    );
    await place(
      'a JSON file that is not UTF-8',
      'catalog.json',
      latin1(docs.map((d) => JSON.stringify(d)).join('\n')),
      'Bosun refuses a JSON file that is not UTF-8; opm reads the bad bytes as U+FFFD',
    );
    await place(
      'a bundle image that is not a reference',
      'catalog.yaml',
      sample.replace(/image: (\S+)/, 'image: docker.io/strimzi/operator@@sha256:abc'),
    );
    return cases;
  }

  it('validate: the same verdict on every catalog fixture and bad input', async (ctx) => {
    const path = opmPath(ctx, 'validate');
    const cases = await validateCases();
    const rows = [];
    for (const c of cases) {
      const theirs = (await run(path, ['validate', c.dir], work)).code === 0;
      const ours = (await bosun('catalog', 'validate', c.dir)).code === 0;
      rows.push({ name: c.name, opm: theirs, bosun: ours, departure: c.departure });
    }
    const agree = rows.filter((r) => r.opm === r.bosun);
    console.log(`validate verdicts: ${agree.length} of ${rows.length} agree with opm`);
    // Each disagreement is a named departure, and each departure disagrees as named.
    expect(rows.filter((r) => (r.opm !== r.bosun) !== (r.departure !== undefined))).toEqual([]);
    expect(rows.filter((r) => r.departure && r.bosun)).toEqual([]);
  });

  /**
   * Renders each bundle with both: where both render, the objects must be the same; where only
   * opm renders, Bosun's refusal must be a named departure. Returns a line for the report.
   */
  async function compareRenders(path: string, dirs: string[], what: string): Promise<void> {
    const rows = [];
    for (const dir of dirs) {
      const theirs = await run(path, ['render', dir, '-o', 'json'], work);
      const ours = await bosun('catalog', 'render', dir, '-o', 'json');
      const departure =
        theirs.code === 0 && ours.code !== 0
          ? (RENDER_DEPARTURES.find((d) => d.matches(ours.stderr)) ??
            ((await opmRefusesInACatalog(path, documents(theirs.stdout)))
              ? { name: 'what opm validate refuses once the bundle is in a catalog' }
              : undefined))
          : undefined;
      const diffs =
        theirs.code === 0 && ours.code === 0
          ? differences(documents(theirs.stdout), documents(ours.stdout))
          : [];
      rows.push({
        dir,
        opm: theirs.code === 0,
        bosun: ours.code === 0,
        diffs,
        departure: departure?.name,
        stderr: ours.stderr,
      });
    }
    const same = rows.filter((r) => r.opm === r.bosun && r.diffs.length === 0);
    const departed = rows.filter((r) => r.departure);
    console.log(
      `render, ${what}: ${same.length} of ${rows.length} agree with opm` +
        (departed.length
          ? `; ${departed.length} refused by Bosun on purpose (${[...new Set(departed.map((r) => r.departure))].join(', ')})`
          : ''),
    );
    expect(rows.filter((r) => !same.includes(r) && !r.departure)).toEqual([]);
  }

  /**
   * Variants of the minimal fixture for the rules where reading could differ: the CSV's
   * olm.properties annotation (with and without metadata/properties.yaml, and an olm.package in
   * either), and a CRD file of several documents.
   */
  async function craftedBundles(): Promise<string[]> {
    const variants: Record<string, (dir: string) => Promise<void>> = {
      'annotation-properties': (dir) =>
        annotate(dir, [
          { type: 'olm.maxOpenShiftVersion', value: '4.8' },
          {
            type: 'olm.constraint',
            value: { failureMessage: 'x', gvk: { group: 'g', kind: 'K', version: 'v1' } },
          },
        ]),
      'annotation-and-properties-file': async (dir) => {
        await annotate(dir, [
          { type: 'olm.package', value: { packageName: 'gizmo', version: '1.0.0' } },
          { type: 'olm.gvk', value: { group: 'g', kind: 'K', version: 'v1' } },
        ]);
        await writeFile(
          join(dir, 'metadata/properties.yaml'),
          'properties:\n- type: olm.package\n  value: {packageName: gizmo, version: 1.0.0}\n- type: olm.label\n  value: {label: l}\n',
        );
      },
      'annotation-not-a-list': (dir) => annotate(dir, { type: 'olm.label' }),
      'crd-file-of-three-documents': async (dir) => {
        const file = join(dir, 'manifests/gizmos.crd.yaml');
        const crd = await readFile(file, 'utf8');
        const other = (kind: string) =>
          crd.replaceAll('gizmos', `${kind.toLowerCase()}s`).replace(/kind: Gizmo\b/g, `kind: ${kind}`);
        await writeFile(file, `---\n${crd}---\n${other('Sprocket')}---\n${other('Cog')}`);
      },
    };
    const dirs = [];
    for (const [name, change] of Object.entries(variants)) {
      const dir = join(work, 'crafted', name);
      await cp(join(repo, 'test/fixtures/bundles/minimal'), dir, { recursive: true });
      await change(dir);
      dirs.push(dir);
    }
    return dirs;
  }

  /** Sets the CSV's olm.properties annotation (JSON of `value`). */
  async function annotate(dir: string, value: unknown): Promise<void> {
    const file = join(dir, 'manifests/gizmo.csv.yaml');
    const csv = await readFile(file, 'utf8');
    const line = `  annotations:\n    olm.properties: '${JSON.stringify(value)}'\n`;
    await writeFile(file, csv.replace('  name: gizmo.v1.0.0\n', `  name: gizmo.v1.0.0\n${line}`));
  }

  /** Whether `opm validate` refuses a one-channel catalog holding opm's rendering of a bundle. */
  async function opmRefusesInACatalog(path: string, docs: Doc[]): Promise<boolean> {
    const b = docs.find((d) => d.schema === 'olm.bundle');
    if (!b) return false;
    const dir = await mkdtemp(join(work, 'one-bundle-'));
    const catalog = [
      { schema: 'olm.package', name: b.package, defaultChannel: 'c' },
      { schema: 'olm.channel', package: b.package, name: 'c', entries: [{ name: b.name }] },
      b,
    ];
    await writeFile(join(dir, 'catalog.json'), catalog.map((d) => JSON.stringify(d)).join('\n'));
    return (await run(path, ['validate', dir], work)).code !== 0;
  }

  it('render: the same objects for every sample bundle, and the same verdict on bad bundles', async (ctx) => {
    const path = opmPath(ctx, 'render');
    const samples = ['bosun-sample', 'bosun-sample-dashboard'].flatMap((p) =>
      readdirSync(join(repo, 'bundles', p)).map((v) => join(repo, 'bundles', p, v)),
    );
    samples.push(join(repo, 'test/fixtures/bundles/full'), join(repo, 'test/fixtures/bundles/minimal'));
    await compareRenders(path, samples, 'sample bundles');
    await compareRenders(path, await craftedBundles(), 'bundles made for the rules opm reads by');
    const bad = join(repo, 'test/fixtures/bad');
    const dirs = readdirSync(bad, { withFileTypes: true }).filter((d) => d.isDirectory());
    await compareRenders(
      path,
      dirs.map((d) => join(bad, d.name)),
      'bad bundles',
    );
  });

  it('render: the same objects for 20 corpus bundles', async (ctx) => {
    const path = opmPath(ctx, 'render of corpus bundles');
    const root = corpus(ctx, 'render of corpus bundles');
    // Bundle-format versions of the corpus (metadata/annotations.yaml), 20 evenly spread.
    const all = readdirSync(root)
      .sort()
      .flatMap((p) =>
        readdirSync(join(root, p))
          .sort()
          .map((v) => join(root, p, v))
          .filter((d) => existsSync(join(d, 'metadata/annotations.yaml'))),
      );
    await compareRenders(
      path,
      Array.from({ length: 20 }, (_, i) => all[Math.floor((i * all.length) / 20)]!),
      'corpus bundles',
    );
  });

  it('the corpus import: opm validates it, and renders it to the very bytes Bosun does', async (ctx) => {
    const path = opmPath(ctx, 'the corpus import');
    const root = corpus(ctx, 'the corpus import');
    const { dir: out, ...imported } = await importedCorpus(root);
    expect(imported.code, imported.stderr.slice(-2000)).toBe(0);
    const theirs = await run(path, ['validate', out], work);
    expect(theirs.code, theirs.out.slice(-2000)).toBe(0);
    expect((await bosun('catalog', 'validate', out)).code).toBe(0);
    const opmText = await run(path, ['render', out, '-o', 'json'], work);
    const ours = await bosun('catalog', 'render', out, '-o', 'json');
    const opmDocs = documents(opmText.stdout);
    const diffs = differences(opmDocs, documents(ours.stdout));
    console.log(
      `render of the corpus import: ${opmDocs.length - diffs.length} of ${opmDocs.length} documents agree with opm` +
        `; the JSON is ${ours.stdout === opmText.stdout ? '' : 'not '}byte for byte opm's`,
    );
    expect(diffs).toEqual([]);
    expect(ours.stdout === opmText.stdout).toBe(true);
  });

  /** A semver template of bundle directories, written beside them. */
  async function template(name: string, body: Record<string, unknown>): Promise<string> {
    const file = join(work, 'templates', `${name}.yaml`);
    await mkdir(join(work, 'templates'), { recursive: true });
    await writeFile(file, JSON.stringify({ schema: 'olm.semver', ...body }));
    return file;
  }
  const bundles = (dirs: string[]) => ({ bundles: dirs.map((image) => ({ image })) });

  async function sameTemplateOutput(path: string, file: string): Promise<string[]> {
    const theirs = await run(path, ['semver-dirs', '--image-ref-template', IMAGE_TEMPLATE, file], work);
    expect(theirs.code, theirs.out.slice(-2000)).toBe(0);
    const ours = await bosun(
      'catalog',
      'template',
      'semver',
      file,
      '-o',
      'json',
      '--image-ref-template',
      IMAGE_TEMPLATE,
    );
    expect(ours.code, ours.stderr).toBe(0);
    return differences(documents(theirs.stdout), documents(ours.stdout));
  }

  /** Renders each template with both; every output must be opm's. */
  async function compareTemplates(
    path: string,
    named: [string, Record<string, unknown>][],
    what: string,
  ): Promise<void> {
    const diffs: string[] = [];
    for (const [name, body] of named)
      diffs.push(...(await sameTemplateOutput(path, await template(name, body))).map((d) => `${name}: ${d}`));
    const differing = new Set(diffs.map((d) => d.split(':')[0])).size;
    console.log(`semver template: ${named.length - differing} of ${named.length} ${what} identical to opm's`);
    expect(diffs).toEqual([]);
  }

  it('semver template: the same package, channels and bundles as opm’s', async (ctx) => {
    const path = opmPath(ctx, 'the semver template');
    const v = (s: string) => join(repo, 'bundles/bosun-sample', s);
    const all = ['0.1.0', '0.1.1', '0.2.0', '0.2.1'].map(v);
    const heads = [v('0.1.1'), v('0.2.1')];
    const templates = [
      // The template: both channel kinds, fast and stable holding each Y-stream's head.
      {
        generateMajorChannels: true,
        generateMinorChannels: true,
        candidate: bundles(all),
        fast: bundles(heads),
        stable: bundles(heads),
      },
      { generateMajorChannels: true, candidate: bundles(all), stable: bundles([v('0.1.1')]) },
      { candidate: bundles([...all].reverse()), fast: bundles([v('0.2.0')]) },
      {
        generateMajorChannels: true,
        generateMinorChannels: true,
        defaultChannelTypePreference: 'major',
        stable: bundles(all),
      },
    ];
    await compareTemplates(
      path,
      templates.map((t, i) => [`sample-${i}`, t]),
      'sample templates',
    );
  });

  it('semver template: the same output on corpus packages with many versions', async (ctx) => {
    const path = opmPath(ctx, 'the semver template on the corpus');
    const root = corpus(ctx, 'the semver template on the corpus');
    const named: [string, Record<string, unknown>][] = [];
    for (const pkg of ['mongodb-enterprise', 'kiali', 'kogito-operator', 'keycloak-operator']) {
      // Versions Bosun's render refuses on purpose (see RENDER_DEPARTURES) stay out.
      const dirs = [];
      for (const d of readdirSync(join(root, pkg)).map((v) => join(root, pkg, v)))
        if (
          existsSync(join(d, 'metadata/annotations.yaml')) &&
          (await bosun('catalog', 'render', d)).code === 0
        )
          dirs.push(d);
      // Every version a candidate, every other one fast, every third stable; both channel kinds.
      const body = {
        generateMajorChannels: true,
        generateMinorChannels: true,
        candidate: bundles(dirs),
        fast: bundles(dirs.filter((_, i) => i % 2 === 0)),
        stable: bundles(dirs.filter((_, i) => i % 3 === 0)),
      };
      named.push([pkg, body]);
    }
    await compareTemplates(path, named, 'corpus packages');
  });

  it('a catalog written by opm migrate loads and resolves as the original does', async (ctx) => {
    const path = opmPath(ctx, 'opm migrate');
    const source = join(work, 'migrate-source');
    await cp(join(repo, 'catalogs/bosun-samples'), source, { recursive: true });
    const subscription = join(work, 'subscription.yaml');
    await writeFile(
      subscription,
      'apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: sample, namespace: ops}\n' +
        'spec: {name: bosun-sample-dashboard, source: samples, sourceNamespace: olm, channel: stable}\n',
    );
    const resolveWith = (dir: string) =>
      bosun('resolve', `--catalog=olm/samples=${dir}`, `--subscription=${subscription}`, '-o', 'json');
    const original = await resolveWith(source);
    expect(original.code, original.stderr).toBe(0);
    for (const level of ['none', 'bundle-object-to-csv-metadata']) {
      const out = join(work, `migrated-${level}`);
      const migrated = await run(path, ['migrate', source, out, '--migrate-level', level], work);
      expect(migrated.code, migrated.out).toBe(0);
      expect((await bosun('catalog', 'validate', out)).code).toBe(0);
      const resolved = await resolveWith(out);
      expect(resolved.code, resolved.stderr).toBe(0);
      expect(JSON.parse(resolved.stdout), basename(out)).toEqual(JSON.parse(original.stdout));
    }
  });
});
