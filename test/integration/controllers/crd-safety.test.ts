/**
 * Upgrades whose CRD would strand what the cluster stores are refused before anything changes:
 * the InstallPlan fails with reason UnsafeCRDUpgrade naming each problem, and the old CSV, the
 * CRD and every custom resource stay exactly as they were. Each check refuses an upgrade on its
 * own (one package per check), several refuse one together, an existing object the new schema
 * refuses is named, and an upgrade that only widens the schema goes ahead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { InstallPlan } from '../../../src/apis/operators.js';
import type { CatalogRef } from '../../../src/catalog/content/store.js';
import type { CRDCheck } from '../../../src/install/crd-safety.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { eventually, freshNamespace } from '../support.js';
import {
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  csvPath,
  deploymentPath,
  eventsFor,
  get,
  type Harness,
  inline,
  installOperatorCrds,
  ipPath,
  startInstallControllers,
  testCSV,
  TestOperator,
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

interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: object };
}

const version = (name: string, schema: object, served = true, storage = served): CRDVersion => ({
  name,
  served,
  storage,
  schema: { openAPIV3Schema: schema },
});

const kindOf = (plural: string) => plural[0]!.toUpperCase() + plural.slice(1, -1);

function crd(plural: string, versions: CRDVersion[]) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: { group: GROUP, names: { kind: kindOf(plural), plural }, scope: 'Namespaced', versions },
  };
}

/**
 * A package `plural` in two versions: 0.1.0 ships its CRD with `v1Schema` as its only version
 * v1, 0.2.0 with `v2Versions` (by default v1 alone, with `v2Schema`).
 */
function pkg(plural: string, v2Schema: object, v2Versions: CRDVersion[] = [version('v1', v2Schema)]) {
  const name = (v: string) => `${plural}.v${v}`;
  const bundle = (v: '0.1.0' | '0.2.0', versions: CRDVersion[]): BundleDoc => {
    const base = testCSV(v);
    const stored = versions.find((x) => x.storage)!.name;
    const owned = [{ name: `${plural}.${GROUP}`, version: stored, kind: kindOf(plural) }];
    const csv = {
      ...base,
      metadata: { ...base.metadata, name: name(v) },
      spec: {
        ...base.spec,
        customresourcedefinitions: { owned },
        ...(v === '0.2.0' ? { replaces: name('0.1.0') } : {}),
      },
    };
    return {
      schema: 'olm.bundle',
      package: plural,
      name: name(v),
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: plural, version: v } },
        inline(crd(plural, versions)),
        inline(csv),
      ],
    };
  };
  return {
    plural,
    bundles: [bundle('0.1.0', [version('v1', v1Schema)]), bundle('0.2.0', v2Versions)],
    name,
  };
}
type Package = ReturnType<typeof pkg>;

const spec = (properties: object, extra: object = {}) => ({
  type: 'object',
  properties: { spec: { type: 'object', properties, ...extra } },
});
/** The first version's fields with `changes` laid over them. */
const specWith = (changes: object, extra: object = {}) =>
  spec({ ...v1Schema.properties.spec.properties, ...changes }, extra);

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
  specWith({
    extra: {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { level: { type: 'integer' } },
    },
  }),
);
/** Only widens: a new optional field, a relaxed maximum, a new enum value. */
const widening = pkg(
  'widenings',
  specWith({
    size: { type: 'integer', maximum: 20 },
    mode: { type: 'string', enum: ['a', 'b', 'c'] },
    level: { type: 'integer' },
  }),
);

const withoutNote = Object.fromEntries(
  Object.entries(v1Schema.properties.spec.properties).filter(([field]) => field !== 'note'),
);

/**
 * One check each. Every existing object is valid under the new schema as well (ajv keeps fields
 * a schema does not declare), so the check alone refuses the upgrade.
 */
