import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { CSVPhase } from '../../../src/apis/operators.js';
import {
  apiServiceName,
  apiServiceObjects,
  apiServiceOwnerConflict,
  checkAPIServices,
} from '../../../src/install/apiservices.js';
import { CSVName, Namespace, servingCSV } from './webhooks-support.js';

const desc = {
  name: 'widgets',
  group: 'widgets.example.com',
  version: 'v1beta1',
  kind: 'Widget',
  deploymentName: 'gadget-api-server',
  containerPort: 8443,
};
const served = { service: 'gadget-api-server-service', caPEM: 'CA PEM\n' };
const csvRef = { name: CSVName, namespace: Namespace };
const labels = {
  'olm.managed': 'true',
  'olm.owner': CSVName,
  'olm.owner.kind': 'ClusterServiceVersion',
  'olm.owner.namespace': Namespace,
};

describe('apiServiceObjects', () => {
  it("registers <version>.<group> with OLM's priorities, the Service and the CA", () => {
    expect(apiServiceName(desc)).toBe('v1beta1.widgets.example.com');
    expect(apiServiceObjects({ csv: csvRef, apiServices: [desc], served })).toEqual([
      {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1beta1.widgets.example.com', labels },
        spec: {
          group: 'widgets.example.com',
          version: 'v1beta1',
          groupPriorityMinimum: 2000,
          versionPriority: 15,
          service: { namespace: Namespace, name: served.service, port: 8443 },
          caBundle: Buffer.from('CA PEM\n').toString('base64'),
        },
      },
    ]);
  });

  it("serves on 443 without a containerPort, and carries the Subscription's config annotations", () => {
    const [a] = apiServiceObjects({
      csv: csvRef,
      apiServices: [{ ...desc, containerPort: undefined }],
      served,
      annotations: { 'example.com/team': 'a' },
    });
    expect(a?.metadata.annotations).toEqual({ 'example.com/team': 'a' });
    expect((a?.spec as { service: { port: number } }).service.port).toBe(443);
    const [b] = apiServiceObjects({ csv: csvRef, apiServices: [desc], served, annotations: {} });
    expect(b?.metadata).not.toHaveProperty('annotations');
  });
});

describe('apiServiceOwnerConflict', () => {
  const existing = (owner?: Partial<Record<'name' | 'namespace' | 'kind', string>>): KubeObject => ({
    metadata: {
      name: 'v1beta1.widgets.example.com',
      labels: owner
        ? {
            ...(owner.name ? { 'olm.owner': owner.name } : {}),
            ...(owner.namespace ? { 'olm.owner.namespace': owner.namespace } : {}),
            ...(owner.kind ? { 'olm.owner.kind': owner.kind } : {}),
          }
        : {},
    },
  });
  const csv = servingCSV({ apiService: true, replaces: 'gadget-operator.v1.1.0' });
  const phases: Record<string, CSVPhase> = {
    'team-b/other.v1': 'Succeeded',
    'team-b/leaving.v1': 'Replacing',
    'team-b/deleting.v1': 'Deleting',
  };
  const phaseOf = (ns: string, name: string) => phases[`${ns}/${name}`];
  const csvOwner = (name: string, namespace = Namespace) => ({
    name,
    namespace,
    kind: 'ClusterServiceVersion',
  });

  it.each([
    { name: 'none exists', existing: undefined, want: undefined },
    { name: 'this CSV owns it', existing: existing(csvOwner(CSVName)), want: undefined },
    {
      name: 'the CSV it replaces owns it',
      existing: existing(csvOwner('gadget-operator.v1.1.0')),
      want: undefined,
    },
    {
      name: 'a CSV being replaced owns it',
      existing: existing(csvOwner('leaving.v1', 'team-b')),
      want: undefined,
    },
    {
      name: 'a CSV being deleted owns it',
      existing: existing(csvOwner('deleting.v1', 'team-b')),
      want: undefined,
    },
    {
      name: 'an installed CSV elsewhere owns it',
      existing: existing(csvOwner('other.v1', 'team-b')),
      want: 'pre-existing APIService v1beta1.widgets.example.com is not adoptable: it belongs to ClusterServiceVersion team-b/other.v1',
    },
    {
      name: 'the replaced CSV of another namespace owns it',
      existing: existing(csvOwner('gadget-operator.v1.1.0', 'team-b')),
      want: 'pre-existing APIService v1beta1.widgets.example.com is not adoptable: it belongs to ClusterServiceVersion team-b/gadget-operator.v1.1.0',
    },
    {
      name: 'nobody owns it',
      existing: existing(),
      want: 'pre-existing APIService v1beta1.widgets.example.com is not adoptable: it is not owned by a ClusterServiceVersion',
    },
    {
      name: 'something else owns it',
      existing: existing({ name: CSVName, namespace: Namespace, kind: 'OperatorGroup' }),
      want: 'pre-existing APIService v1beta1.widgets.example.com is not adoptable: it is not owned by a ClusterServiceVersion',
    },
  ])('$name', ({ existing: e, want }) => {
    expect(apiServiceOwnerConflict(e, csv, phaseOf)).toBe(want);
  });
});

