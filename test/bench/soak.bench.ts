/**
 * `npm run bench -- soak`: what must stay up, watched for a long time. A fresh local control
 * plane and the manager (its own process) with operators installed — every corpus package when
 * BOSUN_CORPUS_DIR is set (as the corpus-install bench does), else the repository's sample
 * operator — then BOSUN_SOAK_MINUTES (default 30) of watching:
 * - soak.node.notready: how often the simulated node left Ready, and for how many seconds in all;
 * - soak.pod.readiness.flips: Pods that were Ready and became not Ready;
 * - soak.csv.left.succeeded: CSVs that were Succeeded and moved to another phase;
 * - soak.rss.<component>: resident memory of etcd, the API server, controller-manager, scheduler,
 *   kwok and the manager, sampled every minute (value: the last sample; inputs: first, max).
 * Every figure comes from informers (watches), so a flip between two samples is not missed.
 */
import type { KubeObject } from '../../src/apis/meta.js';
import { type ClusterServiceVersion, Resources } from '../../src/apis/operators.js';
import { nodeName } from '../../src/cluster/layout.js';
import { createInformer } from '../../src/kube/informer.js';
import { applyDefaults, GlobalNamespace, OperatorsNamespace } from '../../src/cli/commands/start.js';
import { Applier } from '../../src/kube/apply.js';
import { installCorpus } from './corpus-install.bench.js';
import type { Emit } from './run.js';
import { benchCluster, mib, rssBytes, runManager, sleep, stopProcess, waitFor } from './support.js';

const say = (line: string) => process.stderr.write(`soak bench: ${line}\n`);

type Conditioned = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
const isReady = (o: Conditioned | undefined) =>
  o?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

