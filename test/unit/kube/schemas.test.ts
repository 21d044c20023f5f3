import { ApiError } from '../../../src/kube/client.js';
import { describe, expect, it } from 'vitest';
import { pruneObject } from '../../../src/install/prune.js';
import type { RequestOptions } from '../../../src/kube/client.js';
import { SchemaSource } from '../../../src/kube/schemas.js';
import { FakeClock } from './fake-clock.js';

/** An apps/v1 document as the server publishes it, with `extra` declared on DeploymentSpec. */
function appsDocument(specFields: string[]) {
  return {
    openapi: '3.0.0',
    components: {
      schemas: {
        'io.k8s.api.apps.v1.Deployment': {
          description: 'Deployment enables declarative updates for Pods and ReplicaSets.',
          type: 'object',
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: {
              default: {},
              allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
            },
            spec: {
              default: {},
              allOf: [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec' }],
            },
          },
          'x-kubernetes-group-version-kind': [{ group: 'apps', kind: 'Deployment', version: 'v1' }],
        },
        'io.k8s.api.apps.v1.DeploymentSpec': {
          type: 'object',
          properties: Object.fromEntries(specFields.map((f) => [f, { type: 'integer', description: f }])),
        },
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': {
          type: 'object',
          properties: { name: { type: 'string' }, description: { type: 'string' } },
        },
      },
    },
  };
}

/** A scripted API server answer per path, counting requests. */
function scripted(routes: Record<string, () => unknown>) {
  const requests: string[] = [];
  return {
    requests,
    client: {
      async request<T>(opts: RequestOptions): Promise<T> {
        const q = new URLSearchParams(opts.query as Record<string, string>).toString();
        requests.push(q ? `${opts.path}?${q}` : opts.path);
        const route = routes[opts.path];
        if (route === undefined) throw new ApiError(404, 'Not Found', '{"code":404}', {});
        return (await route()) as T;
      },
    },
  };
}

const index = (hashes: Record<string, string>) => ({
  paths: Object.fromEntries(
    Object.entries(hashes).map(([p, h]) => [p, { serverRelativeURL: `/openapi/v3/${p}?hash=${h}` }]),
  ),
});

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd' },
  spec: { replicas: 1, paused: true },
};