describe('checkAPIServices', () => {
  const desired = apiServiceObjects({ csv: csvRef, apiServices: [desc], served });
  const live = (status?: unknown, edit: (s: Record<string, unknown>) => void = () => {}) => {
    const a = structuredClone(desired[0]) as unknown as KubeObject & { spec: Record<string, unknown> };
    a.spec.insecureSkipTLSVerify = false; // a default the API server fills in
    edit(a.spec);
    return new Map([['v1beta1.widgets.example.com', { ...a, ...(status ? { status } : {}) } as KubeObject]]);
  };
  it.each([
    {
      name: 'available',
      live: live({ conditions: [{ type: 'Available', status: 'True' }] }),
      want: { ok: true, unavailable: [] },
    },
    {
      name: 'there but not Available, with the reason',
      live: live({
        conditions: [
          {
            type: 'Available',
            status: 'False',
            reason: 'MissingEndpoints',
            message: 'endpoints for service/x have no addresses',
          },
        ],
      }),
      want: {
        ok: true,
        unavailable: [
          {
            name: 'v1beta1.widgets.example.com',
            message:
              'APIService v1beta1.widgets.example.com is not Available (MissingEndpoints: endpoints for service/x have no addresses)',
          },
        ],
      },
    },
    {
      name: 'there without a condition yet',
      live: live(),
      want: {
        ok: true,
        unavailable: [
          {
            name: 'v1beta1.widgets.example.com',
            message: 'APIService v1beta1.widgets.example.com is not Available (no Available condition yet)',
          },
        ],
      },
    },
    {
      name: 'missing',
      live: new Map([['v1beta1.widgets.example.com', undefined]]),
      want: {
        ok: false,
        state: 'missing',
        name: 'v1beta1.widgets.example.com',
        message: 'APIService v1beta1.widgets.example.com not found',
      },
    },
    {
      name: 'with another CA',
      live: live(undefined, (s) => {
        s.caBundle = 'b3RoZXI=';
      }),
      want: {
        ok: false,
        state: 'outdated',
        name: 'v1beta1.widgets.example.com',
        message: 'APIService v1beta1.widgets.example.com has another CA bundle',
      },
    },
    {
      name: 'pointing at another port',
      live: live(undefined, (s) => {
        s.service = { namespace: Namespace, name: served.service, port: 443 };
      }),
      want: {
        ok: false,
        state: 'outdated',
        name: 'v1beta1.widgets.example.com',
        message: 'APIService v1beta1.widgets.example.com points at another service',
      },
    },
  ])('$name', ({ live: l, want }) => {
    expect(checkAPIServices(desired, l)).toEqual(want);
  });
});
