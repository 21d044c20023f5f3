import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { status } from '../../../src/cluster/controlplane.js';
import { runBosun } from '../../unit/cli/run-bosun.js';

const run = promisify(execFile);
const localCluster = inject('clusterName');
const hasKubectl = await run('kubectl', ['version', '--client']).then(
  () => true,
  () => false,
);

const bosun = (args: string[], env: NodeJS.ProcessEnv = process.env) => runBosun(args, { env });

describe('bosun cluster', () => {
  it.skipIf(!hasKubectl)(
    'kubectl get nodes works with the generated kubeconfig (kubectl is installed)',
    async () => {
      const { stdout } = await run('kubectl', [
        'get',
        'nodes',
        '--no-headers',
        '--kubeconfig',
        inject('kubeconfig'),
      ]);
      expect(stdout).toMatch(/^bosun-node\s+Ready\s/m);
    },
  );

  // The remaining tests drive the local control plane itself, not an existing cluster.
  describe.skipIf(!localCluster)(
    'on the local control plane of this run (not with BOSUN_TEST_KUBECONFIG)',
    () => {
      it('status reports every component running and kubeconfig prints its path', async () => {
        const st = await bosun(['cluster', 'status', '--name', localCluster, '-o', 'json']);
        expect(st.code).toBe(0);
        const parsed = JSON.parse(st.stdout) as {
          healthy: boolean;
          components: { component: string; alive: boolean }[];
        };
        expect(parsed.healthy).toBe(true);
        expect(parsed.components.map((c) => [c.component, c.alive])).toEqual([
          ['etcd', true],
          ['kube-apiserver', true],
          ['kube-controller-manager', true],
          ['kube-scheduler', true],
          ['kwok', true],
        ]);
        const kc = await bosun(['cluster', 'kubeconfig', '--name', localCluster]);
        expect(kc.stdout.trim()).toBe(inject('kubeconfig'));
      });

      it('a second control plane runs beside the first with its own ports and folders, and down stops it', async () => {
        const state = await mkdtemp(join(tmpdir(), 'bosun-state-'));
        const env = { ...process.env, XDG_STATE_HOME: state };
        try {
          const upped = await bosun(['cluster', 'up', '--name', 'second'], env);
          expect(upped.stderr).not.toMatch(/error/);
          expect(upped.code).toBe(0);
          expect(upped.stdout).toContain(
            `export KUBECONFIG=${join(state, 'bosun', 'clusters', 'second', 'kubeconfig')}`,
          );
          const first = await status({ name: localCluster });
          const second = await status({ name: 'second', env });
          expect(first.healthy && second.healthy).toBe(true);
          expect(second.state!.ports.apiserver).not.toBe(first.state!.ports.apiserver);
          expect(second.state!.ports.etcdClient).not.toBe(first.state!.ports.etcdClient);

          const downed = await bosun(['cluster', 'down', '--name', 'second'], env);
          expect(downed.stdout).toContain('stopped');
          const after = await status({ name: 'second', env });
          expect(after.running).toBe(false);
          expect(second.components.every((c) => c.pid !== undefined)).toBe(true);
          for (const c of second.components) expect(() => process.kill(c.pid!, 0)).toThrow();
          expect((await status({ name: localCluster })).healthy).toBe(true);
        } finally {
          await bosun(['cluster', 'down', '--name', 'second'], env);
          await rm(state, { recursive: true, force: true });
        }
      });

      it('refuses an API server port that is in use, naming the port, and starts nothing', async () => {
        const state = await mkdtemp(join(tmpdir(), 'bosun-state-'));
        const blocker = createServer();
        await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
        const port = (blocker.address() as { port: number }).port;
        try {
          const env = { ...process.env, XDG_STATE_HOME: state };
          const res = await bosun(['cluster', 'up', '--name', 'blocked', '--port', String(port)], env);
          expect(res.code).toBe(1);
          expect(res.stderr).toContain(`port 127.0.0.1:${port} for the API server is already in use`);
          expect((await status({ name: 'blocked', env })).running).toBe(false);
        } finally {
          blocker.close();
          await rm(state, { recursive: true, force: true });
        }
      });
    },
  );
});