describe('SchemaSource, built-in kinds', () => {
  it('fetches the index and the document once, then answers from its cache', async () => {
    const clock = new FakeClock();
    const api = scripted({
      '/openapi/v3': () => index({ 'apis/apps/v1': 'A', 'api/v1': 'B' }),
      '/openapi/v3/apis/apps/v1': () => appsDocument(['replicas']),
    });
    const source = new SchemaSource({ client: api.client, crds: () => [], clock });
    const first = await source.schemaFor('apps/v1', 'Deployment');
    clock.advance(5_000);
    const second = await source.schemaFor('apps/v1', 'Deployment');
    expect(api.requests).toEqual(['/openapi/v3', '/openapi/v3/apis/apps/v1?hash=A']);
    // The same compacted document serves both.
    expect(second?.flavor === 'openapi' && first?.flavor === 'openapi').toBe(true);
    if (second?.flavor === 'openapi' && first?.flavor === 'openapi')
      expect(second.components).toBe(first.components);
    expect(pruneObject(deployment, first!).fields).toEqual(['spec.paused']);
    expect(source.stats()).toMatchObject({ indexFetches: 1, documentFetches: 1 });
  });

  it('reads the index again once it is old, and the document only when its hash changed', async () => {
    const clock = new FakeClock();
    let hash = 'A';
    let fields = ['replicas'];
    const api = scripted({
      '/openapi/v3': () => index({ 'apis/apps/v1': hash }),
      '/openapi/v3/apis/apps/v1': () => appsDocument(fields),
    });
    const source = new SchemaSource({ client: api.client, crds: () => [], clock, indexMaxAgeMs: 10_000 });
    await source.schemaFor('apps/v1', 'Deployment');
    clock.advance(10_000);
    await source.schemaFor('apps/v1', 'Deployment');
    expect(api.requests).toEqual(['/openapi/v3', '/openapi/v3/apis/apps/v1?hash=A', '/openapi/v3']);

    hash = 'B';
    fields = ['replicas', 'paused'];
    clock.advance(10_000);
    const changed = await source.schemaFor('apps/v1', 'Deployment');
    expect(api.requests.slice(3)).toEqual(['/openapi/v3', '/openapi/v3/apis/apps/v1?hash=B']);
    expect(pruneObject(deployment, changed!).fields).toEqual([]);
  });

  it('on a miss reads the index again at once (a group or kind served since), but not more than once a second', async () => {
    const clock = new FakeClock();
    let paths: Record<string, string> = { 'apis/apps/v1': 'A' };
    const api = scripted({
      '/openapi/v3': () => index(paths),
      '/openapi/v3/apis/apps/v1': () => appsDocument(['replicas']),
      '/openapi/v3/apis/batch/v1': () => ({
        components: {
          schemas: {
            'io.k8s.api.batch.v1.Job': {
              type: 'object',
              properties: { spec: { type: 'object' } },
              'x-kubernetes-group-version-kind': [{ group: 'batch', kind: 'Job', version: 'v1' }],
            },
          },
        },
      }),
    });
    const source = new SchemaSource({ client: api.client, crds: () => [], clock });
    await source.schemaFor('apps/v1', 'Deployment');
    // Just read: a miss right now does not read the index again.
    expect(await source.schemaFor('batch/v1', 'Job')).toBeUndefined();
    expect(api.requests.filter((r) => r === '/openapi/v3')).toHaveLength(1);

    paths = { 'apis/apps/v1': 'A', 'apis/batch/v1': 'C' };
    clock.advance(2_000);
    expect(await source.schemaFor('batch/v1', 'Job')).toMatchObject({ flavor: 'openapi' });
    // A kind the document does not have.
    clock.advance(2_000);
    expect(await source.schemaFor('apps/v1', 'Gizmo')).toBeUndefined();
    expect(api.requests).toEqual([
      '/openapi/v3',
      '/openapi/v3/apis/apps/v1?hash=A',
      '/openapi/v3',
      '/openapi/v3/apis/batch/v1?hash=C',
      '/openapi/v3',
    ]);
  });

  it('concurrent lookups share one fetch of each document', async () => {
    const clock = new FakeClock();
    const api = scripted({
      '/openapi/v3': () => index({ 'apis/apps/v1': 'A' }),
      '/openapi/v3/apis/apps/v1': () =>
        new Promise((r) => setTimeout(() => r(appsDocument(['replicas'])), 5)),
    });
    const source = new SchemaSource({ client: api.client, crds: () => [], clock });
    const all = await Promise.all([1, 2, 3].map(() => source.schemaFor('apps/v1', 'Deployment')));
    expect(all.every((s) => s?.flavor === 'openapi')).toBe(true);
    expect(api.requests).toEqual(['/openapi/v3', '/openapi/v3/apis/apps/v1?hash=A']);
  });

  it('a server without OpenAPI v3 gives no schema, and other failures are thrown', async () => {
    const none = scripted({});
    const source = new SchemaSource({ client: none.client, crds: () => [], clock: new FakeClock() });
    expect(await source.schemaFor('v1', 'Service')).toBeUndefined();

    const broken = scripted({
      '/openapi/v3': () => {
        throw new ApiError(500, 'Internal Server Error', '{"code":500}', {});
      },
    });
    const failing = new SchemaSource({ client: broken.client, crds: () => [], clock: new FakeClock() });
    await expect(failing.schemaFor('v1', 'Service')).rejects.toThrow();
  });

  it('keeps of a document only what pruning reads, and properties named like keywords', async () => {
    const api = scripted({
      '/openapi/v3': () => index({ 'apis/apps/v1': 'A' }),
      '/openapi/v3/apis/apps/v1': () => appsDocument(['replicas']),
    });
    const source = new SchemaSource({ client: api.client, crds: () => [], clock: new FakeClock() });
    const s = await source.schemaFor('apps/v1', 'Deployment');
    if (s?.flavor !== 'openapi') throw new Error('expected an OpenAPI schema');
    expect(s.components['io.k8s.api.apps.v1.Deployment']).not.toHaveProperty('description');
    expect(s.components['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']?.properties).toHaveProperty(
      'description',
    );
    const r = pruneObject({ metadata: { name: 'n', description: 'kept', other: 1 } }, s);
    expect(r.fields).toEqual(['metadata.other']);
  });
});

