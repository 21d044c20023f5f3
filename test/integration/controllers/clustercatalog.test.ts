/**
 * OLM v1's ClusterCatalog on a running manager, with catalog images pushed to a real registry
 * (Debian's docker-registry on 127.0.0.1, test/support/registry.ts): the catalog becomes Serving
 * with the status v1.2.0's catalogd writes (conditions, resolvedSource, urls.base, lastUnpacked),
 * and catalogd's HTTP API at `urls.base` answers `/api/v1/all` and `/api/v1/metas` with the
 * image's documents; a new digest pushed under the tag is read at the next poll and lastUnpacked
 * moves, while the same content under another reference leaves it; an image that cannot be
 * pulled leaves the last good content served and says why in Progressing; availabilityMode
 * Unavailable and deletion stop serving. A private registry's catalog is pulled with the
 * manager's global pull Secret once that exists (and without it before). And the 2021 corpus as one catalog image through
 * `/api/v1/all` (with BOSUN_CORPUS_DIR), and a real operator of it installed by a ClusterExtension.
 */
import { createHash, randomBytes } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { createGunzip } from 'node:zlib';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Condition, KubeObject, ResourceType } from '../../../src/apis/meta.js';
import { credentialsFromDockerConfig } from '../../../src/oci/auth.js';
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../../../src/apis/olmv1.js';
import { type ClusterServiceVersion, Resources } from '../../../src/apis/operators.js';
import { parseYamlStream } from '../../../src/bundle/yaml.js';
import { type RunningManager, startManager } from '../../../src/manager/manager.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { formatHttpDate } from '../../../src/server/catalogd-request.js';
import type { FileMap } from '../../../src/util/tar-write.js';
import { importedCorpus } from '../../support/corpus-import.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { eventually, freshNamespace } from '../support.js';
import {
  imageOnlyCatalog,
  pushCatalog,
  pushCatalogFolder,
  pushSampleBundles,
  sampleCatalog,
} from './image-catalogs.js';
import { clusterAdminServiceAccount, create, get, mergePatch, remove } from './support.js';

const missing = await registryAvailable();
if (missing) console.warn(`the ClusterCatalog tests are skipped: ${missing}`);

let manager: RunningManager;
let registry: TestRegistry;
let push: RegistryClient;
let bundleImages: Map<string, string>;

/** This file's manager. The global pull Secret is made by the test that needs it: until then, pulls go without one. */
const startTestManager = () =>
  startManager({
    kubeconfig: inject('kubeconfig'),
    installCrds: true,
    metricsAddr: '127.0.0.1:0',
    logger: pino({ level: process.env.BOSUN_TEST_LOG ?? 'silent' }),
    globalPullSecret: { namespace: 'default', name: globalPullSecret },
  });