export default async function soak(emit: Emit): Promise<void> {
  const minutes = Number(process.env.BOSUN_SOAK_MINUTES ?? 30);
  const corpus = process.env.BOSUN_CORPUS_DIR;
  const keepAlive = setInterval(() => {}, 1 << 30);
  const cluster = await benchCluster('soak');
  const manager = runManager(cluster.kubeconfig, GlobalNamespace);
  manager.on('exit', (code) => say(`manager exited (${code})`));
  let served: { close(): void } | undefined;
  try {
    let installed: string;
    if (corpus) {
      const run = await installCorpus(corpus, cluster, manager.pid!);
      served = run.served;
      const ok = [...run.outcomes.values()].filter((o) => o.kind === 'Succeeded').length;
      installed = `corpus: ${ok} of ${run.plans.length} packages Succeeded`;
    } else {
      say('BOSUN_CORPUS_DIR is not set: soaking with the sample operator only');
      await waitFor('the CRDs', async () => {
        await applyDefaults(new Applier(cluster.client), new URL('../../catalogs', import.meta.url).pathname);
        return true;
      });
      await cluster.create(Resources.Subscription, OperatorsNamespace, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'bosun-sample', namespace: OperatorsNamespace },
        spec: {
          name: 'bosun-sample',
          channel: 'stable',
          source: 'bosun-catalog',
          sourceNamespace: GlobalNamespace,
        },
      } as KubeObject);
      await waitFor(
        'the sample operator to succeed',
        async () => {
          const list = await cluster.client.request<{ items: ClusterServiceVersion[] }>({
            path: `/apis/operators.coreos.com/v1alpha1/namespaces/${OperatorsNamespace}/clusterserviceversions`,
          });
          return list.items.some((c) => c.status?.phase === 'Succeeded') ? true : undefined;
        },
        300_000,
        1000,
      );
      installed = 'sample operator';
    }
    say(`${installed}; soaking for ${minutes} minutes`);

    const { client } = cluster;
    const node = createInformer<Conditioned>(client, {
      group: '',
      version: 'v1',
      kind: 'Node',
      plural: 'nodes',
      namespaced: false,
    });
    const pods = createInformer<Conditioned>(client, {
      group: '',
      version: 'v1',
      kind: 'Pod',
      plural: 'pods',
      namespaced: true,
    });
    const csvs = createInformer<ClusterServiceVersion>(client, Resources.ClusterServiceVersion);
    for (const i of [node, pods, csvs]) i.start();
    await Promise.all([node.synced(), pods.synced(), csvs.synced()]);

    let notReadySince: number | undefined;
    let notReadyCount = 0;
    let notReadyMs = 0;
    const onNode = (n: Conditioned) => {
      if (n.metadata?.name !== nodeName) return;
      if (!isReady(n) && notReadySince === undefined) {
        notReadySince = performance.now();
        notReadyCount++;
        say('node went NotReady');
      } else if (isReady(n) && notReadySince !== undefined) {
        notReadyMs += performance.now() - notReadySince;
        notReadySince = undefined;
      }
    };
    node.on({ update: (_, n) => onNode(n) });
    onNode(await waitFor('the node', async () => node.list().find((n) => n.metadata?.name === nodeName)));

    const podFlips: string[] = [];
    pods.on({
      update: (a, b) => {
        if (isReady(a) && !isReady(b)) podFlips.push(`${b.metadata?.namespace}/${b.metadata?.name}`);
      },
    });
    const csvFlips: string[] = [];
    csvs.on({
      update: (a, b) => {
        if (a.status?.phase === 'Succeeded' && b.status?.phase !== 'Succeeded')
          csvFlips.push(
            `${b.metadata.namespace}/${b.metadata.name} → ${b.status?.phase}/${b.status?.reason}`,
          );
      },
    });
    const readyPods = pods.list().filter(isReady).length;
    const succeeded = csvs.list().filter((c) => c.status?.phase === 'Succeeded').length;

    const pids: Record<string, number> = { ...cluster.state?.pids, manager: manager.pid! };
    const samples: Record<string, number[]> = {};
    const sample = async () => {
      for (const [component, pid] of Object.entries(pids)) {
        const rss = await rssBytes(pid).catch(() => Number.NaN);
        (samples[component] ??= []).push(mib(rss));
      }
    };
    await sample();
    const end = performance.now() + minutes * 60_000;
    while (performance.now() < end) {
      await sleep(Math.min(60_000, end - performance.now()));
      await sample();
      say(
        `${Math.round((minutes * 60_000 - (end - performance.now())) / 60_000)} min: node ${notReadySince === undefined ? 'Ready' : 'NotReady'}, ` +
          `${podFlips.length} pod readiness flips, ${csvFlips.length} CSVs left Succeeded`,
      );
    }
    if (notReadySince !== undefined) notReadyMs += performance.now() - notReadySince;
    for (const i of [node, pods, csvs]) await i.stop();

    const inputs = { minutes, installed, readyPodsAtStart: readyPods, succeededCSVsAtStart: succeeded };
    emit({
      name: 'soak.node.notready',
      value: notReadyCount,
      unit: 'times',
      inputs: { ...inputs, notReadySeconds: Math.round(notReadyMs / 1000) },
    });
    emit({
      name: 'soak.pod.readiness.flips',
      value: podFlips.length,
      unit: 'pods',
      inputs: { ...inputs, examples: podFlips.slice(0, 5) },
    });
    emit({
      name: 'soak.csv.left.succeeded',
      value: csvFlips.length,
      unit: 'CSVs',
      inputs: { ...inputs, examples: csvFlips.slice(0, 5) },
    });
    for (const [component, values] of Object.entries(samples)) {
      emit({
        name: `soak.rss.${component}`,
        value: values.at(-1)!,
        unit: 'MiB',
        inputs: { minutes, first: values[0], max: Math.max(...values), samples: values.length },
      });
    }
  } finally {
    served?.close();
    await stopProcess(manager);
    await cluster.close();
    clearInterval(keepAlive);
  }
}
