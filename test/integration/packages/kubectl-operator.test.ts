/**
 * The `kubectl operator` plugin (v0.6.0, built from its Go module) works against Bosun unchanged:
 * `list-available` reads PackageManifests, `install --create-operator-group` creates the
 * OperatorGroup and Subscription and approves the first InstallPlan, `list` shows it, `upgrade`
 * approves the pending upgrade, and `uninstall --delete-all` removes the operator through its
 * `Operator` object. The sample catalog is served in the test's own namespace: the plugin installs
 * the package a namespace sees first, its own catalogs' before the global ones' (as OLM's
 * packageserver), and other test files leave global catalogs with the same package on the shared
 * control plane.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ClusterServiceVersion, OperatorGroup, Subscription } from '../../../src/apis/operators.js';
import { kubectlOperatorBinary, KubectlOperatorVersion } from '../../support/kubectl-operator.js';
import { eventually, freshNamespace } from '../support.js';
import { get, list, Resources } from '../controllers/support.js';
import { sampleCatalogsData, uniqueGroup } from '../controllers/operator-support.js';
import { configMapCatalog, managerWithPackageApi } from './support.js';

const run = promisify(execFile);
const catalog = `plugin-samples-${process.pid}`;
const built = await kubectlOperatorBinary();
const OperatorResource = {
  group: 'operators.coreos.com',
  version: 'v1',
  kind: 'Operator',
  plural: 'operators',
  namespaced: false,
};

let stopManager: () => Promise<void>;
let pluginPath = '';

/** `kubectl operator …`, found by kubectl as a plugin on PATH. */
async function plugin(...args: string[]): Promise<{ out: string; err: string; code: number }> {
  try {
    // The plugin waits at most --timeout (1m by default) for each step; a loaded CI machine can
    // take longer than that to run the install, so the test waits as long as it does.
    const { stdout, stderr } = await run('kubectl', ['operator', '--timeout', '4m', ...args], {
      env: {
        ...process.env,
        KUBECONFIG: inject('kubeconfig'),
        PATH: `${pluginPath}${delimiter}${process.env.PATH}`,
      },
      timeout: 300_000,
    });
    return { out: stdout, err: stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { out: e.stdout ?? '', err: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 };
  }
}

async function succeeded(ns: string, name: string): Promise<ClusterServiceVersion> {
  return eventually(
    `CSV ${name} to be Succeeded`,
    async () => {
      const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, name);
      return csv?.status?.phase === 'Succeeded' ? csv : undefined;
    },
    180_000,
  );
}

describe.skipIf(!built.ok)(
  `kubectl operator ${KubectlOperatorVersion}${built.ok ? '' : ` (skipped: ${built.why})`}`,
  () => {
    beforeAll(async () => {
      if (!built.ok) return;
      pluginPath = await mkdtemp(join(tmpdir(), 'kubectl-operator-'));
      await symlink(built.path, join(pluginPath, 'kubectl-operator'));
      ({ stop: stopManager } = await managerWithPackageApi({
        packageApiAddr: '0.0.0.0:0',
        catalog,
        displayName: 'Plugin samples',
        // The sample operator's API in a group of this test's own, here and in the namespace's
        // catalog it installs from: it installs 0.1.1, which the shared control plane refuses once
        // another test left the newer 0.2 CRD there.
        data: await sampleCatalogsData(uniqueGroup()),
      }));
    });

    afterAll(async () => {
      await stopManager?.();
    });

    it('list-available, install --create-operator-group, list, upgrade and uninstall --delete-all behave as on OLM', async () => {
      const ns = await freshNamespace('kop');
      await configMapCatalog(ns, catalog, await sampleCatalogsData(uniqueGroup()), {
        displayName: 'Plugin samples',
        publisher: 'Bosun',
      });

      const available = await eventually('list-available to show bosun-sample', async () => {
        const r = await plugin('list-available', '-n', ns, '--catalog', `${ns}/${catalog}`);
        return r.code === 0 && /^bosun-sample\s/m.test(r.out) ? r : undefined;
      });
      expect(available.out.split('\n')[0]).toMatch(/^NAME\s+CATALOG\s+CHANNEL\s+LATEST CSV\s+AGE/);
      expect(available.out).toMatch(/^bosun-sample\s+Plugin samples\s+stable\s+bosun-sample\.v0\.2\.1\s/m);

      // An older version with manual approval, so that an upgrade waits for `kubectl operator upgrade`.
      const install = await plugin(
        'install',
        'bosun-sample',
        '-n',
        ns,
        '--create-operator-group',
        '-c',
        'stable',
        '-v',
        '0.1.1',
        '--approval',
        'Manual',
      );
      expect(install.code, install.out + install.err).toBe(0);
      expect(install.out + install.err).toContain('operatorgroup');
      await succeeded(ns, 'bosun-sample.v0.1.1');
      const ogs = await list<OperatorGroup>(Resources.OperatorGroup, ns);
      expect(ogs.map((og) => og.metadata?.name)).toEqual([ns]);
      const sub = await get<Subscription>(Resources.Subscription, ns, 'bosun-sample');
      expect(sub?.spec).toMatchObject({
        name: 'bosun-sample',
        channel: 'stable',
        source: catalog,
        sourceNamespace: ns,
        startingCSV: 'bosun-sample.v0.1.1',
        installPlanApproval: 'Manual',
      });

      // The newer version waits for approval; `list` shows both.
      await eventually('the upgrade to wait for approval', async () => {
        const s = await get<Subscription>(Resources.Subscription, ns, 'bosun-sample');
        return s?.status?.currentCSV === 'bosun-sample.v0.2.1' &&
          s.status.installedCSV === 'bosun-sample.v0.1.1'
          ? s
          : undefined;
      });
      const listed = await plugin('list', '-n', ns);
      expect(listed.code, listed.err).toBe(0);
      expect(listed.out).toMatch(
        /^bosun-sample\s+bosun-sample\s+bosun-sample\.v0\.1\.1\s+bosun-sample\.v0\.2\.1\s+UpgradePending\s/m,
      );

      const upgrade = await plugin('upgrade', 'bosun-sample', '-n', ns);
      expect(upgrade.code, upgrade.err).toBe(0);
      await succeeded(ns, 'bosun-sample.v0.2.1');

      const op = await eventually('the Operator object to list the CSV', async () => {
        const o = (await get(OperatorResource, '', `bosun-sample.${ns}`)) as
          { status?: { components?: { refs?: { kind: string; name: string }[] } } } | undefined;
        return o?.status?.components?.refs?.some(
          (r) => r.kind === 'ClusterServiceVersion' && r.name === 'bosun-sample.v0.2.1',
        )
          ? o
          : undefined;
      });
      expect(op).toBeDefined();

      const uninstall = await plugin('uninstall', 'bosun-sample', '-n', ns, '--delete-all');
      expect(uninstall.code, uninstall.err).toBe(0);
      expect(await get(Resources.Subscription, ns, 'bosun-sample')).toBeUndefined();
      await eventually('the CSVs to be gone', async () =>
        (await list(Resources.ClusterServiceVersion, ns)).length === 0 ? true : undefined,
      );
      expect(await list(Resources.OperatorGroup, ns)).toEqual([]);
      await eventually('the Operator to be gone', async () =>
        (await get(OperatorResource, '', `bosun-sample.${ns}`)) === undefined ? true : undefined,
      );
    });
  },
);
