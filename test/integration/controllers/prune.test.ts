/**
 * Real bundles whose objects set fields their schemas do not declare install as OLM installs
 * them: Bosun prunes those fields against the live schemas before server-side apply (which would
 * refuse them), the CSV reaches Succeeded, and the InstallPlan names each pruned field in its
 * Pruned condition and a Warning Event. The bundles come from the OperatorHub corpus
 * (BOSUN_CORPUS_DIR), imported to a file-based catalog and served over an http CatalogSource,
 * each subscribed on its default channel in a namespace of its own. Skips without the corpus.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PatchStrategy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PropertyType } from '../../../src/apis/fbc.js';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import { channelHeads } from '../../../src/olm/channel-graph.js';
import { importOperatorsDir, importPackageDir } from '../../../src/catalog/import.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { renderDeployments } from '../../../src/install/deployments.js';
import { kindInfo } from '../../../src/olm/kinds.js';
import { applyPatchBody, FieldManager } from '../../../src/kube/apply.js';
import { parseApiError } from '../../../src/kube/errors.js';
import { SchemaSource } from '../../../src/kube/schemas.js';
import { systemClock } from '../../../src/kube/clock.js';
import { Builtin } from '../../../src/kube/resources.js';
import { eventually, freshNamespace } from '../support.js';
import {
  connect,
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  type Harness,
  installOperatorCrds,
  startInstallControllers,
  testBundle,
  testCatalog,
  testCatalogSnapshot,
  testCSV,
  TestOperator,
} from './install-harness.js';
import {
  catalogSource,
  create,
  eventsFor,
  get,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
const present = corpus !== undefined && existsSync(corpus);
if (!present) {
  console.warn(
    'prune corpus tests skipped: set BOSUN_CORPUS_DIR to the upstream-community-operators folder of the corpus',
  );
}

/**
 * Packages whose default channel head sets fields Bosun's CSV CRD (like OLM's) does not declare,
 * with v1 CRDs only; and the fields, as found by pruning every corpus CSV against deploy/crds.
 */
const cases: {
  pkg: string;
  csv: string;
  /** Fields of the CSV, pruned from the CSV itself. */
  pruned: string[];
}[] = [
  {
    pkg: 'ibm-block-csi-operator-community',
    csv: 'ibm-block-csi-operator.v1.6.0',
    pruned: ['spec.customresourcedefinitions.owned[0].group'],
  },
  { pkg: 'strimzi-kafka-operator', csv: 'strimzi-cluster-operator.v0.24.0', pruned: ['spec.MinKubeVersion'] },
  { pkg: 'starboard-operator', csv: 'starboard-operator.v0.10.3', pruned: ['spec.miniKubeVersion'] },
  {
    pkg: 'yaks',
    csv: 'yaks-operator.v0.4.0',
    // A PolicyRule field RBAC v1 does not have.
    pruned: ['spec.install.spec.permissions[0].rules[9].attributeRestrictions'],
  },
];

/** The value at a path such as `spec.owned[0].group`. */
function valueAt(obj: unknown, path: string): unknown {
  let v = obj;
  for (const part of path.split(/\.|(?=\[)/)) {
    if (v === null || typeof v !== 'object') return undefined;
    const index = /^\[(\d+)\]$/.exec(part);
    v = index ? (v as unknown[])[Number(index[1])] : (v as Record<string, unknown>)[part];
  }
  return v;
}

const condition = (ip: InstallPlan | undefined, type: string) =>
  ip?.status?.conditions?.find((c) => c.type === type);

/**
 * The CSV's schema keeps unknown fields of a Deployment's pod template metadata (as OLM's does);
 * apps/v1 does not declare them, so the Deployment is applied without them.
 */
describe('a CSV Deployment with a field apps/v1 does not declare', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInstallControllers();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('installs: the CSV keeps the field, the Deployment goes without it, the InstallPlan names both', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('prune-dep');
    const csv = testCSV('0.1.0');
    const template = csv.spec.install.spec.deployments[0]?.spec.template as {
      metadata: Record<string, unknown>;
    };
    // ObjectMeta.initializers existed until Kubernetes 1.14; some real CSVs still carry it.
    template.metadata.initializers = { pending: [] };
    h.catalogs.set(testCatalogSnapshot([testBundle('0.1.0', csv)], { ...testCatalog, name: 'initializers' }));
    await createOperatorGroup(client, ns, 'og');
    await createInstallPlan(client, ns, { source: 'initializers' });

    const installed = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    const field = 'spec.install.spec.deployments[0].spec.template.metadata.initializers';
    expect(valueAt(installed, field)).toEqual({ pending: [] });
    const live = await get<KubeObject>(Builtin.Deployment, ns, TestOperator.deployment);
    expect(valueAt(live, 'spec.template.metadata.labels')).toEqual({ app: 'testop' });
    expect(valueAt(live, 'spec.template.metadata.initializers')).toBeUndefined();

    const ip = await get<InstallPlan>(Resources.InstallPlan, ns, 'install-testop');
    expect(ip?.status?.phase).toBe('Complete');
    const pruned = condition(ip, 'Pruned');
    expect(pruned).toMatchObject({ status: 'True', reason: 'UndeclaredFieldsPruned' });
    expect(pruned?.message).toContain(
      `ClusterServiceVersion/${TestOperator.v1}, deployment ${TestOperator.deployment}: ${field}`,
    );
  });
});