const singleChecks: {
  check: CRDCheck;
  what: string;
  p: Package;
  objects: object[];
  /** The one problem the refusal names, after `CRD <name> `. */
  finding: string;
}[] = [
  {
    check: 'FieldRemoved',
    what: 'an existing field is removed',
    p: pkg('removals', spec(withoutNote)),
    objects: [{ spec: { size: 1, note: 'kept' } }, { spec: { size: 2 } }],
    finding: 'v1: FieldRemoved: .spec.note: the field is removed',
  },
  {
    check: 'MaximumLowered',
    what: 'a maximum is lowered',
    p: pkg('ceilings', specWith({ size: { type: 'integer', maximum: 5 } })),
    objects: [{ spec: { size: 3 } }, { spec: { size: 5 } }],
    finding: 'v1: MaximumLowered: .spec.size: maximum is lowered from 10 to 5',
  },
  {
    check: 'FieldMadeRequired',
    what: 'a field is made required',
    p: pkg('mandates', specWith({}, { required: ['name'] })),
    objects: [{ spec: { name: 'x' } }, { spec: { name: 'y', size: 4 } }],
    finding: 'v1: FieldMadeRequired: .spec.name: the field is now required',
  },
  {
    check: 'TypeChanged',
    what: "a field's type is changed",
    p: pkg('retypes', specWith({ note: { type: 'integer' } })),
    objects: [{ spec: { size: 1 } }, { spec: { mode: 'b' } }],
    finding: 'v1: TypeChanged: .spec.note: the type changes from string to integer',
  },
  {
    check: 'PatternChanged',
    what: 'a pattern is added',
    p: pkg('patterns', specWith({ name: { type: 'string', pattern: '^[a-z]+$' } })),
    objects: [{ spec: { name: 'abc' } }, { spec: { size: 7 } }],
    finding: 'v1: PatternChanged: .spec.name: a pattern is added (^[a-z]+$)',
  },
  {
    check: 'EnumRestricted',
    what: 'enum values are removed',
    p: pkg('enums', specWith({ mode: { type: 'string', enum: ['a'] } })),
    objects: [{ spec: { mode: 'a' } }, { spec: { size: 2 } }],
    finding: 'v1: EnumRestricted: .spec.mode: enum values are removed: "b"',
  },
  {
    check: 'MinimumRaised',
    what: 'a minimum is added',
    p: pkg('floors', specWith({ size: { type: 'integer', maximum: 10, minimum: 1 } })),
    objects: [{ spec: { size: 1 } }, { spec: { size: 9 } }],
    finding: 'v1: MinimumRaised: .spec.size: minimum 1 is added',
  },
  {
    check: 'DefaultChanged',
    what: 'a default is added',
    p: pkg('defaults', specWith({ mode: { type: 'string', enum: ['a', 'b'], default: 'a' } })),
    objects: [{ spec: { mode: 'b' } }, { spec: { size: 3 } }],
    finding: 'v1: DefaultChanged: .spec.mode: a default is added ("a")',
  },
  {
    check: 'PreserveUnknownFieldsRemoved',
    what: 'unknown fields are no longer preserved',
    p: pkg('prunings', specWith({ extra: { type: 'object' } })),
    objects: [{ spec: { extra: { anything: 1 } } }, { spec: { size: 3 } }],
    finding:
      'v1: PreserveUnknownFieldsRemoved: .spec.extra: unknown fields are no longer preserved (x-kubernetes-preserve-unknown-fields removed)',
  },
  {
    check: 'ServedVersionRemoved',
    what: 'a served version is no longer served',
    p: pkg('servings', v1Schema, [version('v1', v1Schema, false), version('v2', v1Schema)]),
    objects: [{ spec: { size: 1 } }, { spec: { mode: 'a' } }],
    finding: 'v1: ServedVersionRemoved: served version v1 is no longer served',
  },
  {
    check: 'StoredVersionDropped',
    what: 'a version in storedVersions is dropped',
    p: pkg('storages', v1Schema, [version('v2', v1Schema)]),
    objects: [{ spec: { size: 1 } }, { spec: { mode: 'a' } }],
    finding: 'v1: StoredVersionDropped: version v1 holds stored objects and the new CRD drops it',
  },
];

const packages: Package[] = [unsafe, invalidating, widening, ...singleChecks.map((c) => c.p)];

let h: Harness;

beforeAll(async () => {
  await installOperatorCrds();
  h = await startInstallControllers();
  h.catalogs.set({
    ref: catalog,
    priority: 0,
    digest: 'crd-safety',
    fetchedAt: Date.now(),
    config: {
      packages: packages.map((p) => ({ schema: 'olm.package', name: p.plural, defaultChannel: 'stable' })),
      channels: packages.map((p) => ({
        schema: 'olm.channel',
        package: p.plural,
        name: 'stable',
        entries: [{ name: p.name('0.1.0') }, { name: p.name('0.2.0'), replaces: p.name('0.1.0') }],
      })),
      bundles: packages.flatMap((p) => p.bundles),
      deprecations: [],
      others: [],
    },
  });
});

afterAll(async () => {
  await h?.stop();
});

