import { beforeAll, describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '../../../src/apis/crds/schema.js';
import type {
  CatalogSource,
  ClusterServiceVersion,
  OperatorGroup,
  Subscription,
} from '../../../src/apis/operators.js';
import { parseApiError } from '../../../src/kube/errors.js';
import { freshNamespace } from '../support.js';
import { connect, fixture, installOperatorCrds, readDeployedCrds } from './helpers.js';

interface StoredCrd {
  spec: {
    names: { shortNames?: string[]; categories?: string[] };
    versions: { schema: { openAPIV3Schema: JSONSchemaProps } }[];
  };
  status: { conditions: { type: string; status: string }[] };
}

interface Table {
  columnDefinitions: { name: string }[];
  rows: { cells: unknown[] }[];
}

const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('the CRDs in deploy/crds on a real API server', () => {
  beforeAll(async () => {
    await installOperatorCrds();
  });

  it('install and become Established, with OLM short names and the olm category (v0 kinds)', async () => {
    const { client } = connect();
    const names = (await readDeployedCrds()).map((c) => c.metadata!.name!);
    // OLM v0's seven kinds and OLM v1's two.
    expect(names).toHaveLength(9);
    for (const name of names) {
      const crd = await client.request<StoredCrd>({
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      });
      expect(crd.status.conditions.find((c) => c.type === 'Established')?.status, name).toBe('True');
      // OLM v1's kinds are in no category, as in OLM v1.
      const v1 = name.endsWith('.olm.operatorframework.io');
      expect(crd.spec.names.categories, name).toEqual(v1 ? undefined : ['olm']);
    }
    const discovered: Record<string, string[]> = {};
    for (const gv of ['v1alpha1', 'v1', 'v2']) {
      const list = await client.request<{
        resources: { name: string; shortNames?: string[]; categories?: string[] }[];
      }>({
        path: `/apis/operators.coreos.com/${gv}`,
      });
      for (const r of list.resources.filter((r) => !r.name.includes('/')))
        discovered[r.name] = r.shortNames ?? [];
    }
    expect(discovered).toEqual({
      catalogsources: ['catsrc'],
      subscriptions: ['sub', 'subs'],
      installplans: ['ip'],
      clusterserviceversions: ['csv', 'csvs'],
      operatorgroups: ['og'],
      operatorconditions: ['condition'],
      // OLM's Operator has no short name.
      operators: [],
    });
    client.close();
  });

  it('are stored without losing x-kubernetes-preserve-unknown-fields (the apply is sent as raw JSON)', async () => {
    const { client } = connect();
    const crd = await client.request<StoredCrd>({
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusterserviceversions.operators.coreos.com',
    });
    const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
    const at = (path: string) =>
      path
        .split('.')
        .reduce<JSONSchemaProps | undefined>(
          (node, step) => (step === '[]' ? node?.items : node?.properties?.[step]),
          schema,
        );
    expect(at('status')?.['x-kubernetes-preserve-unknown-fields']).toBe(true);
    // The pod template's metadata is kept whole (labels, annotations), as in OLM's CRD.
    expect(
      at('spec.install.spec.deployments.[].spec.template.metadata')?.['x-kubernetes-preserve-unknown-fields'],
    ).toBe(true);
    expect(at('spec.webhookdefinitions.[].targetPort')?.['x-kubernetes-int-or-string']).toBe(true);
    client.close();
  });

  it('accept OLM YAML as is: an OperatorHub Subscription and a community-style CSV keep every field', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('crd');
    const sub = await fixture<Subscription>('subscription-operatorhub.yaml');
    const storedSub = await applier.apply<Subscription>({
      ...sub,
      metadata: { ...sub.metadata, namespace: ns },
    });
    expect(storedSub.spec).toEqual(sub.spec);

    const csv = await fixture<ClusterServiceVersion>('etcdoperator.v0.9.4.clusterserviceversion.yaml');
    const storedCsv = await applier.apply<ClusterServiceVersion>({
      ...csv,
      metadata: { ...csv.metadata, namespace: ns },
    });
    // Every field kept; the API server only adds defaults, as OLM's CRD has them (a port's protocol).
    expect(storedCsv.spec).toMatchObject(csv.spec);
    expect(storedCsv.spec.install.spec?.deployments[0]?.spec.template.spec?.containers[0]?.ports).toEqual([
      { containerPort: 8080, name: 'metrics', protocol: 'TCP' },
    ]);
    expect(storedCsv.metadata.annotations?.['olm.skipRange']).toBe('>=0.9.0 <0.9.4');
    client.close();
  });

  it('accept OperatorGroups with targetNamespaces, with a selector, and with no spec at all (all namespaces)', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('og');
    const og = (name: string, spec?: OperatorGroup['spec']): OperatorGroup => ({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name, namespace: ns },
      ...(spec ? { spec } : {}),
    });
    const targeted = await applier.apply(og('targeted', { targetNamespaces: [ns] }));
    const selected = await applier.apply(og('selected', { selector: { matchLabels: { team: 'storage' } } }));
    const global = await applier.apply(og('global'));
    expect(targeted.spec).toEqual({ targetNamespaces: [ns], upgradeStrategy: 'Default' });
    expect(selected.spec).toEqual({
      selector: { matchLabels: { team: 'storage' } },
      upgradeStrategy: 'Default',
    });
    expect(global.spec).toEqual({ upgradeStrategy: 'Default' });
    client.close();
  });

  it('reject invalid objects with the field at fault', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('invalid');
    const badSub = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'no-source', namespace: ns },
      spec: { name: 'etcd', sourceNamespace: 'olm', installPlanApproval: 'Sometimes' },
    };
    const err = parseApiError(await applier.apply(badSub).catch((e: unknown) => e));
    expect(err?.reason).toBe('Invalid');
    expect(err?.causes?.map((c) => c.field).sort()).toEqual(['spec.installPlanApproval', 'spec.source']);

    const badCondition = {
      apiVersion: 'operators.coreos.com/v2',
      kind: 'OperatorCondition',
      metadata: { name: 'etcd', namespace: ns },
      spec: {
        conditions: [
          {
            type: 'Upgradeable',
            status: 'Maybe',
            reason: 'not camel',
            message: '',
            lastTransitionTime: '2024-05-01T12:00:00Z',
          },
        ],
      },
    };
    const condErr = parseApiError(await applier.apply(badCondition).catch((e: unknown) => e));
    expect(condErr?.reason).toBe('Invalid');
    expect(condErr?.causes?.map((c) => c.field).sort()).toEqual([
      'spec.conditions[0].reason',
      'spec.conditions[0].status',
    ]);
    client.close();
  });

  it('drop unknown spec fields but keep unknown status fields (room for what Bosun adds)', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('prune');
    const sub = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: ns },
      spec: { name: 'etcd', source: 'catalog', sourceNamespace: ns, notAField: true },
    };
    // Server-side apply refuses fields the schema does not declare...
    const refused = parseApiError(await applier.apply(sub).catch((e: unknown) => e));
    expect(refused?.message).toContain('.spec.notAField: field not declared in schema');
    // ...and a plain create that tolerates them has them pruned.
    const created = await client.request<Subscription>({
      method: 'POST',
      path: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/subscriptions`,
      query: { fieldValidation: 'Ignore' },
      body: sub,
    });
    expect(created.spec).toEqual({ name: 'etcd', source: 'catalog', sourceNamespace: ns });
    const { notAField: _, ...spec } = sub.spec;
    const withStatus = await applier.applyStatus({
      ...sub,
      spec,
      status: { state: 'UpgradePending', lastUpdated: '2024-05-01T12:00:00Z', resolution: { candidates: 3 } },
    });
    expect((withStatus as { status: unknown }).status).toEqual({
      state: 'UpgradePending',
      lastUpdated: '2024-05-01T12:00:00Z',
      resolution: { candidates: 3 },
    });
    client.close();
  });

  it('show the columns kubectl get shows for OLM', async () => {
    const { applier, client } = connect();
    const ns = await freshNamespace('cols');
    const catsrc: CatalogSource = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'operatorhubio-catalog', namespace: ns },
      spec: {
        sourceType: 'grpc',
        image: 'quay.io/example/catalog:latest',
        displayName: 'Community Operators',
        publisher: 'Example',
      },
    };
    await applier.apply(catsrc);
    const sub = await fixture<Subscription>('subscription-operatorhub.yaml');
    await applier.apply({ ...sub, metadata: { ...sub.metadata, namespace: ns } });
    const csv = await fixture<ClusterServiceVersion>('etcdoperator.v0.9.4.clusterserviceversion.yaml');
    await applier.apply({ ...csv, metadata: { ...csv.metadata, namespace: ns } });
    await applier.applyStatus({
      ...csv,
      metadata: { ...csv.metadata, namespace: ns },
      status: { phase: 'Succeeded' },
    });
    await applier.apply({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      metadata: { name: 'install-abcde', namespace: ns },
      spec: { clusterServiceVersionNames: ['etcdoperator.v0.9.4'], approval: 'Manual', approved: false },
    });

    const table = async (plural: string) => {
      const t = await client.request<Table>({
        path: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/${plural}`,
        accept: tableAccept,
      });
      return { columns: t.columnDefinitions.map((c) => c.name), cells: t.rows[0]?.cells };
    };
    expect(await table('subscriptions')).toEqual({
      columns: ['Name', 'Package', 'Source', 'Channel'],
      cells: ['my-etcd', 'etcd', 'operatorhubio-catalog', 'singlenamespace-alpha'],
    });
    expect(await table('clusterserviceversions')).toEqual({
      columns: ['Name', 'Display', 'Version', 'Release', 'Replaces', 'Phase'],
      cells: ['etcdoperator.v0.9.4', 'etcd', '0.9.4', null, 'etcdoperator.v0.9.2', 'Succeeded'],
    });
    expect(await table('installplans')).toEqual({
      columns: ['Name', 'CSV', 'Approval', 'Approved'],
      cells: ['install-abcde', 'etcdoperator.v0.9.4', 'Manual', false],
    });
    const catalogs = await table('catalogsources');
    expect(catalogs.columns).toEqual(['Name', 'Display', 'Type', 'Publisher', 'Age']);
    expect(catalogs.cells?.slice(0, 4)).toEqual([
      'operatorhubio-catalog',
      'Community Operators',
      'grpc',
      'Example',
    ]);
    client.close();
  });
});