const globalPullSecret = `bosun-global-pull-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  if (missing) return;
  registry = await startRegistry({ kind: 'plain' });
  push = new RegistryClient();
  bundleImages = await pushSampleBundles(push, registry.host);
  manager = await startTestManager();
  polling = await startPolling();
});

/**
 * A catalog polled every minute, made before the tests run, with a new digest pushed under its tag
 * once it serves the first: the last test checks the poll read it, a minute on, while the tests in
 * between run. (The manager must not restart in between: a new one reads the tag at once.)
 */
let polling: {
  name: string;
  repo: string;
  first: string;
  second: string;
  firstUnpacked: string;
  secondFiles: FileMap;
};
async function startPolling() {
  const config = await sampleCatalog();
  const image = (b: string) => bundleImages.get(b)!;
  const name = `polled-${randomBytes(3).toString('hex')}`;
  const repo = `${registry.host}/catalogs/${name}`;
  const first = await pushCatalog(push, `${repo}:latest`, imageOnlyCatalog(config, image, isSample01));
  await create(CC, '', clusterCatalog(name, { ref: `${repo}:latest`, pollIntervalMinutes: 1 }));
  const serving = await catalogWhen(
    name,
    (cc) => cc.status?.resolvedSource?.image.ref === `${repo}@${first}`,
    'the polled ClusterCatalog to serve its first digest',
  );
  const secondFiles = imageOnlyCatalog(config, image);
  const second = await pushCatalog(push, `${repo}:latest`, secondFiles);
  return { name, repo, first, second, firstUnpacked: serving.status!.lastUnpacked!, secondFiles };
}
afterAll(async () => {
  await manager?.stop();
  await push?.close();
});

const CC = V1Resources.ClusterCatalog;
const Secret: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
};

function clusterCatalog(name: string, image: ClusterCatalog['spec']['source']['image']): ClusterCatalog {
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name },
    spec: { source: { type: 'Image', image: image! } },
  };
}

const condition = (cc: ClusterCatalog | undefined, type: string): Condition | undefined =>
  cc?.status?.conditions?.find((c) => c.type === type);

function catalogWhen(name: string, test: (cc: ClusterCatalog) => boolean, what: string, timeoutMs = 60_000) {
  return eventually(
    what,
    async () => {
      const cc = await get<ClusterCatalog>(CC, '', name);
      return cc && test(cc) ? cc : undefined;
    },
    timeoutMs,
  );
}

/** Every document of the catalog files, in the order catalogd walks them (by path). */
function documentsOf(files: FileMap): unknown[] {
  return [...files.keys()].sort().flatMap((path) => {
    const parsed = parseYamlStream(Buffer.from(files.get(path)!).toString('utf8'), path);
    if (!parsed.ok) throw new Error(parsed.problem.message);
    return parsed.docs.map((d) => d.value);
  });
}

const jsonLines = (text: string): unknown[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

/** How many bytes a GET's body takes on the wire (compressed, if the server compresses it). */
function bytesOnTheWire(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/**
 * One GET, its body read as a stream and inflated when gzipped: the sha256 of the body, the bytes
 * on the wire and the Content-Length sent.
 */
function bodyDigest(
  url: string,
  headers: Record<string, string>,
): Promise<{
  sha256: string;
  wireBytes: number;
  contentLength: string | undefined;
  encoding: string | undefined;
}> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      let wireBytes = 0;
      res.on('data', (c: Buffer) => (wireBytes += c.length));
      const encoding = res.headers['content-encoding'];
      const body = encoding === 'gzip' ? res.pipe(createGunzip()) : res;
      const hash = createHash('sha256');
      body.on('data', (c: Buffer) => hash.update(c));
      body.on('end', () =>
        resolve({
          sha256: hash.digest('hex'),
          wireBytes,
          contentLength: res.headers['content-length'],
          encoding,
        }),
      );
      body.on('error', reject);
      res.on('error', reject);
    }).on('error', reject);
  });
}

const isSample01 = (b: string) => b === 'bosun-sample.v0.1.0' || b === 'bosun-sample.v0.1.1';

describe.skipIf(missing !== undefined)('a ClusterCatalog', () => {
  it('serves its image over catalogd’s API with v1’s status, keeps the last good content when the image cannot be pulled, and stops serving when Unavailable or deleted', async () => {
    const config = await sampleCatalog();
    const image = (b: string) => bundleImages.get(b)!;
    const name = `samples-${randomBytes(3).toString('hex')}`;
    const repo = `${registry.host}/catalogs/${name}`;
    const firstFiles = imageOnlyCatalog(config, image, isSample01);
    const first = await pushCatalog(push, `${repo}:latest`, firstFiles);
    await create(CC, '', clusterCatalog(name, { ref: `${repo}:latest`, pollIntervalMinutes: 1 }));

    const serving = await catalogWhen(
      name,
      (cc) => condition(cc, 'Serving')?.status === 'True',
      'the ClusterCatalog to be Serving',
    );
    const base = `${manager.url}/catalogs/${name}`;
    expect(serving.status).toEqual({
      conditions: [
        expect.objectContaining({
          type: 'Progressing',
          status: 'True',
          reason: 'Succeeded',
          message: 'Successfully unpacked and stored content from resolved source',
          observedGeneration: 1,
        }),
        expect.objectContaining({
          type: 'Serving',
          status: 'True',
          reason: 'Available',
          message: 'Serving desired content from resolved source',
          observedGeneration: 1,
        }),
      ],
      resolvedSource: { type: 'Image', image: { ref: `${repo}@${first}` } },
      urls: { base },
      lastUnpacked: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const firstUnpacked = serving.status!.lastUnpacked!;

    // /api/v1/all: every document of the image, in order, as JSON Lines, dated lastUnpacked.
    const all = await fetch(`${base}/api/v1/all`);
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toBe('application/jsonl');
    expect(all.headers.get('last-modified')).toBe(formatHttpDate(Date.parse(firstUnpacked)));
    expect(jsonLines(await all.text())).toEqual(documentsOf(firstFiles));
    const unchanged = await fetch(`${base}/api/v1/all`, {
      headers: { 'If-Modified-Since': all.headers.get('last-modified')! },
    });
    expect(unchanged.status).toBe(304);
    // /api/v1/metas: the documents matching every parameter.
    const metas = async (query: string) =>
      jsonLines(await (await fetch(`${base}/api/v1/metas?${query}`)).text());
    expect(await metas('schema=olm.package')).toEqual([expect.objectContaining({ name: 'bosun-sample' })]);
    expect(await metas('schema=olm.bundle&name=bosun-sample.v0.1.1')).toEqual([
      expect.objectContaining({ name: 'bosun-sample.v0.1.1', image: image('bosun-sample.v0.1.1') }),
    ]);
    expect((await fetch(`${base}/api/v1/metas?version=1`)).status).toBe(400);
    expect((await fetch(`${manager.url}/catalogs/${name}x/api/v1/all`)).status).toBe(404);

    // The same content by its digest (no polling then): nothing changed, lastUnpacked stays. (A new
    // digest read at the next poll is the last test's: its minute passes while the others run.)
    await mergePatch(CC, '', name, {
      spec: { source: { image: { ref: `${repo}@${first}`, pollIntervalMinutes: null } } },
    });
    const pinned = await catalogWhen(
      name,
      (cc) => condition(cc, 'Progressing')?.observedGeneration === 2,
      'the digest reference to be read',
    );
    expect(pinned.status?.lastUnpacked).toBe(firstUnpacked);
    expect(condition(pinned, 'Serving')).toMatchObject({ status: 'True', observedGeneration: 2 });

    // An image that cannot be pulled: Progressing says why, the last good content is served.
    const gone = `${registry.host}/catalogs/never-pushed-${name}:v1`;
    await mergePatch(CC, '', name, { spec: { source: { image: { ref: gone } } } });
    const failing = await catalogWhen(
      name,
      (cc) => condition(cc, 'Progressing')?.reason === 'Retrying',
      'Progressing to say the image cannot be pulled',
    );
    expect(condition(failing, 'Progressing')).toMatchObject({
      status: 'True',
      observedGeneration: 3,
      message: expect.stringMatching(new RegExp(`^source catalog content: image .*never-pushed-${name}`)),
    });
    // Serving is left as it was: it still tells of generation 2's content.
    expect(condition(failing, 'Serving')).toMatchObject({
      status: 'True',
      reason: 'Available',
      observedGeneration: 2,
    });
    expect(failing.status?.resolvedSource?.image.ref).toBe(`${repo}@${first}`);
    expect(failing.status?.lastUnpacked).toBe(firstUnpacked);
    expect(jsonLines(await (await fetch(`${base}/api/v1/all`)).text())).toEqual(documentsOf(firstFiles));

    // Unavailable: not served, and the status says the user asked for it.
    await mergePatch(CC, '', name, { spec: { availabilityMode: 'Unavailable' } });
    const off = await catalogWhen(
      name,
      (cc) => condition(cc, 'Serving')?.reason === 'UserSpecifiedUnavailable',
      'Serving to be UserSpecifiedUnavailable',
    );
    expect(off.status?.urls).toBeUndefined();
    expect(off.status?.resolvedSource).toBeUndefined();
    expect(condition(off, 'Progressing')).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect((await fetch(`${base}/api/v1/all`)).status).toBe(404);

    // Available again from the tag, then deleted: served, then not.
    await mergePatch(CC, '', name, {
      spec: { availabilityMode: 'Available', source: { image: { ref: `${repo}:latest` } } },
    });
    await catalogWhen(name, (cc) => condition(cc, 'Serving')?.status === 'True', 'Serving again');
    expect((await fetch(`${base}/api/v1/all`)).status).toBe(200);
    await remove(CC, '', name);
    await eventually('the deleted catalog to be served no more', async () =>
      (await fetch(`${base}/api/v1/all`)).status === 404 ? true : undefined,
    );
  }, 300_000);
});

describe.skipIf(missing !== undefined)('a ClusterCatalog at a registry that asks for credentials', () => {
  it('is pulled without credentials while the global pull Secret does not exist (Progressing says the registry refused), and with it once it does', async () => {
    const auth = await startRegistry({ kind: 'basic', username: 'alice', password: 's3cret' });
    const dockerConfig = JSON.stringify({
      auths: { [auth.host]: { auth: Buffer.from('alice:s3cret').toString('base64') } },
    });
    const alice = new RegistryClient({ credentials: credentialsFromDockerConfig(dockerConfig, 'test') });
    try {
      const files = imageOnlyCatalog(await sampleCatalog(), (b) => bundleImages.get(b)!);
      const digest = await pushCatalog(alice, `${auth.host}/catalogs/private:v1`, files);
      const name = `private-${randomBytes(3).toString('hex')}`;
      await create(CC, '', clusterCatalog(name, { ref: `${auth.host}/catalogs/private:v1` }));
      const refused = await catalogWhen(
        name,
        (cc) => condition(cc, 'Progressing')?.reason === 'Retrying',
        'the pull without credentials to be refused',
      );
      expect(condition(refused, 'Progressing')?.message).toMatch(
        new RegExp(
          `^source catalog content: image ${auth.host}/catalogs/private:v1: .*(401|unauthorized|credentials)`,
          'i',
        ),
      );
      expect(condition(refused, 'Serving')).toBeUndefined();

      await create(Secret, 'default', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: globalPullSecret },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from(dockerConfig).toString('base64') },
      } as KubeObject);
      const served = await catalogWhen(
        name,
        (cc) => condition(cc, 'Serving')?.status === 'True',
        'the catalog to be pulled with the global pull Secret',
      );
      expect(served.status?.resolvedSource?.image.ref).toBe(`${auth.host}/catalogs/private@${digest}`);
      expect(jsonLines(await (await fetch(`${served.status!.urls!.base}/api/v1/all`)).text())).toEqual(
        documentsOf(files),
      );
      await remove(CC, '', name);
    } finally {
      await remove(Secret, 'default', globalPullSecret);
      await alice.close();
    }
  }, 180_000);
});

describe.skipIf(missing !== undefined)('the 2021 OperatorHub corpus as a ClusterCatalog', () => {
  it('is Serving, and /api/v1/all streams every document the import wrote', async (ctx) => {
    const corpus = process.env.BOSUN_CORPUS_DIR;
    if (!corpus) {
      console.warn('the corpus ClusterCatalog test is skipped: BOSUN_CORPUS_DIR is not set');
      ctx.skip();
    }
    const { dir, ...imported } = await importedCorpus(corpus!);
    expect(imported.code, imported.stderr.slice(-2000)).toBe(0);
    const tag = `${registry.host}/catalogs/corpus-v1:2021`;
    const { digest, local } = await pushCatalogFolder(push, dir, tag);
    const name = `corpus-${randomBytes(3).toString('hex')}`;
    const started = Date.now();
    await create(CC, '', clusterCatalog(name, { ref: tag }));
    const cc = await catalogWhen(
      name,
      (c) => condition(c, 'Serving')?.status === 'True' || condition(c, 'Progressing')?.reason === 'Retrying',
      'the corpus ClusterCatalog to be Serving',
      600_000,
    );
    expect(condition(cc, 'Progressing')?.message).toBe(
      'Successfully unpacked and stored content from resolved source',
    );
    expect(cc.status?.resolvedSource?.image.ref).toBe(`${registry.host}/catalogs/corpus-v1@${digest}`);
    const servingAfter = Date.now() - started;

    // Read as a stream, line by line: counted by schema, never held whole.
    const res = await fetch(`${cc.status!.urls!.base}/api/v1/all`);
    expect(res.status).toBe(200);
    const counts = new Map<string, number>();
    let rest = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      const text = rest + decoder.decode(chunk, { stream: true });
      const lines = text.split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const schema = (JSON.parse(line) as { schema: string }).schema;
        counts.set(schema, (counts.get(schema) ?? 0) + 1);
      }
    }
    expect(rest).toBe('');
    const cfg = local;
    expect(Object.fromEntries(counts)).toEqual({
      'olm.package': cfg.packages.length,
      'olm.channel': cfg.channels.length,
      'olm.bundle': cfg.bundles.length,
      ...(cfg.deprecations.length ? { 'olm.deprecations': cfg.deprecations.length } : {}),
      ...Object.fromEntries(
        [...new Set(cfg.others.map((o) => o.schema))].map((s) => [
          s,
          cfg.others.filter((o) => o.schema === s).length,
        ]),
      ),
    });
    const head = await fetch(`${cc.status!.urls!.base}/api/v1/all`, {
      method: 'HEAD',
      headers: { 'Accept-Encoding': 'identity' },
    });
    const gzipped = await bytesOnTheWire(`${cc.status!.urls!.base}/api/v1/all`, {
      'Accept-Encoding': 'gzip',
    });
    console.info(
      `corpus ClusterCatalog: ${cfg.packages.length} packages, ${cfg.bundles.length} bundles; Serving ${servingAfter} ms after it was created; /api/v1/all ${head.headers.get('content-length')} bytes, ${gzipped} gzipped`,
    );

    // The first gzip request made the content's compressed copy; once it is there, gzip answers
    // are that copy, with its length, and inflate to the very body sent plain.
    const base = cc.status!.urls!.base;
    const copied = await eventually(
      'the compressed copy of the corpus content',
      async () => {
        const h = await fetch(`${base}/api/v1/all`, {
          method: 'HEAD',
          headers: { 'Accept-Encoding': 'gzip' },
        });
        return h.headers.get('content-length') ?? undefined;
      },
      120_000,
    );
    const plainBody = await bodyDigest(`${base}/api/v1/all`, { 'Accept-Encoding': 'identity' });
    const fromCopy = await bodyDigest(`${base}/api/v1/all`, { 'Accept-Encoding': 'gzip' });
    expect(fromCopy.encoding).toBe('gzip');
    expect(fromCopy.contentLength).toBe(copied);
    expect(fromCopy.wireBytes).toBe(Number(copied));
    expect(fromCopy.sha256).toBe(plainBody.sha256);
    expect(plainBody.wireBytes).toBe(Number(head.headers.get('content-length')));

    // A real operator installed from it by a ClusterExtension, written as v1's tutorials write
    // one: the catalog picked by the name label catalogd gives every ClusterCatalog.
    const ns = await freshNamespace('ce-corpus');
    await clusterAdminServiceAccount(ns, 'prometheus-installer');
    const extension = `prometheus-${randomBytes(3).toString('hex')}`;
    await create<ClusterExtension>(V1Resources.ClusterExtension, '', {
      apiVersion: 'olm.operatorframework.io/v1',
      kind: 'ClusterExtension',
      metadata: { name: extension },
      spec: {
        namespace: ns,
        serviceAccount: { name: 'prometheus-installer' },
        source: {
          sourceType: 'Catalog',
          catalog: {
            packageName: 'prometheus',
            selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': name } },
          },
        },
      },
    });
    const installed = await eventually(
      'the prometheus ClusterExtension to be Installed',
      async () => {
        const ext = await get<ClusterExtension>(V1Resources.ClusterExtension, '', extension);
        const cond = ext?.status?.conditions?.find((c) => c.type === 'Installed');
        return cond?.status === 'True' ? ext : undefined;
      },
      180_000,
    );
    expect(installed.status?.install?.bundle).toEqual({
      name: 'prometheusoperator.0.47.0',
      version: '0.47.0',
    });
    const csv = await get<ClusterServiceVersion>(
      Resources.ClusterServiceVersion,
      ns,
      'prometheusoperator.0.47.0',
    );
    expect(csv?.status?.phase).toBe('Succeeded');
    await remove(V1Resources.ClusterExtension, '', extension);
    await eventually('the prometheus CSV to be uninstalled with the extension', async () =>
      (await get(Resources.ClusterServiceVersion, ns, 'prometheusoperator.0.47.0')) ? undefined : true,
    );
    await remove(CC, '', name);
  }, 900_000);
});

describe.skipIf(missing !== undefined)('a ClusterCatalog polled every minute', () => {
  it('reads the new digest pushed under its tag at the next poll, and lastUnpacked moves', async () => {
    const { name, repo, second, firstUnpacked, secondFiles } = polling;
    const polled = await catalogWhen(
      name,
      (cc) => cc.status?.resolvedSource?.image.ref === `${repo}@${second}`,
      'the poll to read the new digest',
      150_000,
    );
    expect(Date.parse(polled.status!.lastUnpacked!)).toBeGreaterThan(Date.parse(firstUnpacked));
    const all = await fetch(`${polled.status!.urls!.base}/api/v1/all`);
    expect(jsonLines(await all.text())).toEqual(documentsOf(secondFiles));
    await remove(CC, '', name);
  }, 180_000);
});

describe.skipIf(missing !== undefined)('a ClusterCatalog after the manager starts again', () => {
  it('is served by the new manager at its address, with the same lastUnpacked: the content did not change', async () => {
    const files = imageOnlyCatalog(await sampleCatalog(), (b) => bundleImages.get(b)!, isSample01);
    const name = `restart-${randomBytes(3).toString('hex')}`;
    const digest = await pushCatalog(push, `${registry.host}/catalogs/${name}:v1`, files);
    await create(CC, '', clusterCatalog(name, { ref: `${registry.host}/catalogs/${name}:v1` }));
    const before = await catalogWhen(name, (cc) => condition(cc, 'Serving')?.status === 'True', 'Serving');
    // Whole seconds: a new manager reading the content a second later would show it.
    await new Promise((r) => setTimeout(r, 1_500));
    await manager.stop();
    manager = await startTestManager();
    const base = `${manager.url}/catalogs/${name}`;
    const after = await catalogWhen(
      name,
      (cc) => cc.status?.urls?.base === base,
      'the new manager to serve the catalog at its address',
    );
    expect(after.status?.lastUnpacked).toBe(before.status?.lastUnpacked);
    expect(after.status?.resolvedSource?.image.ref).toBe(`${registry.host}/catalogs/${name}@${digest}`);
    expect(condition(after, 'Serving')).toMatchObject({ status: 'True', reason: 'Available' });
    const all = await fetch(`${base}/api/v1/all`);
    expect(all.headers.get('last-modified')).toBe(formatHttpDate(Date.parse(before.status!.lastUnpacked!)));
    expect(jsonLines(await all.text())).toEqual(documentsOf(files));
    await remove(CC, '', name);
  }, 120_000);
});
