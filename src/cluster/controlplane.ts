import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../util/errors.js';
import { writeFileAtomic } from '../util/fs.js';
import { type BuildStatus, ensureBinaries, isAlive } from './build.js';
import { apiRequest, type ClientTLS } from './http.js';
import { renderKubeconfig } from './kubeconfig.js';
import {
  componentCommand,
  kwokConfiguration,
  type Layout,
  layoutFor,
  logFile,
  nodeName,
  nodeObject,
  type Ports,
} from './layout.js';
import { defaultClusterName, stateRoot } from './paths.js';
import { generatePki, type Pki } from './pki.js';
import { assertPortFree, freePort } from './ports.js';
import { type Component, components, controlPlaneVersions } from './versions.js';

export { defaultClusterName };

/** What `up` leaves behind in state.json, and what `status` and `down` read. */
export interface ClusterState {
  name: string;
  kubernetesVersion: string;
  server: string;
  kubeconfig: string;
  ports: Ports;
  pids: Partial<Record<Component, number>>;
  startedAt: string;
}

export interface UpOptions {
  name?: string;
  /** API server port; 0 or absent picks a free one. */
  port?: number;
  env?: NodeJS.ProcessEnv;
  onProgress?: (line: string) => void;
  /** Told as a first-use build of the binaries advances (see BuildStatus). */
  onBuildStatus?: (status: BuildStatus) => void;
  /** How long to wait for each component to become healthy. */
  timeoutMs?: number;
}

export function clusterLayout(name = defaultClusterName, env: NodeJS.ProcessEnv = process.env): Layout {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    throw new UserError(`cluster name "${name}" must be lower-case letters, digits and '-'`, 2);
  }
  return layoutFor(stateRoot(env), name);
}