/** Installs 0.1.0 and creates `objects`; returns the namespace. */
async function installed(p: Package, objects: object[]): Promise<string> {
  const { client } = h.ctx;
  const ns = await freshNamespace('crdsafe');
  await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
  await createInstallPlan(client, ns, { name: 'v1', csv: p.name('0.1.0'), source: catalog.name });
  await csvInPhase(client, ns, p.name('0.1.0'), 'Succeeded');
  for (const [i, o] of objects.entries())
    await client.request({
      method: 'POST',
      path: `/apis/${GROUP}/v1/namespaces/${ns}/${p.plural}`,
      body: { apiVersion: `${GROUP}/v1`, kind: kindOf(p.plural), metadata: { name: `o${i}` }, ...o },
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

/** Creates the upgrade's plan and waits for it to end, Failed or Complete. */
async function upgrade(p: Package, ns: string): Promise<InstallPlan> {
  const { client } = h.ctx;
  await createInstallPlan(client, ns, { name: 'v2', csv: p.name('0.2.0'), source: catalog.name });
  return eventually('the upgrade plan ends', async () => {
    const ip = await get<InstallPlan>(client, ipPath(ns, 'v2'));
    const phase = ip?.status?.phase;
    return phase === 'Failed' || phase === 'Complete' ? ip : undefined;
  });
}

async function refusedUpgrade(p: Package, ns: string): Promise<InstallPlan> {
  const ip = await upgrade(p, ns);
  expect(ip.status?.phase).toBe('Failed');
  return ip;
}

const REFUSED = 'the upgrade would not be safe for what the cluster stores, so nothing was changed: ';

/** The problems a refusal names, one per finding. */
function problems(ip: InstallPlan): string[] {
  const message = ip.status?.message ?? '';
  expect(message.startsWith(REFUSED), message).toBe(true);
  return message.slice(REFUSED.length).split('; ');
}

/** The old version runs on, the new one was never created. */
async function oldVersionRuns(client: KubeClient, ns: string, p: Package) {
  await csvInPhase(client, ns, p.name('0.1.0'), 'Succeeded');
  expect(await get(client, csvPath(ns, p.name('0.2.0')))).toBeUndefined();
  const deployment = await get<{ spec: { template: { spec: { containers: { image: string }[] } } } }>(
    client,
    deploymentPath(ns, TestOperator.deployment),
  );
  expect(deployment?.spec.template.spec.containers[0]?.image).toBe('registry.example/testop:0.1.0');
}

describe('CRD upgrade safety', () => {
  it.each(singleChecks)(
    '$check alone refuses an upgrade ($what), and nothing changes',
    async ({ check, p, objects, finding }) => {
      const { client } = h.ctx;
      const ns = await installed(p, objects);
      const before = await stored(client, ns, p.plural);
      expect(before.objects).toHaveLength(objects.length);
      const ip = await refusedUpgrade(p, ns);

      const condition = ip.status?.conditions?.find((c) => c.type === 'Installed');
      expect(condition).toMatchObject({ status: 'False', reason: 'UnsafeCRDUpgrade' });
      // Exactly this check's finding, naming the CRD, the version and (for a field) its path.
      expect(problems(ip)).toEqual([`CRD ${p.plural}.${GROUP} ${finding}`]);
      expect(finding).toContain(`: ${check}: `);

      await oldVersionRuns(client, ns, p);
      const after = await stored(client, ns, p.plural);
      expect(after.objects).toHaveLength(before.objects.length);
      expect(after).toEqual(before);
      const events = await eventsFor(client, ns, 'v2');
      expect(events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'UnsafeCRDUpgrade' }));
    },
  );

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
    await oldVersionRuns(client, ns, unsafe);
    const after = await stored(client, ns, 'alphas');
    expect(after).toEqual(before);
    expect(after.objects).toHaveLength(2);
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
    // The schema change alone is safe: the object is the only problem.
    expect(problems(ip)).toEqual([
      `CRD betas.${GROUP} v1: 1 existing betas would not be valid under the new schema: ${ns}/o1 (.spec.extra.level: must be integer)`,
    ]);
    await oldVersionRuns(client, ns, invalidating);
    const after = await stored(client, ns, 'betas');
    expect(after).toEqual(before);
    expect(after.objects).toHaveLength(2);
  });

  it('an upgrade that only widens the schema goes ahead, keeping every object', async () => {
    const { client } = h.ctx;
    const ns = await installed(widening, [
      { spec: { size: 10, mode: 'b' } },
      { spec: { size: 1, note: 'n' } },
    ]);
    const before = await stored(client, ns, widening.plural);
    const ip = await upgrade(widening, ns);
    expect({ phase: ip.status?.phase, message: ip.status?.message }).toMatchObject({ phase: 'Complete' });
    await csvInPhase(client, ns, widening.name('0.2.0'), 'Succeeded');

    // The CRD is replaced, the objects are not touched. (Right after a CRD changes, the API server
    // answers 429 "storage is (re)initializing" for a moment.)
    const after = await eventually(
      'the objects can be listed',
      () => stored(client, ns, widening.plural),
      15_000,
    );
    expect(after.crdVersion).not.toBe(before.crdVersion);
    expect(after.objects).toEqual(before.objects);
    expect(after.objects).toHaveLength(2);
    const definition = await get<{ spec: { versions: CRDVersion[] } }>(
      client,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${widening.plural}.${GROUP}`,
    );
    expect(definition?.spec.versions[0]?.schema.openAPIV3Schema).toMatchObject({
      properties: {
        spec: {
          properties: {
            size: { maximum: 20 },
            mode: { enum: ['a', 'b', 'c'] },
            level: { type: 'integer' },
          },
        },
      },
    });
  });
});
