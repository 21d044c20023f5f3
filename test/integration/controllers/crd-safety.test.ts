/**
 * Upgrades whose CRD would strand what the cluster stores are refused before anything changes:
 * the InstallPlan fails with reason UnsafeCRDUpgrade naming each problem, and the old CSV, the
 * CRD and every custom resource stay exactly as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { InstallPlan } from '../../../src/apis/operators.js';
import type { CatalogRef } from '../../../src/controllers/context.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { eventually, freshNamespace } from '../support.js';
import {
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  csvPath,
  eventsFor,
  get,
  type Harness,
  inline,
  installOperatorCrds,
  ipPath,
  startInstallControllers,
  testCSV,
} from './install-harness.js';

const catalog: CatalogRef = { namespace: 'olm-test', name: 'crd-safety' };
const GROUP = 'safety.bosun.dev';

/** The first version's schema: each field a later version changes. */
const v1Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', maximum: 10 },
        mode: { type: 'string', enum: ['a', 'b'] },
        name: { type: 'string' },
        note: { type: 'string' },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

function crd(plural: string, schema: object) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: plural[0]!.toUpperCase() + plural.slice(1, -1), plural },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}

/** A package `plural` in two versions, the second shipping its CRD with `v2Schema`. */
function pkg(plural: string, v2Schema: object): { bundles: BundleDoc[]; name: (v: string) => string } {
  const name = (v: string) => `${plural}.v${v}`;
  const bundle = (version: '0.1.0' | '0.2.0', schema: object): BundleDoc => {
    const base = testCSV(version);
    const owned = [{ name: `${plural}.${GROUP}`, version: 'v1', kind: crd(plural, schema).spec.names.kind }];
    const csv = {
      ...base,
      metadata: { ...base.metadata, name: name(version) },
      spec: {
        ...base.spec,
        customresourcedefinitions: { owned },
        ...(version === '0.2.0' ? { replaces: name('0.1.0') } : {}),
      },
    };
    return {
      schema: 'olm.bundle',
      package: plural,
      name: name(version),
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: plural, version } },
        inline(crd(plural, schema)),
        inline(csv),
      ],
    };
  };
  return { bundles: [bundle('0.1.0', v1Schema), bundle('0.2.0', v2Schema)], name };
}

const spec = (properties: object, extra: object = {}) => ({
  type: 'object',
  properties: { spec: { type: 'object', properties, ...extra } },
});

