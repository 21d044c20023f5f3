/**
 * The container image, proven without a container engine: the production install laid out as
 * the Dockerfile's runtime stage lays it out (read from the Dockerfile, test/support/dockerfile.ts),
 * and its ENTRYPOINT and CMD run under bubblewrap (test/support/image-sandbox.ts) as the image's
 * numeric user, on a read-only root with only the image's /tmp volume writable, with nothing of a
 * cluster but what a pod has: the ServiceAccount token and CA at
 * /var/run/secrets/kubernetes.io/serviceaccount and KUBERNETES_SERVICE_HOST/PORT. The manager
 * serves /healthz and /readyz, reads a configmap CatalogSource and installs bosun-sample,
 * writes only below /tmp (anything else fails: the root is read-only, and no EROFS or EACCES may
 * show in its log), and stops on SIGTERM, as PID 1, within seconds.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CatalogSource, ClusterServiceVersion, Subscription } from '../../../src/apis/operators.js';
import { freePort } from '../../../src/cluster/ports.js';
import { serviceAccountDir } from '../../../src/kube/kubeconfig.js';
import { Builtin } from '../../../src/kube/resources.js';
import { admitted, parseDockerignore, type RuntimeImage, runtimeImage } from '../../support/dockerfile.js';
import { type Sandboxed, sandboxUnavailable, startSandboxed } from '../../support/image-sandbox.js';
import { type Installed, installGlobal, pack, type Packed, repo } from '../../support/production-install.js';
import { namespaceFor, planPackages, subscribe } from '../../support/corpus-install.js';
import { tempDir } from '../../support/temp-dir.js';
import { adminTls, serviceAccountToken } from '../../support/users.js';
import {
  catalogSource,
  client,
  ConfigMapResource,
  create,
  get,
  Resources,
  serveCorpusCatalog,
  subscription,
} from '../controllers/support.js';
import { sampleCatalogJson, uniqueGroup } from '../controllers/operator-support.js';
import { installOperatorCrds } from '../kube/helpers.js';
import { eventually } from '../support.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus) console.log('image entrypoint test: the corpus part is skipped, set BOSUN_CORPUS_DIR to run it');

const dockerfile = await readFile(join(repo, 'Dockerfile'), 'utf8');
const parsed = runtimeImage(dockerfile);
// A Dockerfile this test cannot reproduce fails it (below); it is not a reason to skip.
const unavailable = parsed.ok ? await sandboxUnavailable(parsed.value.user.uid) : undefined;
if (unavailable) console.log(`skipping the image entrypoint test: ${unavailable}`);

/** What the manager may leave in its tmp volume while it runs: Node's compile cache, the spool. */
const expectedInTmp = /^(node-compile-cache|bosun-catalogs-[A-Za-z0-9]+)$/;
/** A write the sandbox refused, or any file the install lacks, in the manager's log. */
const refusedWrite = /EROFS|EACCES|EPERM|read-only file system|permission denied|ERR_MODULE_NOT_FOUND/i;

describe('the Dockerfile', () => {
  it('describes an image the entrypoint test can lay out and run', () => {
    expect(parsed.ok ? [] : parsed.errors).toEqual([]);
  });

  it('builds on the Node that tools/node pins, runs as a numeric non-root user, writes only its /tmp volume', async () => {
    const image = okImage();
    const { version } = JSON.parse(await readFile(join(repo, 'tools/node/package.json'), 'utf8'));
    expect(image.buildBase).toBe(`node:${version}-bookworm`);
    expect(image.base).toBe(`node:${version}-bookworm-slim`);
    expect(process.versions.node, 'the tests run on the Node the image has').toBe(version);
    expect(image.user.uid).not.toBe(0);
    expect(image.user.gid).not.toBe(0);
    expect(image.volumes).toEqual(['/tmp']);
    expect(image.env.TMPDIR).toBe('/tmp');
    expect(image.env.NODE_ENV).toBe('production');
    expect(image.env.MALLOC_MMAP_THRESHOLD_, 'set, so the manager does not restart itself').toBeDefined();
    expect(metricsAddr(image.cmd)).toBe(`0.0.0.0:${image.expose[0]}`);
  });
});

