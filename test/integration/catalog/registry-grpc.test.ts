/**
 * Catalogs read over operator-registry's gRPC API (`sourceType: grpc` with `spec.address`) from
 * opm v1.73.0's own `opm serve` (tools/opm, built on first use), compared with `bosun catalog
 * render` of the same directory (a manager installing from it is
 * test/integration/controllers/catalogsource-grpc.test.ts); and the servers that are not one:
 * down, not gRPC, silent, NOT_SERVING, without the Registry service, or hostile (endless,
 * oversized, dripping, lying, garbled, or reached through a socket path).
 *
 * What the API provably loses is normalised away on both sides before comparing, each rule with
 * its reason (LOST below); everything else must be equal. Skips, saying why, when opm cannot be
 * built here; the corpus needs BOSUN_CORPUS_DIR.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { DeclarativeConfig } from '../../../src/apis/fbc.js';
import {
  fetchRegistryCatalog,
  type RegistryCatalog,
  RegistryFailureKind,
} from '../../../src/catalog/grpc/fetch.js';
import { RegistryMethod, wire } from '../../../src/catalog/grpc/wire.js';
import { type GoProgram } from '../../support/go-tool.js';
import { opmBinary } from '../../support/opm.js';
import { type OpmServer, startOpmServe } from '../../support/opm-serve.js';
import {
  drip,
  endless,
  failing,
  grpcServer,
  raw,
  serving,
  stream,
  unary,
} from '../../support/registry-grpc-servers.js';
import { importedCorpus } from '../../support/corpus-import.js';
import { tempDir } from '../../support/temp-dir.js';
import { repo, runBosun } from '../../unit/cli/run-bosun.js';
import { eventually } from '../support.js';
import { canonicalJson } from '../../../src/util/canonical-json.js';
import { type Doc, documents } from '../../support/fbc-documents.js';

const CORPUS = process.env.BOSUN_CORPUS_DIR;
const MiB = 2 ** 20;

type Prop = { type: string; value: unknown };

const keyOf = (d: Doc) => `${String(d.schema)}/${String(d.package ?? '')}/${String(d.name ?? '')}`;
const propsOf = (d: Doc) => (d.properties ?? []) as Prop[];
const hasObjects = (d: Doc) => propsOf(d).some((p) => p.type === 'olm.bundle.object');
const hasMetadata = (d: Doc) => propsOf(d).some((p) => p.type === 'olm.csv.metadata');
/** A bundle opm serves a made-up CSV for: metadata and no manifests. */
const servedAsStub = (d: Doc) => hasMetadata(d) && !hasObjects(d);

/**
 * What the API loses, each with its reason (operator-registry v1.73, pkg/api/registry.proto and
 * pkg/api/model_to_api.go, pkg/cache/cache.go and pkgs.go), applied to both sides before they are
 * compared. Each returns how many documents it changed on Bosun's render, for the report.
 */
