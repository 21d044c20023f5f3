/**
 * Local control plane figures: cold build of the binaries (only with BOSUN_BENCH_COLD=1: it
 * recompiles everything with an empty Go build cache, ~15 minutes on two cores), warm `up` to
 * healthy, `down`, and the resident memory of each component once idle.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinaries } from '../../src/cluster/build.js';
import { down, up } from '../../src/cluster/controlplane.js';
import { controlPlaneVersions } from '../../src/cluster/versions.js';
import type { Emit } from './run.js';
import { rssBytes } from './support.js';

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

/**
 * CPU seconds used so far by the finished child processes of this one (go and the compilers it
 * runs): `cutime + cstime` of /proc/self/stat, in clock ticks (100 a second on Linux).
 */
function childCpuSeconds(): number {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

export default async function cluster(emit: Emit): Promise<void> {
  const inputs = {
    kubernetes: controlPlaneVersions.kubernetes,
    etcd: controlPlaneVersions.etcd,
    kwok: controlPlaneVersions.kwok,
  };
  if (process.env.BOSUN_BENCH_COLD === '1') {
    // A fresh binary cache and Go build cache each time; Go modules are already downloaded.
    // Both ways the recipes can run: one after the other (the default), and side by side.
    for (const sideBySide of [false, true]) {
      const cache = await mkdtemp(join(tmpdir(), 'bosun-cold-'));
      try {
        const t = process.hrtime.bigint();
        const cpu = childCpuSeconds();
        let last = '';
        await ensureBinaries({
          env: { ...process.env, XDG_CACHE_HOME: cache, GOCACHE: join(cache, 'go-build') },
          sideBySide,
          onStatus: (st) => {
            if (st.step !== last) process.stderr.write(`cluster bench: ${st.components[0]}: ${st.step}\n`);
            last = st.step;
          },
        });
        emit({
          name: sideBySide ? 'cluster.build.cold.side-by-side' : 'cluster.build.cold',
          value: seconds(t),
          unit: 's',
          inputs: {
            ...inputs,
            goModulesCached: true,
            recipes: sideBySide ? 'side by side' : 'one after another',
            cpuSeconds: Math.round(childCpuSeconds() - cpu),
          },
        });
      } finally {
        await rm(cache, { recursive: true, force: true });
      }
    }
  }
  await ensureBinaries();
  const state = await mkdtemp(join(tmpdir(), 'bosun-bench-'));
  const env = { ...process.env, XDG_STATE_HOME: state };
  try {
    const runs = 3;
    for (let i = 0; i < runs; i++) {
      const t = process.hrtime.bigint();
      const s = await up({ name: 'bench', env });
      emit({ name: 'cluster.up.warm', value: seconds(t), unit: 's', inputs: { ...inputs, run: i + 1 } });
      if (i === runs - 1) {
        // Idle: let start-up work (controllers' initial syncs, node heartbeats) settle first.
        await new Promise((r) => setTimeout(r, 15_000));
        let total = 0;
        for (const [component, pid] of Object.entries(s.pids)) {
          const rss = await rssBytes(pid);
          total += rss;
          emit({
            name: 'cluster.rss.idle',
            value: Math.round(rss / 2 ** 20),
            unit: 'MiB',
            inputs: { component },
          });
        }
        emit({
          name: 'cluster.rss.idle',
          value: Math.round(total / 2 ** 20),
          unit: 'MiB',
          inputs: { component: 'total' },
        });
      }
      const d = process.hrtime.bigint();
      await down({ name: 'bench', env });
      emit({ name: 'cluster.down', value: seconds(d), unit: 's', inputs: { ...inputs, run: i + 1 } });
    }
  } finally {
    await down({ name: 'bench', env });
    await rm(state, { recursive: true, force: true });
  }
}