describe.skipIf(unavailable !== undefined)('the image’s entrypoint under bubblewrap', () => {
  let image: RuntimeImage;
  let packed: Packed;
  let installed: Installed;
  let tmp: string;
  let secrets: string;
  let ns: string;
  let port: number;
  let run: Sandboxed | undefined;
  let startedAt: number;
  /** Starts the entrypoint (again) on the same volume, as a container restart in its pod does. */
  let start: () => void;
  const figures: Record<string, number> = {};
  /** What afterAll removes: API paths to delete, servers to close. */
  const cleanUp: (string | { close(): void })[] = [];
  const binding = () => `${ns}-bosun-0`;

  beforeAll(async () => {
    image = okImage();
    const dir = await tempDir('bosun-image-');
    // The image's user must reach the install and the ServiceAccount files, as in the image,
    // where they belong to root and are readable by all.
    await chmod(dir, 0o755);
    packed = await pack(join(dir, 'pack'));
    installed = await installGlobal(packed.tarball, join(dir, 'prefix'));
    // What the image's runtime stage adds to its base: the production install.
    figures.installFiles = (await walk(installed.prefix)).length;
    figures.installDiskKiB = Number(
      execFileSync('du', ['-sk', installed.prefix], { encoding: 'utf8' }).split('\t')[0],
    );
    // The tmp volume: an emptyDir, world-writable with the sticky bit, as /tmp is.
    tmp = join(dir, 'tmp');
    await mkdir(tmp);
    await chmod(tmp, 0o1777);
    await installOperatorCrds();

    // A namespace of this file's own: freshNamespace's are deleted after each test, and this one
    // lives through all of them.
    ns = `image-${randomBytes(4).toString('hex')}`;
    await create(Builtin.Namespace, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // The pod's ServiceAccount, with a token from the TokenRequest API, as the kubelet mounts it.
    // cluster-admin for now: the least-privilege ClusterRole is another step of issue 23.
    const token = await serviceAccountToken(client(), ns, 'bosun', [{ role: 'cluster-admin' }]);
    const tls = await adminTls(inject('kubeconfig'));
    secrets = join(dir, 'serviceaccount');
    await mkdir(secrets, { mode: 0o755 });
    await writeFile(join(secrets, 'token'), token, { mode: 0o644 });
    await writeFile(join(secrets, 'ca.crt'), tls.ca ?? '', { mode: 0o644 });
    await writeFile(join(secrets, 'namespace'), ns, { mode: 0o644 });

    // What the manager should find when it starts: the sample catalog in a ConfigMap, and a
    // Subscription to bosun-sample in a namespace with an OperatorGroup.
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'samples' },
      // The operator's API in a group of this test's own: the test control plane is shared, and
      // another test installing an older bosun-sample must not meet this one's newer CRD.
      data: { 'catalog.json': await sampleCatalogJson(uniqueGroup()) },
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'samples', { sourceType: 'configmap', configMap: 'samples' }),
    );
    await create(Resources.OperatorGroup, ns, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'og', namespace: ns },
      spec: { targetNamespaces: [ns] },
    });
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'bosun-sample', { name: 'bosun-sample', source: 'samples', channel: 'stable' }),
    );

    const server = new URL(tls.server);
    port = await freePort();
    start = () => {
      startedAt = performance.now();
      run = startSandboxed({
        image,
        installed: installed.prefix,
        node: process.execPath,
        volumes: { '/tmp': tmp },
        mounts: { [serviceAccountDir]: secrets },
        env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
        // The image's CMD, on a free port: other tests on this machine may hold 8080.
        args: image.cmd.map((a) => a.replace(/^(--metrics-addr=0\.0\.0\.0:)\d+$/, `$1${port}`)),
      });
    };
    start();
  }, 1_200_000);

  afterAll(async () => {
    if (run && run.bwrap.exitCode === null) run.bwrap.kill('SIGKILL');
    for (const c of [
      `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding()}`,
      `/api/v1/namespaces/${ns}`,
      ...cleanUp,
    ]) {
      if (typeof c !== 'string') c.close();
      else
        await client()
          .request({ method: 'DELETE', path: c })
          .catch(() => undefined);
    }
    if (Object.keys(figures).length > 0) console.log(`image entrypoint figures: ${JSON.stringify(figures)}`);
  });

  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const status = (path: string) =>
    fetch(url(path), { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status,
      () => undefined,
    );
  /** `eventually`, failing at once, with the manager's output, when the entrypoint exits first. */
  const whileRunning = <T>(what: string, check: () => Promise<T | undefined>, timeoutMs?: number) =>
    Promise.race([
      eventually(what, check, timeoutMs),
      run!.exited.then((code): never => {
        throw new Error(
          `waiting for ${what}: the entrypoint exited (${code}):\n${run!.stderr()}\n${run!.stdout()}`,
        );
      }),
    ]);

  it('serves /healthz, then /readyz once its caches are synced', async () => {
    await whileRunning('/healthz to answer 200', async () => (await status('/healthz')) === 200 || undefined);
    figures.healthzMs = Math.round(performance.now() - startedAt);
    await whileRunning('/readyz to answer 200', async () => (await status('/readyz')) === 200 || undefined);
    figures.readyzMs = Math.round(performance.now() - startedAt);
  });

  it('reconciles with the in-cluster ServiceAccount: the configmap CatalogSource becomes READY', async () => {
    await whileRunning('the CatalogSource to be READY', async () => {
      const cs = await get<CatalogSource>(Resources.CatalogSource, ns, 'samples');
      return cs?.status?.connectionState?.lastObservedState === 'READY' || undefined;
    });
    figures.catalogReadyMs = Math.round(performance.now() - startedAt);
    // With the ServiceAccount's token and CA, as client-go's InClusterConfig reads them.
    expect(run!.stdout()).toMatch(/"kubeconfig":"in-cluster","msg":"connected to cluster"/);
    // The catalog is spooled where TMPDIR says, in the volume.
    expect((await readdir(tmp)).filter((n) => n.startsWith('bosun-catalogs-'))).toHaveLength(1);
  });

  it('installs bosun-sample for the Subscription: its CSV Succeeded', async () => {
    let seen: unknown;
    const csv = await whileRunning(
      'the CSV of bosun-sample to succeed',
      async () => {
        const sub = await get<Subscription>(Resources.Subscription, ns, 'bosun-sample');
        const name = sub?.status?.installedCSV ?? sub?.status?.currentCSV;
        const c = name
          ? await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, name)
          : undefined;
        seen = { subscription: sub?.status, csv: c?.status };
        return c?.status?.phase === 'Succeeded' ? c : undefined;
      },
      120_000,
    ).catch((err: Error) => {
      // What the manager saw and did, to tell a sandbox problem from an install problem.
      throw new Error(
        `${err.message}\nlast seen: ${JSON.stringify(seen)}\nmanager: ${run!.stdout().slice(-4000)}`,
      );
    });
    figures.csvSucceededMs = Math.round(performance.now() - startedAt);
    expect(csv.metadata?.name).toBe('bosun-sample.v0.2.1');
  });

  it.skipIf(!corpus)(
    'reads the 2021 OperatorHub corpus into its tmp volume and installs a real operator from it (etcd)',
    async () => {
      // The catalog is served in the operator's own namespace, where its Subscription may use it.
      const opNamespace = namespaceFor(`${ns}-op`, 'etcd');
      cleanUp.push(`/api/v1/namespaces/${opNamespace}`);
      const t0 = performance.now();
      const { config, served } = await serveCorpusCatalog(corpus!, opNamespace, 'corpus');
      cleanUp.push(served);
      figures.corpusReadyMs = Math.round(performance.now() - t0);
      figures.corpusTmpKiB = Number(execFileSync('du', ['-sk', tmp], { encoding: 'utf8' }).split('\t')[0]);
      const plan = planPackages(config, `${ns}-op`).find((p) => p.package === 'etcd');
      expect(plan?.namespace).toBe(opNamespace);
      await subscribe(client(), plan!, { name: 'corpus', namespace: opNamespace });
      const csv = await whileRunning(
        `the CSV ${plan!.head} to succeed`,
        async () => {
          const c = await get<ClusterServiceVersion>(
            Resources.ClusterServiceVersion,
            opNamespace,
            plan!.head,
          );
          return c?.status?.phase === 'Succeeded' ? c : undefined;
        },
        300_000,
      );
      expect(csv.metadata?.name).toBe(plan!.head);
    },
    900_000,
  );

  it('runs as the image’s user, PID 1 of its own namespace, writing only its tmp volume', async () => {
    const pid = await run!.pid;
    const procStatus = await readFile(`/proc/${pid}/status`, 'utf8');
    const { uid, gid } = image.user;
    expect(procStatus).toMatch(new RegExp(`^Uid:\\t${uid}\\t${uid}\\t${uid}\\t${uid}$`, 'm'));
    expect(procStatus).toMatch(new RegExp(`^Gid:\\t${gid}\\t${gid}\\t${gid}\\t${gid}$`, 'm'));
    expect(procStatus).toMatch(/^NSpid:\t\d+\t1$/m);
    expect(procStatus, 'no capabilities').toMatch(/^CapEff:\t0+$/m);
    const names = await readdir(tmp);
    expect(names.filter((n) => !expectedInTmp.test(n))).toEqual([]);
    // Node's compile cache is on (bin/bosun.js) and went to the volume, not elsewhere.
    expect(names).toContain('node-compile-cache');
    for (const f of await walk(tmp)) expect((await lstat(f)).uid, relative(tmp, f)).toBe(uid);
    expect(`${run!.stdout()}\n${run!.stderr()}`).not.toMatch(refusedWrite);
  });

  it('stops on SIGTERM within a few seconds, exit code 0, leaving only the compile cache', async () => {
    const pid = await run!.pid;
    const t0 = performance.now();
    process.kill(pid, 'SIGTERM');
    const code = await Promise.race([
      run!.exited,
      new Promise<'late'>((r) => setTimeout(() => r('late'), 10_000)),
    ]);
    figures.sigtermToExitMs = Math.round(performance.now() - t0);
    expect(code, run!.stderr()).toBe(0);
    expect(figures.sigtermToExitMs).toBeLessThan(5_000);
    expect(await readdir(tmp)).toEqual(['node-compile-cache']);
    expect(`${run!.stdout()}\n${run!.stderr()}`).not.toMatch(refusedWrite);
    expect(run!.stdout()).toContain('"msg":"manager stopped"');
  });

  it('restarted on the same volume after SIGKILL, as PID 1 again, removes the spool the killed one left', async () => {
    // A container restarted in its pod keeps its emptyDir, and its process is PID 1 again: the
    // spool of the killed manager names the same PID, and only its start time tells them apart.
    start();
    await whileRunning('/readyz to answer 200', async () => (await status('/readyz')) === 200 || undefined);
    figures.warmRestartReadyzMs = Math.round(performance.now() - startedAt);
    const spools = async () => (await readdir(tmp)).filter((n) => n.startsWith('bosun-catalogs-'));
    const killed = await whileRunning('the catalog spool', async () => (await spools())[0]);
    expect(JSON.parse(await readFile(join(tmp, killed, 'owner'), 'utf8'))).toMatchObject({ pid: 1 });
    process.kill(await run!.pid, 'SIGKILL');
    await run!.exited;
    expect(await spools()).toEqual([killed]);

    start();
    await whileRunning('/readyz to answer 200', async () => (await status('/readyz')) === 200 || undefined);
    const now = await whileRunning('the new spool alone', async () => {
      const names = await spools();
      return names.length === 1 && names[0] !== killed ? names : undefined;
    });
    expect(JSON.parse(await readFile(join(tmp, now[0]!, 'owner'), 'utf8'))).toMatchObject({ pid: 1 });
    expect(run!.stdout()).toContain('removed catalog spools of managers that are gone');
    process.kill(await run!.pid, 'SIGTERM');
    expect(await run!.exited, run!.stderr()).toBe(0);
    expect(await readdir(tmp)).toEqual(['node-compile-cache']);
    expect(`${run!.stdout()}\n${run!.stderr()}`).not.toMatch(refusedWrite);
  });

  it('packs in its build stage what the test packs: every packaged file but dist/ is copied in and not ignored', async () => {
    const ignore = parseDockerignore(await readFile(join(repo, '.dockerignore'), 'utf8'));
    expect(ignore.ok ? [] : ignore.errors).toEqual([]);
    if (!ignore.ok) return;
    // dist/ is built in the build stage from what it copies: the sources and build configuration.
    const sources = packed.files.filter((f) => !f.startsWith('dist/'));
    expect(sources.length).toBeGreaterThan(10);
    const copied = [...dockerfile.matchAll(/^COPY (?!--)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    expect(copied).toEqual(expect.arrayContaining(['src', 'tsconfig.json', 'package-lock.json']));
    const underCopied = (f: string) => copied.some((c) => f === c || f.startsWith(`${c}/`));
    expect(
      sources.filter((f) => !underCopied(f)),
      'packaged files the build stage does not copy',
    ).toEqual([]);
    expect(
      [...sources, ...copied].filter((f) => !admitted(ignore.value, f)),
      'files .dockerignore keeps out of the build',
    ).toEqual([]);
  });
});

function okImage(): RuntimeImage {
  if (!parsed.ok) throw new Error(`the Dockerfile cannot be reproduced here:\n${parsed.errors.join('\n')}`);
  return parsed.value;
}

function metricsAddr(args: string[]): string | undefined {
  return args.find((a) => a.startsWith('--metrics-addr='))?.slice('--metrics-addr='.length);
}

/** Every file, folder and link below `dir`. */
async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    out.push(p);
    if (e.isDirectory()) out.push(...(await walk(p)));
  }
  return out;
}