const LOST: { what: string; why: string; apply(render: Doc[], grpc: Doc[]): void }[] = [
  {
    // First: it reads the packages' descriptions, which the next rule removes.
    what: 'the description in a stub’s olm.csv.metadata when the metadata has none',
    why: 'opm fills an empty description of the CSV it makes up with the package’s (ConvertModelBundleToAPIBundle)',
    apply: (render, grpc) => {
      const described = new Map(
        render.filter((d) => d.schema === 'olm.package').map((d) => [d.name, d.description]),
      );
      for (const d of grpc.filter((g) => g.schema === 'olm.bundle')) {
        const ours = propsOf(d).find((p) => p.type === 'olm.csv.metadata')?.value as
          Record<string, unknown> | undefined;
        const theirs = render.find((r) => keyOf(r) === keyOf(d));
        const meta =
          theirs &&
          (propsOf(theirs).find((p) => p.type === 'olm.csv.metadata')?.value as Record<string, unknown>);
        if (ours && meta && meta.description === undefined && ours.description === described.get(d.package))
          delete ours.description;
      }
    },
  },
  {
    what: 'olm.package description',
    why: 'the API Package message has no description (name, channels, defaultChannelName, deprecation)',
    apply: (render) => render.filter((d) => d.schema === 'olm.package').forEach((d) => delete d.description),
  },
  {
    what: 'olm.package icon, unless a bundle of the package is served as a stub CSV',
    why: 'the Package message has no icon; opm copies it only into the CSVs it makes up for bundles with olm.csv.metadata and no manifests',
    apply: (render) => {
      const stubbed = new Set(
        render.filter((d) => d.schema === 'olm.bundle' && servedAsStub(d)).map((d) => d.package),
      );
      render.filter((d) => d.schema === 'olm.package' && !stubbed.has(d.name)).forEach((d) => delete d.icon);
    },
  },
  {
    what: 'olm.channel properties',
    why: 'the Channel message has only name, head and deprecation',
    apply: (render) => render.filter((d) => d.schema === 'olm.channel').forEach((d) => delete d.properties),
  },
  {
    what: 'the order of channel entries',
    why: 'ListBundles sends entries in the order of opm’s cache, not the catalog’s',
    apply: (render, grpc) =>
      [...render, ...grpc]
        .filter((d) => d.schema === 'olm.channel')
        .forEach((d) => (d.entries as { name: string }[]).sort((a, b) => (a.name < b.name ? -1 : 1))),
  },
  {
    what: 'olm.bundle relatedImages, unless served as a stub CSV',
    why: 'the Bundle message has no relatedImages; opm copies them only into a stub CSV',
    apply: (render) =>
      render
        .filter((d) => d.schema === 'olm.bundle' && !servedAsStub(d))
        .forEach((d) => delete d.relatedImages),
  },
  {
    what: 'olm.csv.metadata of a bundle with manifests',
    why: 'opm leaves the property out of the API’s properties (convertModelPropertiesToAPIProperties) and serves the bundle’s own CSV among its objects',
    apply: (render) =>
      render
        .filter((d) => d.schema === 'olm.bundle' && hasObjects(d))
        .forEach((d) => (d.properties = propsOf(d).filter((p) => p.type !== 'olm.csv.metadata'))),
  },
  {
    what: 'the bytes of each manifest (olm.bundle.object data)',
    why: 'opm serves each manifest as JSON re-encoded from the catalog’s data (yaml.ToJSON), so manifests are compared as the JSON values they decode to',
    apply: (render, grpc) => {
      for (const d of [...render, ...grpc].filter((x) => x.schema === 'olm.bundle'))
        d.properties = propsOf(d).map((p) =>
          p.type === 'olm.bundle.object'
            ? { type: p.type, value: { manifest: decodeManifest((p.value as { data: string }).data) } }
            : p,
        );
    },
  },
  {
    what: 'the order of properties',
    why: 'the API sends olm.bundle.object apart from the other properties (object and properties fields)',
    apply: (render, grpc) => {
      // Each property's canonical form made once, not once per comparison: manifests are large.
      for (const d of [...render, ...grpc].filter((x) => x.schema === 'olm.bundle'))
        d.properties = propsOf(d)
          .map((p) => [canonicalJson(p), p] as const)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([, p]) => p);
    },
  },
  {
    what: 'the order of deprecation entries, and an olm.deprecations document without entries',
    why: 'the API has no deprecations document, only a message on each deprecated package, channel and bundle',
    apply: (render, grpc) => {
      for (const d of [...render, ...grpc].filter((x) => x.schema === 'olm.deprecations'))
        (d.entries as unknown[]).sort((a, b) => (canonicalJson(a) < canonicalJson(b) ? -1 : 1));
      render.splice(
        0,
        render.length,
        ...render.filter((d) => d.schema !== 'olm.deprecations' || (d.entries as []).length > 0),
      );
    },
  },
  {
    what: 'documents of other schemas',
    why: 'api.Registry serves packages, channels and bundles only (the experimental service lists custom schemas only by a name the client must already know)',
    apply: (render) =>
      render.splice(
        0,
        render.length,
        ...render.filter((d) =>
          ['olm.package', 'olm.channel', 'olm.bundle', 'olm.deprecations'].includes(d.schema ?? ''),
        ),
      ),
  },
];