describe.skipIf(!present)('bundles with undeclared fields, from the corpus', () => {
  let manager: RunningManager;
  let server: Server;
  let url = '';

  beforeAll(async () => {
    const imported = await Promise.all(cases.map((c) => importPackageDir(join(corpus ?? '', c.pkg))));
    const catalog = imported
      .flatMap(({ cfg }) => [...cfg.packages, ...cfg.channels, ...cfg.bundles])
      .map((d) => JSON.stringify(d))
      .join('\n');
    // The heads the test expects are the catalog's (a corpus change would show here first).
    for (const [i, { cfg }] of imported.entries()) {
      const pkg = cfg.packages[0];
      const channel = cfg.channels.find((c) => c.name === pkg?.defaultChannel);
      expect(channelHeads(channel?.entries ?? [])).toEqual([cases[i]?.csv]);
    }
    server = createServer((_req, res) => res.writeHead(200).end(catalog));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalog`;
    manager = await startTestManager();
  });
  afterAll(async () => {
    await manager?.stop();
    if (server) await new Promise((r) => server.close(r));
  });

  it.each(cases)(
    '$pkg installs (CSV Succeeded) and its InstallPlan names the pruned fields',
    async ({ pkg, csv, pruned }) => {
      const ns = await freshNamespace('prune');
      await create(
        Resources.CatalogSource,
        ns,
        catalogSource(ns, 'corpus', { sourceType: 'http', address: url }),
      );
      await create(Resources.OperatorGroup, ns, {
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: 'og', namespace: ns },
        spec: { targetNamespaces: [ns] },
      });
      await create(Resources.Subscription, ns, subscription(ns, pkg, { name: pkg, source: 'corpus' }));

      const installed = await eventually(
        `CSV ${csv} to be Succeeded`,
        async () => {
          const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv);
          return c?.status?.phase === 'Succeeded' ? c : undefined;
        },
        150_000,
      );
      // The CSV as stored is the pruned one: the field is gone, the object that held it is not.
      for (const field of pruned) {
        expect(valueAt(installed, field), field).toBeUndefined();
        expect(valueAt(installed, field.slice(0, field.lastIndexOf('.'))), field).toBeDefined();
      }

      const sub = await get<Subscription>(Resources.Subscription, ns, pkg);
      const ipName = sub?.status?.installPlanRef?.name ?? '';
      const ip = await get<InstallPlan>(Resources.InstallPlan, ns, ipName);
      expect(ip?.status?.phase).toBe('Complete');
      const prunedCondition = condition(ip, 'Pruned');
      expect(prunedCondition).toMatchObject({ status: 'True', reason: 'UndeclaredFieldsPruned' });
      for (const field of pruned) {
        expect(prunedCondition?.message).toContain(`ClusterServiceVersion/${csv}`);
        expect(prunedCondition?.message).toContain(field);
      }
      expect(condition(ip, 'Installed')).toMatchObject({ status: 'True' });

      const events = await eventsFor(ns, ipName);
      const warning = events.find((e) => e.reason === 'UndeclaredFieldsPruned');
      expect(warning?.type).toBe('Warning');
      for (const field of pruned) expect(warning?.message).toContain(field);
    },
  );
});

/**
 * Every object of every corpus package's default channel head, and the Deployments its CSV
 * renders, applied with server-side apply as a dry run on the real API server: unpruned, the
 * server refuses some (`field not declared in schema`); pruned by Bosun against the live schemas,
 * it refuses none for that reason. Objects of APIs the server no longer serves (v1beta1 CRDs) and
 * kinds no CRD provides here are left out; other refusals (defects of the corpus such as a
 * missing required field) are not this test's concern.
 */
describe.skipIf(!present)('every corpus head bundle, pruned, passes server-side apply', () => {
  const notDeclared = /field not declared in schema/;

  it('the server refuses undeclared fields without pruning, and none after it', async () => {
    await installOperatorCrds();
    const { client, applier } = connect();
    const ns = await freshNamespace('prune-dry');
    const crds = await client.request<{ items: unknown[] }>({
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    });
    const schemas = new SchemaSource({ client, crds: () => crds.items, clock: systemClock });
    const { config } = await importOperatorsDir(corpus ?? '');

    /** The API server's refusal of a dry-run apply of `obj`, or undefined when it accepts it. */
    const dryRun = async (obj: KubeObject): Promise<string | undefined> => {
      let path: string;
      try {
        path = await applier.pathOf(obj);
      } catch {
        return 'not served';
      }
      try {
        await client.request({
          method: 'PATCH',
          path,
          query: { fieldManager: FieldManager, force: true, dryRun: 'All' },
          body: applyPatchBody(obj, 'spec'),
          contentType: PatchStrategy.ServerSideApply,
        });
        return undefined;
      } catch (err) {
        const api = parseApiError(err);
        if (api === undefined) throw err;
        return api.message;
      }
    };

    const refusedUnpruned: string[] = [];
    const refusedPruned: string[] = [];
    let applied = 0;
    let pruned = 0;
    for (const pkg of config.packages) {
      const channel = config.channels.find((c) => c.package === pkg.name && c.name === pkg.defaultChannel);
      const head = channelHeads(channel?.entries ?? [])[0];
      const bundle = config.bundles.find((b) => b.package === pkg.name && b.name === head);
      const objects = (bundle?.properties ?? [])
        .filter((p) => p.type === PropertyType.BundleObject)
        .map(
          (p) =>
            parse(Buffer.from((p.value as { data: string }).data, 'base64').toString('utf8')) as KubeObject,
        )
        .filter(
          (o) => o?.apiVersion !== 'apiextensions.k8s.io/v1beta1' && typeof o?.metadata?.name === 'string',
        )
        .map((o) => {
          const { status: _status, ...rest } = o as KubeObject & { status?: unknown };
          const namespaced = kindInfo(o.kind ?? '')?.namespaced !== false;
          return {
            ...rest,
            metadata: { name: o.metadata?.name, ...(namespaced ? { namespace: ns } : {}) },
          } as KubeObject;
        });
      const csv = objects.find((o) => o.kind === 'ClusterServiceVersion') as
        ClusterServiceVersion | undefined;
      const rendered = csv ? renderDeployments({ csv }) : undefined;
      if (rendered?.ok) objects.push(...(rendered.value as KubeObject[]));
      for (const obj of objects) {
        const label = `${pkg.name}: ${obj.kind}/${obj.metadata?.name}`;
        const before = await dryRun(obj);
        if (before === 'not served') continue;
        applied++;
        if (before !== undefined && notDeclared.test(before)) refusedUnpruned.push(label);
        const result = await schemas.prune(obj);
        if (result.fields.length > 0) pruned++;
        const after = await dryRun(result.value);
        if (after !== undefined && notDeclared.test(after)) refusedPruned.push(`${label}: ${after}`);
      }
    }
    console.info(
      `dry-run applied ${applied} objects of ${config.packages.length} head bundles: ` +
        `${refusedUnpruned.length} refused for undeclared fields unpruned, ${pruned} had fields pruned, ` +
        `${refusedPruned.length} refused after pruning; schema fetching: ${JSON.stringify(schemas.stats())}`,
    );
    client.close();
    expect(refusedUnpruned).toEqual(
      expect.arrayContaining([
        'ibm-block-csi-operator-community: ClusterServiceVersion/ibm-block-csi-operator.v1.6.0',
        'strimzi-kafka-operator: ClusterServiceVersion/strimzi-cluster-operator.v0.24.0',
      ]),
    );
    expect(refusedPruned).toEqual([]);
  }, 600_000);
});
