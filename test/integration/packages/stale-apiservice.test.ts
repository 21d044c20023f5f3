/**
 * A manager that dies without stopping (SIGKILL here; an abort or the OOM killer alike) leaves its
 * PackageManifest APIService registered, which nobody answers: the next manager to start removes
 * it (and the spooled catalogs the dead one left in the temporary folder), so namespace deletion
 * and discovery work again. A registration someone still serves, or someone else's, is kept.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Applier } from '../../../src/kube/apply.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { Builtin } from '../../../src/kube/resources.js';
import { type RunningManager, startManager } from '../../../src/manager/manager.js';
import {
  advertisedAddress,
  APIServiceName,
  apiServiceAvailable,
  registrationObjects,
  staleRegistration,
  unregister,
} from '../../../src/server/packageserver/register.js';
import { spawnBosun } from '../../support/bosun-process.js';
import { eventually } from '../support.js';
import { client, create, remove } from '../controllers/support.js';
import { GlobalNamespace } from './support.js';

const apiServicePath = `/apis/apiregistration.k8s.io/v1/apiservices/${APIServiceName}`;

const hostIp = (() => {
  const a = advertisedAddress({ host: '0.0.0.0', port: 0 });
  if ('error' in a) throw new Error(a.error);
  return a.ip;
})();

async function apiService(): Promise<{ metadata: { labels?: Record<string, string> } } | undefined> {
  try {
    return await client().request({ path: apiServicePath });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** A port on the host's address that nothing listens on. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, hostIp, r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** The manager as its own process (the CLI's `operator run`), serving the API. */
function managerProcess(port: number): ChildProcess {
  const args = [
    'operator',
    'run',
    '--kubeconfig',
    inject('kubeconfig'),
    '--metrics-addr',
    '127.0.0.1:0',
    '--package-api-addr',
    `${hostIp}:${port}`,
  ];
  return spawnBosun(args, { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Spool folders in the temporary folder whose owner file names `pid`. */
function spoolsOf(pid: number): string[] {
  return readdirSync(tmpdir())
    .filter((n) => n.startsWith('bosun-catalogs-'))
    .map((n) => join(tmpdir(), n))
    .filter((d) => {
      try {
        return (JSON.parse(readFileSync(join(d, 'owner'), 'utf8')) as { pid: number }).pid === pid;
      } catch {
        return false;
      }
    });
}

/** A manager in this process that serves no PackageManifest API and runs no controller. */
function plainManager(): Promise<RunningManager> {
  return startManager({
    kubeconfig: inject('kubeconfig'),
    installCrds: true,
    metricsAddr: null,
    globalNamespace: GlobalNamespace,
    controllers: [],
    logger: pino({ level: process.env.BOSUN_TEST_LOG ?? 'silent' }),
  });
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
  await unregister(client(), GlobalNamespace).catch(() => undefined);
});

describe('a PackageManifest APIService left by a manager that died', () => {
  it('is removed when the next manager starts, with the dead manager’s spooled catalogs; namespaces delete again', async () => {
    await create(Builtin.Namespace, '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: GlobalNamespace },
    }).catch(() => undefined);
    // The CRDs the manager process needs (it does not install them).
    await (await plainManager()).stop();
    const child = managerProcess(await freePort());
    cleanup.push(async () => child.kill('SIGKILL'));
    await eventually(
      'the dead-to-be manager to register an available APIService',
      async () => {
        if (child.exitCode !== null) throw new Error(`the manager process exited with ${child.exitCode}`);
        return (await apiServiceAvailable(client()).catch(() => ({ available: false }))).available
          ? true
          : undefined;
      },
      150_000,
    );
    const spools = await eventually('its spool folder', async () => {
      const s = spoolsOf(child.pid!);
      return s.length > 0 ? s : undefined;
    });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // Left behind, and nobody answers it.
    expect(await apiService()).toBeDefined();
    expect(await staleRegistration(client(), GlobalNamespace)).toMatchObject({ stale: true });
    for (const s of spools) expect(existsSync(s)).toBe(true);

    const manager = await plainManager();
    cleanup.push(() => manager.stop());
    expect(await apiService()).toBeUndefined();
    for (const s of spools) expect(existsSync(s)).toBe(false);

    // Namespace deletion no longer waits on an API nobody serves.
    const ns = `stale-api-${process.pid}`;
    await create(Builtin.Namespace, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await remove(Builtin.Namespace, '', ns);
    await eventually(
      'the namespace to be deleted',
      async () => {
        try {
          await client().request({ path: `/api/v1/namespaces/${ns}` });
          return undefined;
        } catch (err) {
          return isNotFound(err) ? true : undefined;
        }
      },
      90_000,
    );
  });
});

describe('a PackageManifest APIService that is not stale', () => {
  async function registerAt(port: number, labelled: boolean): Promise<void> {
    const applier = new Applier(client());
    const [ns, svc, slice, api] = registrationObjects({
      namespace: GlobalNamespace,
      ip: hostIp,
      port,
      caPEM: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    });
    if (!labelled) delete (api!.metadata as { labels?: unknown }).labels;
    for (const o of [ns!, svc!, slice!, api!]) await applier.apply(o);
  }

  it('is kept while something answers at its address (a manager serving it elsewhere)', async () => {
    const listener: Server = createServer((s) => s.destroy());
    await new Promise<void>((r) => listener.listen(0, hostIp, r));
    cleanup.push(() => new Promise((r) => listener.close(r)));
    await registerAt((listener.address() as { port: number }).port, true);
    const manager = await plainManager();
    cleanup.push(() => manager.stop());
    expect(await apiService()).toBeDefined();
  });

  it('is kept when Bosun did not register it, though nobody answers', async () => {
    await registerAt(await freePort(), false);
    const manager = await plainManager();
    cleanup.push(() => manager.stop());
    expect(await apiService()).toBeDefined();
    expect(await staleRegistration(client(), GlobalNamespace)).toEqual({
      stale: false,
      why: 'not registered by Bosun',
    });
  });
});