/** Five checks at once: a field removed, a maximum lowered, made required, a type changed, a pattern added. */
const unsafe = pkg(
  'alphas',
  spec(
    {
      size: { type: 'integer', maximum: 5 },
      name: { type: 'string', pattern: '^[a-z]+$' },
      note: { type: 'integer' },
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    { required: ['size'] },
  ),
);
/** Only a new optional field, but an existing object holds a string where it declares an integer. */
const invalidating = pkg(
  'betas',
  spec({
    ...v1Schema.properties.spec.properties,
    extra: {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { level: { type: 'integer' } },
    },
  }),
);

let h: Harness;

beforeAll(async () => {
  await installOperatorCrds();
  h = await startInstallControllers();
  const packages = [unsafe, invalidating].map((p) => p.bundles[0]!.package);
  h.catalogs.set({
    ref: catalog,
    priority: 0,
    digest: 'crd-safety',
    fetchedAt: Date.now(),
    config: {
      packages: packages.map((name) => ({ schema: 'olm.package', name, defaultChannel: 'stable' })),
      channels: [unsafe, invalidating].map((p) => ({
        schema: 'olm.channel',
        package: p.bundles[0]!.package,
        name: 'stable',
        entries: [{ name: p.name('0.1.0') }, { name: p.name('0.2.0'), replaces: p.name('0.1.0') }],
      })),
      bundles: [...unsafe.bundles, ...invalidating.bundles],
      deprecations: [],
      others: [],
    },
  });
});

afterAll(async () => {
  await h?.stop();
});

/** Installs 0.1.0 and creates `objects`; returns the namespace. */
async function installed(p: typeof unsafe, objects: object[]): Promise<string> {
  const { client } = h.ctx;
  const ns = await freshNamespace('crdsafe');
  await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
  await createInstallPlan(client, ns, { name: 'v1', csv: p.name('0.1.0'), source: catalog.name });
  await csvInPhase(client, ns, p.name('0.1.0'), 'Succeeded');
  const plural = p.bundles[0]!.package;
  for (const [i, o] of objects.entries())
    await client.request({
      method: 'POST',
      path: `/apis/${GROUP}/v1/namespaces/${ns}/${plural}`,
      body: {
        apiVersion: `${GROUP}/v1`,
        kind: crd(plural, {}).spec.names.kind,
        metadata: { name: `o${i}` },
        ...o,
      },
    });
  return ns;
}

/** What must not change: the CRD, and every object with its content. */
async function stored(client: KubeClient, ns: string, plural: string) {
  const definition = await get<{ metadata: { resourceVersion: string } }>(
    client,
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${GROUP}`,
  );
  const list = await client.request<{
    items: { metadata: { name: string; resourceVersion: string }; spec: unknown }[];
  }>({
    path: `/apis/${GROUP}/v1/namespaces/${ns}/${plural}`,
  });
  return {
    crdVersion: definition?.metadata.resourceVersion,
    objects: list.items.map((o) => ({
      name: o.metadata.name,
      version: o.metadata.resourceVersion,
      spec: o.spec,
    })),
  };
}

async function refusedUpgrade(p: typeof unsafe, ns: string): Promise<InstallPlan> {
  const { client } = h.ctx;
  await createInstallPlan(client, ns, { name: 'v2', csv: p.name('0.2.0'), source: catalog.name });
  return eventually('the upgrade plan fails', async () => {
    const ip = await get<InstallPlan>(client, ipPath(ns, 'v2'));
    return ip?.status?.phase === 'Failed' ? ip : undefined;
  });
}

describe('CRD upgrade safety', () => {
  it('an upgrade whose CRD fails five checks is refused, and nothing changes', async () => {
    const { client } = h.ctx;
    const ns = await installed(unsafe, [{ spec: { size: 3, mode: 'a' } }, { spec: { size: 8, note: 'n' } }]);
    const before = await stored(client, ns, 'alphas');
    const ip = await refusedUpgrade(unsafe, ns);

    const condition = ip.status?.conditions?.find((c) => c.type === 'Installed');
    expect(condition).toMatchObject({ status: 'False', reason: 'UnsafeCRDUpgrade' });
    for (const check of [
      'FieldRemoved',
      'MaximumLowered',
      'FieldMadeRequired',
      'TypeChanged',
      'PatternChanged',
    ])
      expect(ip.status?.message).toContain(check);
    expect(ip.status?.message).toContain('.spec.mode: the field is removed');
    expect(ip.status?.message).toContain('.spec.size: maximum is lowered from 10 to 5');

    // The old version runs on, the new one was never created, and what is stored is untouched.
    await csvInPhase(client, ns, unsafe.name('0.1.0'), 'Succeeded');
    expect(await get(client, csvPath(ns, unsafe.name('0.2.0')))).toBeUndefined();
    expect(await stored(client, ns, 'alphas')).toEqual(before);
    expect(before.objects).toHaveLength(2);
    const events = await eventsFor(client, ns, 'v2');
    expect(events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'UnsafeCRDUpgrade' }));
  });

  it('an upgrade under whose schema an existing object would be invalid is refused, naming the object', async () => {
    const { client } = h.ctx;
    const ns = await installed(invalidating, [
      { spec: { size: 1, extra: { level: 2 } } },
      { spec: { size: 2, extra: { level: 'high' } } },
    ]);
    const before = await stored(client, ns, 'betas');
    const ip = await refusedUpgrade(invalidating, ns);
    expect(ip.status?.conditions?.find((c) => c.type === 'Installed')?.reason).toBe('UnsafeCRDUpgrade');
    expect(ip.status?.message).toContain('1 existing betas would not be valid under the new schema');
    expect(ip.status?.message).toContain(`${ns}/o1 (.spec.extra.level: must be integer)`);
    expect(ip.status?.message).not.toContain(`${ns}/o0 `);
    await csvInPhase(client, ns, invalidating.name('0.1.0'), 'Succeeded');
    expect(await stored(client, ns, 'betas')).toEqual(before);
  });
});