/**
 * A manifest as the value it holds: the catalog's may be YAML (the fixture's CRDs are), opm's is
 * JSON. JSON is read as JSON (the same value YAML gives it, at a fraction of the time over the
 * corpus's 4,000 manifests); anything else as YAML.
 */
function decodeManifest(data: string): unknown {
  const text = Buffer.from(data, 'base64').toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return parseYaml(text);
  }
}

const configDocs = (c: DeclarativeConfig): Doc[] =>
  JSON.parse(
    JSON.stringify([...c.packages, ...c.channels, ...c.bundles, ...c.deprecations, ...c.others]),
  ) as Doc[];

/** Documents that differ after the LOST rules, by key, or are in one side only. */
function differences(render: Doc[], grpc: Doc[]): string[] {
  for (const rule of LOST) rule.apply(render, grpc);
  const theirs = new Map(render.map((d) => [keyOf(d), canonicalJson(d)]));
  const ours = new Map(grpc.map((d) => [keyOf(d), canonicalJson(d)]));
  const differing = [...new Set([...theirs.keys(), ...ours.keys()])].filter(
    (k) => theirs.get(k) !== ours.get(k),
  );
  for (const k of differing.slice(0, 3))
    console.warn(
      `${k} differs:\n  render: ${theirs.get(k)?.slice(0, 3000)}\n  grpc:   ${ours.get(k)?.slice(0, 3000)}`,
    );
  return differing.sort();
}

/** How many manifests came back byte for byte as the catalog holds them. */
function identicalManifests(render: Doc[], grpc: DeclarativeConfig): { same: number; all: number } {
  const ours = new Set(
    grpc.bundles.flatMap((b) =>
      b.properties
        .filter((p) => p.type === 'olm.bundle.object')
        .map((p) => (p.value as { data: string }).data),
    ),
  );
  const datas = render.flatMap((d) =>
    propsOf(d)
      .filter((p) => p.type === 'olm.bundle.object')
      .map((p) => (p.value as { data: string }).data),
  );
  return { same: datas.filter((d) => ours.has(d)).length, all: datas.length };
}