describe('SchemaSource, custom resources', () => {
  const crd = (opts: { preserveUnknownFields?: boolean } = {}, resourceVersion = '1') => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.x.io', resourceVersion },
    spec: {
      group: 'x.io',
      names: { kind: 'Widget', plural: 'widgets' },
      ...opts,
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
            },
          },
        },
      ],
    },
  });

  it("takes a CRD's schema for the version from the informer, without a request", async () => {
    const api = scripted({});
    const crds = [crd()];
    const source = new SchemaSource({ client: api.client, crds: () => crds, clock: new FakeClock() });
    const s = await source.schemaFor('x.io/v1', 'Widget');
    expect(s?.flavor).toBe('structural');
    const r = pruneObject({ apiVersion: 'x.io/v1', kind: 'Widget', spec: { size: 1, colour: 'red' } }, s!);
    expect(r.fields).toEqual(['spec.colour']);
    expect(await source.schemaFor('x.io/v1', 'Widget')).toBe(s);
    expect(api.requests).toEqual([]);
  });

  it('reads the CRD again when the informer holds a new version of it', async () => {
    let crds = [crd()];
    const source = new SchemaSource({
      client: scripted({}).client,
      crds: () => crds,
      clock: new FakeClock(),
    });
    const before = await source.schemaFor('x.io/v1', 'Widget');
    const changed = crd({}, '2');
    changed.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties = {
      size: { type: 'integer' },
      colour: { type: 'string' },
    } as never;
    crds = [changed];
    const after = await source.schemaFor('x.io/v1', 'Widget');
    const obj = { spec: { size: 1, colour: 'red' } };
    expect(pruneObject(obj, before!).fields).toEqual(['spec.colour']);
    expect(pruneObject(obj, after!).fields).toEqual([]);
  });

  it("reads a CRD's schemas from the API server when the informer keeps the CRD without them, once per version of the CRD", async () => {
    const full = crd({}, '7');
    const api = scripted({
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.x.io': () => full,
    });
    const slim = { ...full, spec: { ...full.spec, versions: [{ name: 'v1', served: true, storage: true }] } };
    let crds = [slim];
    const source = new SchemaSource({ client: api.client, crds: () => crds, clock: new FakeClock() });
    const [a, b] = await Promise.all([
      source.schemaFor('x.io/v1', 'Widget'),
      source.schemaFor('x.io/v1', 'Widget'),
    ]);
    expect(a).toBe(b);
    const widget = { apiVersion: 'x.io/v1', kind: 'Widget', spec: { size: 1, colour: 'red' } };
    expect(pruneObject(widget, a!).fields).toEqual(['spec.colour']);
    expect(await source.schemaFor('x.io/v1', 'Widget')).toBe(a);
    expect(api.requests).toEqual(['/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.x.io']);
    crds = [{ ...slim, metadata: { ...slim.metadata, resourceVersion: '8' } }];
    await source.schemaFor('x.io/v1', 'Widget');
    expect(api.requests).toHaveLength(2);
  });

  it('prunes an object by its live schema, and leaves alone one it has no schema for', async () => {
    const source = new SchemaSource({
      client: scripted({}).client,
      crds: () => [crd()],
      clock: new FakeClock(),
    });
    const widget = {
      apiVersion: 'x.io/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 1, colour: 'red' },
    };
    expect(await source.prune(widget)).toEqual({
      value: { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } },
      fields: ['spec.colour'],
    });
    const gadget = { apiVersion: 'y.io/v1', kind: 'Gadget', spec: { any: 1 } };
    expect(await source.prune(gadget)).toEqual({ value: gadget, fields: [] });
    const nameless: { apiVersion?: string; spec: unknown } = { spec: { any: 1 } };
    expect((await source.prune(nameless)).value).toBe(nameless);
  });

  it('gives no schema for a version the CRD does not have, or a CRD that preserves unknown fields', async () => {
    const source = new SchemaSource({
      client: scripted({}).client,
      crds: () => [crd()],
      clock: new FakeClock(),
    });
    expect(await source.schemaFor('x.io/v2', 'Widget')).toBeUndefined();
    const legacy = new SchemaSource({
      client: scripted({}).client,
      crds: () => [crd({ preserveUnknownFields: true })],
      clock: new FakeClock(),
    });
    expect(await legacy.schemaFor('x.io/v1', 'Widget')).toBeUndefined();
  });
});
