import { describe, expect, it } from 'vitest';
import type { PackageManifest } from '../../../src/apis/packages.js';
import { openAPIDocument, openAPIv3GroupVersion } from '../../../src/server/packageserver/openapi.js';
import { advertisedAddress } from '../../../src/server/packageserver/register.js';
import { requestInfo } from '../../../src/server/packageserver/request.js';
import { representation } from '../../../src/server/packageserver/server.js';
import { humanDuration, table } from '../../../src/server/packageserver/shapes.js';

const base = '/apis/packages.operators.coreos.com/v1';
const q = (s = '') => new URLSearchParams(s);

describe('requestInfo', () => {
  it.each([
    [`${base}/namespaces/ns/packagemanifests`, '', { resource: true, verb: 'list', namespace: 'ns' }],
    [`${base}/packagemanifests`, '', { resource: true, verb: 'list', namespace: '' }],
    [
      `${base}/namespaces/ns/packagemanifests`,
      'watch=true',
      { resource: true, verb: 'watch', namespace: 'ns' },
    ],
    [`${base}/watch/namespaces/ns/packagemanifests`, '', { resource: true, verb: 'watch', namespace: 'ns' }],
    [
      `${base}/namespaces/ns/packagemanifests/etcd`,
      '',
      { resource: true, verb: 'get', namespace: 'ns', name: 'etcd' },
    ],
    [
      `${base}/namespaces/ns/packagemanifests/etcd/icon`,
      '',
      { resource: true, verb: 'get', namespace: 'ns', name: 'etcd', subresource: 'icon' },
    ],
    [base, '', { resource: false, path: base }],
    ['/openapi/v2', '', { resource: false, path: '/openapi/v2' }],
  ])('%s?%s', (path, query, expected) => {
    expect(requestInfo(path, q(query))).toEqual(expected);
  });

  it('names what it cannot find', () => {
    expect(requestInfo(`${base}/namespaces/ns/widgets`, q())).toMatchObject({ resource: 'unknown' });
    expect(requestInfo(`${base}/namespaces/ns/packagemanifests/etcd/status`, q())).toEqual({
      resource: 'unknown',
      message: 'packagemanifests has no subresource "status"',
    });
  });
});

describe('representation', () => {
  it.each([
    [undefined, { as: 'object' }],
    ['application/json', { as: 'object' }],
    ['*/*', { as: 'object' }],
    [
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      { as: 'table', apiVersion: 'meta.k8s.io/v1' },
    ],
    ['application/json;as=Table;v=v1beta1;g=meta.k8s.io', { as: 'table', apiVersion: 'meta.k8s.io/v1beta1' }],
    ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', { as: 'metadata' }],
    ['application/vnd.kubernetes.protobuf', { as: 'unacceptable' }],
    ['application/vnd.kubernetes.protobuf, application/json', { as: 'object' }],
  ])('%s', (accept, expected) => {
    expect(representation(accept)).toEqual(expected);
  });
});

describe('Table', () => {
  const pm = {
    metadata: { name: 'etcd', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' },
    status: { catalogSourceDisplayName: 'Community Operators' },
  } as PackageManifest;

  it("has OLM's columns, and rows with partial metadata unless asked otherwise", () => {
    const t = table(
      [pm],
      { apiVersion: 'meta.k8s.io/v1', includeObject: 'Metadata', now: Date.parse('2026-01-01T00:05:30Z') },
      '7',
    );
    expect((t.columnDefinitions as { name: string }[]).map((c) => c.name)).toEqual([
      'Name',
      'Catalog',
      'Age',
    ]);
    expect(t.metadata).toEqual({ resourceVersion: '7' });
    expect(t.rows).toEqual([
      {
        cells: ['etcd', 'Community Operators', '5m30s'],
        object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pm.metadata },
      },
    ]);
    const none = table([pm], {
      apiVersion: 'meta.k8s.io/v1',
      includeObject: 'None',
      now: 0,
      noHeaders: true,
    });
    expect(none.columnDefinitions).toBeUndefined();
    expect((none.rows as { object?: unknown }[])[0]!.object).toBeUndefined();
  });

  it.each([
    [-5000, '<invalid>'],
    [0, '0s'],
    [119_000, '119s'],
    [125_000, '2m5s'],
    [600_000, '10m'],
    [3 * 3600_000, '3h'],
    [3 * 3600_000 + 60_000 * 7, '3h7m'],
    [30 * 3600_000, '30h'],
    [3 * 86400_000 + 3600_000, '3d1h'],
    [100 * 86400_000, '100d'],
    [3 * 365 * 86400_000 + 86400_000, '3y1d'],
    [9 * 365 * 86400_000, '9y'],
  ])('an age of %i ms prints as %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('OpenAPI', () => {
  it('marks the read paths with the kind, so kubectl explain finds PackageManifest', () => {
    const doc = openAPIv3GroupVersion() as { paths: Record<string, { get: Record<string, unknown> }> };
    const get = doc.paths[`${base}/namespaces/{namespace}/packagemanifests/{name}`]!.get;
    expect(get['x-kubernetes-group-version-kind']).toEqual({
      group: 'packages.operators.coreos.com',
      version: 'v1',
      kind: 'PackageManifest',
    });
  });

  it('the v3 index points at the group version document, and every $ref resolves', () => {
    const index = JSON.parse(openAPIDocument('/openapi/v3')!) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    const url = index.paths['apis/packages.operators.coreos.com/v1']!.serverRelativeURL;
    const doc = openAPIDocument(url.split('?')[0]!)!;
    const schemas = (JSON.parse(doc) as { components: { schemas: Record<string, unknown> } }).components
      .schemas;
    for (const ref of doc.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      expect(schemas).toHaveProperty([ref[1]!]);
    const v2 = openAPIDocument('/openapi/v2')!;
    const defs = (JSON.parse(v2) as { definitions: Record<string, unknown> }).definitions;
    for (const ref of v2.matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g))
      expect(defs).toHaveProperty([ref[1]!]);
    expect(openAPIDocument('/openapi/v3/apis/other/v1')).toBeUndefined();
  });
});

describe('advertisedAddress', () => {
  const interfaces = {
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
    eth0: [
      { address: 'fe80::1', family: 'IPv6', internal: false },
      { address: '192.0.2.2', family: 'IPv4', internal: false },
    ],
  } as never;

  it('serves at a given non-loopback IPv4 address', () => {
    expect(advertisedAddress({ host: '10.1.2.3', port: 0 }, interfaces)).toEqual({ ip: '10.1.2.3' });
  });

  it('turns a loopback or unspecified host into the first non-loopback IPv4 address: EndpointSlices refuse loopback', () => {
    for (const host of ['', '0.0.0.0', '127.0.0.1', 'localhost'])
      expect(advertisedAddress({ host, port: 0 }, interfaces)).toEqual({ ip: '192.0.2.2' });
  });

  it('says why when there is no address to give', () => {
    expect(advertisedAddress({ host: '0.0.0.0', port: 0 }, { lo: [] } as never)).toMatchObject({
      error: expect.stringContaining('no non-loopback IPv4 address'),
    });
    expect(advertisedAddress({ host: 'example.com', port: 0 }, interfaces)).toMatchObject({
      error: expect.stringContaining('"example.com" is not an IPv4 address'),
    });
  });
});