describe('catalogs read from opm serve over gRPC', () => {
  let opm: GoProgram = { ok: false, why: 'not looked for yet' };
  const servers: OpmServer[] = [];

  beforeAll(async () => {
    opm = await opmBinary();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  async function serve(ctx: TestContext, dir: string, what: string): Promise<OpmServer> {
    if (!opm.ok) {
      console.warn(`${what} skipped: ${opm.why}`);
      ctx.skip();
    }
    const server = await startOpmServe(opm.ok ? opm.path : '', dir);
    servers.push(server);
    return server;
  }

  /** Reads `dir` through opm serve and compares with Bosun's render of it; returns the catalog read. */
  async function sameAsRender(ctx: TestContext, dir: string, what: string): Promise<RegistryCatalog> {
    const server = await serve(ctx, dir, what);
    const started = Date.now();
    const read = await fetchRegistryCatalog(server.address);
    const ms = Date.now() - started;
    if (!read.ok) throw new Error(read.errors.message);
    const rendered = await runBosun(['catalog', 'render', dir, '-o', 'json']);
    expect(rendered.code, rendered.stderr).toBe(0);
    const render = documents(rendered.stdout);
    const manifests = identicalManifests(render, read.value.config);
    const diffs = differences(render, configDocs(read.value.config));
    const { packages, bundles } = read.value.config;
    console.log(
      `${what}: ${render.length - diffs.length} of ${render.length} documents as rendered, ${packages.length} packages and ${bundles.length} bundles ` +
        `read in ${ms} ms (${(read.value.received.bytes / MiB).toFixed(1)} MiB in ${read.value.received.messages} messages, ${read.value.received.calls} calls; opm ready after ${server.startMs} ms); ` +
        `${manifests.same} of ${manifests.all} manifests byte for byte`,
    );
    expect(diffs).toEqual([]);
    return read.value;
  }

  it('the sample catalog: every document as bosun catalog render gives it, but for what the API loses', async (ctx) => {
    const { config } = await sameAsRender(
      ctx,
      join(repo, 'catalogs/bosun-samples'),
      'catalogs/bosun-samples',
    );
    expect(config.bundles.map((b) => b.name).sort()).toContain('bosun-sample.v0.2.1');
  });

  it('the sample catalog with bundle images: manifests come from GetBundle, one call per bundle', async (ctx) => {
    const dir = await tempDir('bosun-grpc-samples-');
    await cp(join(repo, 'catalogs/bosun-samples'), dir, { recursive: true });
    for (const pkg of ['bosun-sample', 'bosun-sample-dashboard']) {
      const file = join(dir, pkg, 'catalog.yaml');
      const text = await readFile(file, 'utf8');
      // Each bundle's image, named after the bundle (the documents' own `image: ''` lines).
      await writeFile(
        file,
        text.replace(/^image: ''\nname: (\S+)$/gm, 'image: quay.example/bundles/$1:latest\nname: $1'),
      );
    }
    const { config, received } = await sameAsRender(ctx, dir, 'catalogs/bosun-samples with bundle images');
    expect(config.bundles.every((b) => b.image.startsWith('quay.example/bundles/'))).toBe(true);
    // The health check, ListPackages, GetPackage of 2 packages, ListBundles, GetBundle of 6 bundles.
    expect(received.calls).toBe(1 + 1 + 2 + 1 + 6);
    expect(config.bundles.every((b) => b.properties.some((p) => p.type === 'olm.bundle.object'))).toBe(true);
  });

  it('the fixtures: deprecations, skips and skipRange, a bundle in two channels, image-only bundles, a bundle opm serves as a stub CSV', async (ctx) => {
    const { config: relay } = await sameAsRender(
      ctx,
      join(repo, 'test/fixtures/catalogs/registry-grpc'),
      'fixtures/catalogs/registry-grpc',
    );
    // The made-up CSV is read back as the metadata it came from, never as a manifest to install.
    const stubbed = relay.bundles.find((b) => b.name === 'relay.v1.0.0')!;
    expect(stubbed.properties.map((p) => p.type).sort()).toEqual([
      'olm.csv.metadata',
      'olm.gvk',
      'olm.package',
    ]);
    expect(relay.deprecations[0]?.entries).toHaveLength(3);
    await sameAsRender(ctx, join(repo, 'test/fixtures/catalogs/mixed'), 'fixtures/catalogs/mixed');
  });

  it(
    'the 2021 OperatorHub corpus, imported: every document as rendered, but for what the API loses',
    { timeout: 600_000 },
    async (ctx) => {
      if (!CORPUS || !existsSync(CORPUS)) {
        console.warn('the corpus over gRPC skipped: set BOSUN_CORPUS_DIR to the OperatorHub corpus');
        ctx.skip();
      }
      const { dir, ...imported } = await importedCorpus(CORPUS!);
      expect(imported.code, imported.stderr.slice(-2000)).toBe(0);
      const { config } = await sameAsRender(ctx, dir, 'the corpus import');
      expect(config.packages.length).toBeGreaterThan(180);
    },
  );

  it('a bundle past gRPC’s default 4 MiB message cap is read, from ListBundles and from GetBundle; one past maxMessageBytes is refused naming the limit', async (ctx) => {
    const dir = await tempDir('bosun-grpc-large-');
    await mkdir(join(dir, 'big'));
    // A CRD whose description makes it 6 MiB: one Bundle message of about 6 MiB either way.
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'bigs.big.fixtures.bosun.dev' },
      spec: { group: 'big.fixtures.bosun.dev', description: 'x'.repeat(6 * MiB) },
    };
    const bundle = (v: string, image: string) => ({
      schema: 'olm.bundle',
      package: 'big',
      name: `big.v${v}`,
      image,
      properties: [
        { type: 'olm.package', value: { packageName: 'big', version: v } },
        { type: 'olm.bundle.object', value: { data: Buffer.from(JSON.stringify(crd)).toString('base64') } },
      ],
    });
    const docs = [
      { schema: 'olm.package', name: 'big', defaultChannel: 'stable' },
      {
        schema: 'olm.channel',
        package: 'big',
        name: 'stable',
        entries: [{ name: 'big.v1.0.0' }, { name: 'big.v1.1.0', replaces: 'big.v1.0.0' }],
      },
      bundle('1.0.0', ''), // manifests in ListBundles
      bundle('1.1.0', 'quay.example/big-bundle:v1.1.0'), // manifests from GetBundle
    ];
    await writeFile(join(dir, 'big', 'catalog.json'), docs.map((d) => JSON.stringify(d)).join('\n'));
    const server = await serve(ctx, dir, 'the large bundle');
    const read = await fetchRegistryCatalog(server.address);
    expect(read.ok, read.ok ? '' : read.errors.message).toBe(true);
    if (!read.ok) return;
    const sizes = read.value.config.bundles.map((b) =>
      b.properties
        .filter((p) => p.type === 'olm.bundle.object')
        .map((p) => (p.value as { data: string }).data.length),
    );
    expect(sizes.flat().every((n) => n > 8 * MiB)).toBe(true); // 6 MiB as base64
    const capped = await fetchRegistryCatalog(server.address, { maxMessageBytes: 4 * MiB });
    expect(capped.ok).toBe(false);
    if (capped.ok) return;
    expect(capped.errors.kind).toBe(RegistryFailureKind.TooLarge);
    expect(capped.errors.message).toMatch(
      /^registry 127\.0\.0\.1:\d+: ListBundles: a message is larger than the limit of 4 MiB for one message/,
    );
  });
});

