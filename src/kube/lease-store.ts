/**
 * The LeaseStore of leader-election.ts on the API server: one `coordination.k8s.io/v1` Lease,
 * read with GET, created with POST and replaced with PUT naming the resourceVersion read, so a
 * write racing another elector's fails with 409 Conflict (as client-go's resourcelock/leaselock.go).
 */
import type { KubeClient } from './client.js';
import type { LeaseRecord, LeaseStore, StoredLease } from './leader-election.js';
import { isNotFound } from './errors.js';

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** A Lease's spec as a record; absent fields (the API server omits empty ones) read as empty. */
export function leaseRecord(lease: Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
  return {
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
    // A Lease without a duration is free at once, as client-go reads it.
    leaseDurationSeconds: count(spec.leaseDurationSeconds),
    acquireTime: typeof spec.acquireTime === 'string' ? spec.acquireTime : '',
    renewTime: typeof spec.renewTime === 'string' ? spec.renewTime : '',
    leaseTransitions: count(spec.leaseTransitions),
  };
}

function leaseSpec(r: LeaseRecord): Lease['spec'] {
  return {
    // An empty holder is written as absent, as client-go writes a released Lease.
    ...(r.holderIdentity ? { holderIdentity: r.holderIdentity } : {}),
    leaseDurationSeconds: r.leaseDurationSeconds,
    ...(r.acquireTime ? { acquireTime: r.acquireTime } : {}),
    ...(r.renewTime ? { renewTime: r.renewTime } : {}),
    leaseTransitions: r.leaseTransitions,
  };
}

export function apiLeaseStore(client: KubeClient, namespace: string, name: string): LeaseStore {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const path = `${collection}/${encodeURIComponent(name)}`;
  // The Lease as last read, so a replace keeps what others put in its metadata (labels, owners).
  let last: Lease | undefined;
  const stored = (lease: Lease): StoredLease => {
    last = lease;
    return { record: leaseRecord(lease), resourceVersion: lease.metadata?.resourceVersion ?? '' };
  };
  return {
    describe: `${namespace}/${name}`,
    async get(signal) {
      try {
        return stored(await client.request<Lease>({ path, signal }));
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async create(record, signal) {
      const body: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: leaseSpec(record),
      };
      return stored(
        await client.request<Lease>({
          method: 'POST',
          path: collection,
          body,
          query: { fieldManager: 'bosun' },
          signal,
        }),
      );
    },
    async update(record, resourceVersion, signal) {
      const body: Lease = {
        ...last,
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { ...last?.metadata, name, namespace, resourceVersion },
        spec: leaseSpec(record),
      };
      return stored(
        await client.request<Lease>({ method: 'PUT', path, body, query: { fieldManager: 'bosun' }, signal }),
      );
    },
  };
}