export async function readState(layout: Layout): Promise<ClusterState | undefined> {
  try {
    return JSON.parse(await readFile(layout.stateFile, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

async function adminTLS(layout: Layout): Promise<ClientTLS> {
  const f = (n: string) => readFile(join(layout.pkiDir, n), 'utf8');
  return { ca: await f('ca.crt'), cert: await f('admin.crt'), key: await f('admin.key') };
}

/** True when every recorded process runs and the API server answers /readyz. */
export async function isHealthy(layout: Layout, state: ClusterState): Promise<boolean> {
  if (!components.every((c) => state.pids[c] !== undefined && isAlive(state.pids[c]!))) return false;
  try {
    const res = await apiRequest(
      state.ports.apiserver,
      await adminTLS(layout),
      'GET',
      '/readyz',
      undefined,
      2000,
    );
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Starts a local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
 * kwok with one simulated node) and returns once the API server is ready and the node is Ready.
 * Processes run detached, so the control plane outlives the command; `down` stops them. When a
 * component fails to start, everything started so far is stopped and the error names its log.
 */
export async function up(opts: UpOptions = {}): Promise<ClusterState> {
  const env = opts.env ?? process.env;
  const layout = clusterLayout(opts.name, env);
  const say = opts.onProgress ?? (() => {});
  const existing = await readState(layout);
  if (existing && (await isHealthy(layout, existing))) {
    say(`control plane "${layout.name}" is already running`);
    return existing;
  }
  await down({ name: layout.name, env });

  const bins = await ensureBinaries({
    env,
    onProgress: say,
    ...(opts.onBuildStatus ? { onStatus: opts.onBuildStatus } : {}),
  });
  const ports: Ports = {
    apiserver: opts.port || (await freePort()),
    etcdClient: await freePort(),
    etcdPeer: await freePort(),
  };
  if (opts.port) await assertPortFree(opts.port, 'the API server');

  await mkdir(layout.logDir, { recursive: true });
  await mkdir(layout.pkiDir, { recursive: true, mode: 0o700 });
  const pki = await generatePki();
  await writeFiles(layout, ports, pki);

  const server = `https://127.0.0.1:${ports.apiserver}`;
  const state: ClusterState = {
    name: layout.name,
    kubernetesVersion: controlPlaneVersions.kubernetes,
    server,
    kubeconfig: layout.kubeconfig,
    ports,
    pids: {},
    startedAt: new Date().toISOString(),
  };
  const tls: ClientTLS = { ca: pki.ca.cert, cert: pki.admin.cert, key: pki.admin.key };
  const timeoutMs = opts.timeoutMs ?? 120_000;
  try {
    for (const c of components) {
      say(`starting ${c}`);
      state.pids[c] = await startProcess(c, componentCommand(c, layout, ports, bins), layout);
      // Record pids as they appear, so that `down` finds a half-started control plane too.
      await writeFileAtomic(layout.stateFile, `${JSON.stringify(state, null, 2)}\n`);
      if (c === 'etcd') await waitFor(c, layout, state, timeoutMs, () => etcdHealthy(ports.etcdClient));
      if (c === 'kube-apiserver') {
        await waitFor(
          c,
          layout,
          state,
          timeoutMs,
          async () => (await apiRequest(ports.apiserver, tls, 'GET', '/readyz')).status === 200,
        );
      }
    }
    say(`registering simulated node ${nodeName}`);
    await registerNode(ports.apiserver, tls);
    await waitFor('kwok', layout, state, timeoutMs, () => nodeReady(ports.apiserver, tls));
    await waitFor('kube-controller-manager', layout, state, timeoutMs, () =>
      defaultServiceAccountExists(ports.apiserver, tls),
    );
  } catch (err) {
    await stopAll(state);
    await rm(layout.stateFile, { force: true });
    throw err;
  }
  return state;
}

async function writeFiles(layout: Layout, ports: Ports, pki: Pki): Promise<void> {
  const files: [string, string][] = [
    ['ca.crt', pki.ca.cert],
    ['ca.key', pki.ca.key],
    ['apiserver.crt', pki.apiserver.cert],
    ['apiserver.key', pki.apiserver.key],
    ['admin.crt', pki.admin.cert],
    ['admin.key', pki.admin.key],
    ['front-proxy-ca.crt', pki.frontProxyCA.cert],
    ['front-proxy-client.crt', pki.frontProxyClient.cert],
    ['front-proxy-client.key', pki.frontProxyClient.key],
    ['sa.pub', pki.serviceAccount.publicKey],
    ['sa.key', pki.serviceAccount.privateKey],
  ];
  for (const [name, content] of files) await writeFile(join(layout.pkiDir, name), content, { mode: 0o600 });
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const kc = (user: string, pair: { cert: string; key: string }) =>
    renderKubeconfig({
      clusterName: `bosun-${layout.name}`,
      server,
      caPem: pki.ca.cert,
      user,
      certPem: pair.cert,
      keyPem: pair.key,
    });
  await writeFile(layout.kubeconfig, kc('admin', pki.admin), { mode: 0o600 });
  await writeFile(
    layout.componentKubeconfig.controllerManager,
    kc('kube-controller-manager', pki.controllerManager),
    { mode: 0o600 },
  );
  await writeFile(layout.componentKubeconfig.scheduler, kc('kube-scheduler', pki.scheduler), { mode: 0o600 });
  await writeFile(layout.componentKubeconfig.kwok, kc('admin', pki.admin), { mode: 0o600 });
  await writeFile(layout.kwokConfig, kwokConfiguration());
}

async function startProcess(c: Component, argv: string[], layout: Layout): Promise<number> {
  const log = await open(logFile(layout, c), 'a');
  try {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: layout.dir,
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: layout.dir },
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', (err) =>
        reject(new UserError(`could not start ${c} (${argv[0]}): ${err.message}`, 1, { cause: err })),
      );
      child.once('spawn', () => resolve(child.pid!));
    });
    child.unref();
    return pid;
  } finally {
    await log.close();
  }
}

async function waitFor(
  c: Component,
  layout: Layout,
  state: ClusterState,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const [comp, pid] of Object.entries(state.pids)) {
      if (!isAlive(pid)) {
        const tail = await lastLines(logFile(layout, comp as Component), 15);
        throw new UserError(
          `${comp} exited during start-up; see ${logFile(layout, comp as Component)}\n${tail}`,
        );
      }
    }
    try {
      if (await check()) return;
    } catch {
      // Not up yet: connection refused or a TLS handshake against a starting server.
    }
    if (Date.now() > deadline) {
      throw new UserError(
        `${c} did not become ready within ${Math.round(timeoutMs / 1000)} s; see ${logFile(layout, c)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function lastLines(path: string, n: number): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((l) => `  | ${l}`)
    .join('\n');
}

async function etcdHealthy(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
  return res.ok && ((await res.json()) as { health?: string }).health === 'true';
}

async function registerNode(port: number, tls: ClientTLS): Promise<void> {
  const res = await apiRequest(port, tls, 'POST', '/api/v1/nodes', nodeObject());
  if (res.status !== 201 && res.status !== 409) {
    throw new UserError(`registering node ${nodeName} failed: HTTP ${res.status} ${res.body}`);
  }
}

async function nodeReady(port: number, tls: ClientTLS): Promise<boolean> {
  const res = await apiRequest(port, tls, 'GET', `/api/v1/nodes/${nodeName}`);
  if (res.status !== 200) return false;
  const node = JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } };
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

async function defaultServiceAccountExists(port: number, tls: ClientTLS): Promise<boolean> {
  return (
    (await apiRequest(port, tls, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200
  );
}

export interface DownOptions {
  name?: string;
  env?: NodeJS.ProcessEnv;
  /** Keep the state folder (logs, data) instead of removing it. */
  keepData?: boolean;
}

/** Stops every process the control plane started and removes its state folder. Idempotent. */
export async function down(opts: DownOptions = {}): Promise<boolean> {
  const layout = clusterLayout(opts.name, opts.env ?? process.env);
  const state = await readState(layout);
  const wasRunning = state !== undefined && Object.values(state.pids).some((p) => isAlive(p));
  if (state) await stopAll(state, opts.keepData);
  if (!opts.keepData) await rm(layout.dir, { recursive: true, force: true });
  return wasRunning;
}

/**
 * Stops the processes. Only etcd holds state: every other component is killed outright (their
 * graceful shutdowns take seconds and protect nothing here). etcd gets SIGTERM when its data is
 * kept, SIGKILL when the data is about to be removed anyway.
 */
async function stopAll(state: ClusterState, keepData = false): Promise<void> {
  const pidOf = (c: Component) => (state.pids[c] ? [state.pids[c]!] : []);
  const etcd = pidOf('etcd');
  const stateless = components.filter((c) => c !== 'etcd').flatMap(pidOf);
  if (!keepData) {
    for (const pid of [...stateless, ...etcd]) signal(pid, 'SIGKILL');
    await waitExit([...stateless, ...etcd], Number.POSITIVE_INFINITY);
    return;
  }
  // Clients first, so that etcd sees no writes while it shuts down cleanly.
  for (const pid of stateless) signal(pid, 'SIGKILL');
  await waitExit(stateless, Number.POSITIVE_INFINITY);
  for (const pid of etcd) signal(pid, 'SIGTERM');
  if (!(await waitExit(etcd, 10_000))) for (const pid of etcd) signal(pid, 'SIGKILL');
  await waitExit(etcd, Number.POSITIVE_INFINITY);
}

async function waitExit(pids: number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isAlive)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    // Each component leads its own process group (detached), so this reaches its children too.
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {}
  }
}

export interface ApiServerOptions {
  name?: string;
  env?: NodeJS.ProcessEnv;
  /** How long `startApiServer` waits for /readyz. */
  timeoutMs?: number;
}

/**
 * Stops the API server of a running control plane alone (SIGKILL, as a crash would), leaving
 * etcd with its data and every other component running, so that a test can watch its clients
 * live through an API server that goes away; `startApiServer` brings it back on the same port,
 * certificates and etcd.
 */
export async function stopApiServer(opts: ApiServerOptions = {}): Promise<void> {
  const { state } = await runningState(opts);
  const pid = state.pids['kube-apiserver'];
  if (pid === undefined) return;
  signal(pid, 'SIGKILL');
  await waitExit([pid], Number.POSITIVE_INFINITY);
}

/** Starts the API server of `stopApiServer` again and returns once it answers /readyz. */
export async function startApiServer(opts: ApiServerOptions = {}): Promise<ClusterState> {
  const { layout, state } = await runningState(opts);
  const c: Component = 'kube-apiserver';
  const old = state.pids[c];
  if (old !== undefined && isAlive(old)) throw new UserError(`the API server of "${layout.name}" is running`);
  const bins = await ensureBinaries({ env: opts.env ?? process.env });
  state.pids[c] = await startProcess(c, componentCommand(c, layout, state.ports, bins), layout);
  await writeFileAtomic(layout.stateFile, `${JSON.stringify(state, null, 2)}\n`);
  const tls = await adminTLS(layout);
  await waitFor(
    c,
    layout,
    state,
    opts.timeoutMs ?? 120_000,
    async () => (await apiRequest(state.ports.apiserver, tls, 'GET', '/readyz')).status === 200,
  );
  return state;
}

async function runningState(opts: ApiServerOptions): Promise<{ layout: Layout; state: ClusterState }> {
  const layout = clusterLayout(opts.name, opts.env ?? process.env);
  const state = await readState(layout);
  if (!state) throw new UserError(`control plane "${layout.name}" is not running (bosun cluster up)`);
  return { layout, state };
}

export interface Status {
  name: string;
  running: boolean;
  healthy: boolean;
  state?: ClusterState;
  components: { component: Component; pid?: number; alive: boolean; log: string }[];
}

export async function status(opts: { name?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Status> {
  const layout = clusterLayout(opts.name, opts.env ?? process.env);
  const state = await readState(layout);
  const comps = components.map((c) => {
    const pid = state?.pids[c];
    return { component: c, pid, alive: pid !== undefined && isAlive(pid), log: logFile(layout, c) };
  });
  const running = comps.some((c) => c.alive);
  return {
    name: layout.name,
    running,
    healthy: state !== undefined && (await isHealthy(layout, state)),
    state,
    components: comps,
  };
}