describe('servers that are not a registry', () => {
  it('a server that is down: Unavailable, within a second, naming the address', async () => {
    const port = await closedPort();
    const started = Date.now();
    const read = await fetchRegistryCatalog(`127.0.0.1:${port}`);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.errors.kind).toBe(RegistryFailureKind.Unavailable);
    expect(read.errors.message).toContain(
      `registry 127.0.0.1:${port}: health check: cannot reach a registry server there`,
    );
    expect(read.errors.message).toContain('ECONNREFUSED');
  });

  it('a port that speaks HTTP/1, one that says nothing, one that sends garbage: a clear failure within the deadline', async () => {
    const http = createHttpServer((_req, res) => res.end('<html>not gRPC</html>'));
    const silent = createTcpServer(() => {}); // accepts, never answers
    const garbage = createTcpServer((s) => s.end(Buffer.alloc(64 * 1024, 0xab)));
    try {
      const cases = [
        ['HTTP/1', await listen(http)],
        ['silent', await listen(silent)],
        ['garbage', await listen(garbage)],
      ] as const;
      for (const [what, port] of cases) {
        const started = Date.now();
        const read = await fetchRegistryCatalog(`127.0.0.1:${port}`, { timeoutMs: 2_000 });
        const ms = Date.now() - started;
        expect(read.ok, what).toBe(false);
        if (read.ok) continue;
        console.log(`${what}: ${read.errors.kind} after ${ms} ms: ${read.errors.message}`);
        expect(ms, what).toBeLessThan(3_000);
        expect(read.errors.message, what).toMatch(
          new RegExp(`^registry 127\\.0\\.0\\.1:${port}: health check: `),
        );
        expect(read.errors.kind, what).toBe(
          what === 'silent' ? RegistryFailureKind.Deadline : RegistryFailureKind.NotGrpc,
        );
      }
    } finally {
      await Promise.all([close(http), close(silent), close(garbage)]);
    }
  });

  it('a registry that answers the health check NOT_SERVING is refused as such, asked about service "Registry"', async () => {
    const asked: string[] = [];
    const server = await grpcServer({
      [RegistryMethod.HealthCheck]: unary(
        wire.healthCheckRequest,
        wire.healthCheckResponse,
        (req: { service: string }) => {
          asked.push(req.service);
          return { status: 2 };
        },
      ),
    });
    try {
      const read = await fetchRegistryCatalog(server.address);
      expect(read.ok).toBe(false);
      if (read.ok) return;
      expect(read.errors.kind).toBe(RegistryFailureKind.NotServing);
      expect(read.errors.message).toBe(
        `registry ${server.address}: the health check (grpc.health.v1.Health/Check of service "Registry") answers NOT_SERVING, not SERVING`,
      );
      expect(asked).toEqual(['Registry']);
    } finally {
      await server.stop();
    }
  });

  it('a gRPC server without api.Registry: Unimplemented, naming the method', async () => {
    const server = await grpcServer({ [RegistryMethod.HealthCheck]: serving });
    try {
      const read = await fetchRegistryCatalog(server.address);
      expect(read.ok).toBe(false);
      if (read.ok) return;
      expect(read.errors.kind).toBe(RegistryFailureKind.Unimplemented);
      expect(read.errors.message).toMatch(
        /ListPackages: the server answers gRPC but does not implement api\.Registry\/ListPackages/,
      );
    } finally {
      await server.stop();
    }
  });

  it('a registry that never answers ListBundles: each call’s deadline, then the whole fetch’s', async () => {
    const server = await grpcServer({
      [RegistryMethod.HealthCheck]: serving,
      [RegistryMethod.ListPackages]: stream(wire.listPackagesRequest, wire.packageName, () => []),
      [RegistryMethod.ListBundles]: () => {}, // never ends the stream
    });
    try {
      let started = Date.now();
      const perCall = await fetchRegistryCatalog(server.address, { timeoutMs: 1_000 });
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(perCall.ok ? '' : perCall.errors.message).toMatch(
        /ListBundles: no answer within 1\.0 s, the deadline of each call$/,
      );
      started = Date.now();
      const whole = await fetchRegistryCatalog(server.address, { timeoutMs: 60_000, totalTimeoutMs: 1_500 });
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(whole.ok ? '' : whole.errors.kind).toBe(RegistryFailureKind.Deadline);
      expect(whole.ok ? '' : whole.errors.message).toMatch(
        /ListBundles: the fetch did not finish within its deadline/,
      );
      // The caller's own signal ends it at once, too.
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      started = Date.now();
      const aborted = await fetchRegistryCatalog(server.address, { signal: controller.signal });
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(aborted.ok ? '' : aborted.errors.kind).toBe(RegistryFailureKind.Aborted);
    } finally {
      await server.stop();
    }
  });
});

describe('a hostile registry server', () => {
  const listsNothing = stream(wire.listPackagesRequest, wire.packageName, () => []);

  it('cannot make Bosun take more than its budget: endless empty messages, endless bundles', async () => {
    const bundle = wire.bundle.encode({
      csvName: 'x.v1.0.0',
      packageName: 'x',
      object: ['y'.repeat(MiB)],
    } as never);
    const shapes = [
      // Empty messages end at the message budget (200,000 by default), bundles at the byte budget.
      [
        'empty package names',
        RegistryMethod.ListPackages,
        Buffer.alloc(0),
        // The default message budget, with deadlines long enough that on a loaded machine the
        // budget, not the clock, ends the stream.
        { timeoutMs: 300_000, totalTimeoutMs: 300_000 },
        // At most what the server may get out before the cancel reaches it: the budget and what
        // HTTP/2 flow control lets through beside it.
        400_000,
        /: the server sent more than 200000 messages in all, the limit for one catalog$/,
      ],
      [
        '1 MiB bundles',
        RegistryMethod.ListBundles,
        bundle,
        { maxTotalBytes: 8 * MiB, timeoutMs: 300_000, totalTimeoutMs: 300_000 },
        64,
        /: the server sent more than 8 MiB in all, the limit for one catalog \(BOSUN_CATALOG_MAX_FILE_MIB raises it, up to 500\)$/,
      ],
    ] as const;
    for (const [what, method, message, opts, most, why] of shapes) {
      const sent = { messages: 0, cancelled: false };
      const server = await grpcServer({
        [RegistryMethod.HealthCheck]: serving,
        [RegistryMethod.ListPackages]: listsNothing,
        [method]: endless(message, sent),
      });
      try {
        const started = Date.now();
        const read = await fetchRegistryCatalog(server.address, opts);
        const ms = Date.now() - started;
        expect(read.ok, what).toBe(false);
        if (read.ok) continue;
        expect(read.errors.kind, what).toBe(RegistryFailureKind.TooLarge);
        expect(read.errors.message, what).toMatch(why);
        await eventually(
          `the server to see ${what} cancelled`,
          async () => sent.cancelled || undefined,
          5_000,
        );
        // Bosun stops reading at its budget and cancels: the stream is never read to its end.
        expect(sent.messages, what).toBeLessThan(most);
        console.log(`${what}: refused after ${ms} ms and ${sent.messages} messages sent`);
      } finally {
        await server.stop();
      }
    }
  });

  it('cannot send one message past maxMessageBytes: refused from its length, before it is read', async () => {
    const huge = wire.bundle.encode({
      csvName: 'x.v1.0.0',
      packageName: 'x',
      object: ['z'.repeat(70 * MiB)],
    } as never);
    const server = await grpcServer({
      [RegistryMethod.HealthCheck]: serving,
      [RegistryMethod.ListPackages]: listsNothing,
      [RegistryMethod.ListBundles]: stream(
        wire.listBundlesRequest,
        { encode: (b: Buffer) => b, decode: () => ({}) } as never,
        () => [huge],
      ),
    });
    try {
      const read = await fetchRegistryCatalog(server.address);
      expect(read.ok ? '' : read.errors.kind).toBe(RegistryFailureKind.TooLarge);
      expect(read.ok ? '' : read.errors.message).toMatch(
        /ListBundles: a message is larger than the limit of 64 MiB for one message \(Received message larger than max \(73400\d+ vs 67108864\)\)$/,
      );
    } finally {
      await server.stop();
    }
  });

  it('cannot hold a call open by dripping: a package name every 200 ms still ends at the deadline', async () => {
    const server = await grpcServer({
      [RegistryMethod.HealthCheck]: serving,
      [RegistryMethod.ListPackages]: drip(wire.packageName.encode({ name: 'p' }), 200),
    });
    try {
      const started = Date.now();
      const read = await fetchRegistryCatalog(server.address, { timeoutMs: 1_500 });
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(read.ok ? '' : read.errors.message).toMatch(
        /ListPackages: no answer within 1\.5 s, the deadline of each call$/,
      );
    } finally {
      await server.stop();
    }
  });

  it('cannot write into Bosun’s messages: its error text is one line, escaped and cut short', async () => {
    const details = `\u001b[32mall good\u001b[0m\r\nCatalogSource ok\u202e${'x'.repeat(10_000)}`;
    const server = await grpcServer({ [RegistryMethod.HealthCheck]: failing(status.INTERNAL, details) });
    try {
      const read = await fetchRegistryCatalog(server.address);
      expect(read.ok).toBe(false);
      if (read.ok) return;
      expect(read.errors.kind).toBe(RegistryFailureKind.CallFailed);
      expect(read.errors.message).toMatch(
        /^registry 127\.0\.0\.1:\d+: health check: INTERNAL: \\x1b\[32mall good\\x1b\[0m\\x0d\\x0aCatalogSource ok\\u202ex+\.\.\.$/,
      );
      expect(read.errors.message.length).toBeLessThan(400);
      const controls = [...read.errors.message].filter((c) => /\p{Cc}|\p{Bidi_Control}/u.test(c));
      expect(controls).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('cannot pass off bytes that are no message, or answers that contradict each other, as a catalog', async () => {
    // Bytes that are no Package: a wire type protobuf does not have, a varint cut short, a
    // nested message cut short.
    for (const bytes of [[0x0f], [0xff, 0xff, 0xff], [0x12, 0x05, 0x0a, 0x7f]]) {
      const garbage = await grpcServer({
        [RegistryMethod.HealthCheck]: serving,
        [RegistryMethod.ListPackages]: stream(wire.listPackagesRequest, wire.packageName, () => [
          { name: 'relay' },
        ]),
        [RegistryMethod.GetPackage]: raw(Buffer.from(bytes)),
      });
      try {
        const bad = await fetchRegistryCatalog(garbage.address);
        expect(bad.ok ? '' : bad.errors.kind, `${bytes}`).toBe(RegistryFailureKind.CallFailed);
        expect(bad.ok ? '' : bad.errors.message).toMatch(
          /GetPackage: INTERNAL: Response message parsing error/,
        );
      } finally {
        await garbage.stop();
      }
    }
    const pkg = {
      name: 'relay',
      defaultChannelName: 'stable',
      channels: [{ name: 'stable', csvName: 'relay.v1.0.0' }],
    };
    const contradicting = await grpcServer({
      [RegistryMethod.HealthCheck]: serving,
      [RegistryMethod.ListPackages]: stream(wire.listPackagesRequest, wire.packageName, () => [
        { name: 'relay' },
      ]),
      [RegistryMethod.GetPackage]: unary(wire.getPackageRequest, wire.package, () => pkg as never),
      [RegistryMethod.ListBundles]: stream(
        wire.listBundlesRequest,
        wire.bundle,
        () =>
          [
            {
              csvName: 'relay.v1.0.0',
              packageName: 'relay',
              channelName: 'stable',
              bundlePath: 'quay.example/relay:v1',
              properties: [{ type: 'olm.package', value: '{"packageName":"relay","version":"1.0.0"}' }],
            },
            {
              csvName: 'evil.v1.0.0',
              packageName: 'kube-system',
              channelName: 'stable',
              bundlePath: 'quay.example/evil:v1',
              properties: [],
            },
          ] as never,
      ),
      // GetBundle of relay answers with another bundle's manifests.
      [RegistryMethod.GetBundle]: unary(
        wire.getBundleRequest,
        wire.bundle,
        () => ({ csvName: 'evil.v1.0.0', packageName: 'relay', object: ['{}'] }) as never,
      ),
    });
    try {
      const read = await fetchRegistryCatalog(contradicting.address);
      expect(read.ok).toBe(false);
      if (read.ok) return;
      expect(read.errors.kind).toBe(RegistryFailureKind.InvalidCatalog);
      expect(read.errors.problems).toEqual([
        expect.objectContaining({ object: 'bundle evil.v1.0.0', field: 'packageName' }),
        expect.objectContaining({
          object: 'bundle relay.v1.0.0',
          message: 'GetBundle answered for bundle "evil.v1.0.0" of package "relay" instead',
        }),
        // Asked for kube-system's evil bundle too, the server answers for another package.
        expect.objectContaining({
          object: 'bundle evil.v1.0.0',
          message: 'GetBundle answered for bundle "evil.v1.0.0" of package "relay" instead',
        }),
      ]);
      expect(read.errors.message).toMatch(
        /^registry 127\.0\.0\.1:\d+: what it serves is not a valid catalog: bundle evil\.v1\.0\.0: packageName: /,
      );
    } finally {
      await contradicting.stop();
    }
  });

  it('cannot be reached through an address that is not host:port: a Unix socket serving a registry is never dialled', async () => {
    const dir = await tempDir('bosun-grpc-socket-');
    const socket = join(dir, 'registry.sock');
    let connections = 0;
    const server = createTcpServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((done) => server.listen(socket, done));
    try {
      for (const address of [
        `unix:${socket}`,
        `unix://${socket}`,
        `unix:///${socket.slice(1)}`,
        'unix:registry.sock',
        `passthrough:///unix:${socket}`,
      ]) {
        const read = await fetchRegistryCatalog(address);
        expect(read.ok ? '' : read.errors.kind, address).toBe(RegistryFailureKind.Address);
        expect(read.ok ? '' : read.errors.message, address).toMatch(
          /^spec\.address: ".*" is not a registry address: /,
        );
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});

/** A port nothing listens on: one the kernel gave and that was closed again. */
async function closedPort(): Promise<number> {
  const s = createTcpServer();
  const port = await listen(s);
  await close(s);
  return port;
}

function listen(s: TcpServer | ReturnType<typeof createHttpServer>): Promise<number> {
  // Connections are remembered, so close() can end those a client left open.
  s.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((done) => s.listen(0, '127.0.0.1', () => done((s.address() as { port: number }).port)));
}

const sockets = new Set<Socket>();

function close(s: TcpServer | ReturnType<typeof createHttpServer>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((done) => s.close(() => done()));
}
