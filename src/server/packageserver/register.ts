/**
 * Puts the PackageManifest API into the cluster's API: the `APIService`
 * `v1.packages.operators.coreos.com` (OLM's name and priorities) pointing at a Service in the
 * global catalog namespace, with the CA of the serving certificate as its `caBundle`; and OLM's
 * `aggregate-olm-view`-style ClusterRole, so whoever may `view` a namespace may also read its
 * PackageManifests there (and nobody else).
 *
 * Where the manager runs outside the cluster (beside the local control plane), the Service has
 * no selector and Bosun writes its one EndpointSlice itself, naming the manager's address. The
 * aggregator routes to endpoints (the local control plane has no kube-proxy, so it runs with
 * `--enable-aggregator-routing`), which rules out an ExternalName Service, and an EndpointSlice
 * may not hold a loopback address: the manager is reached at a non-loopback address of its host.
 * The aggregator checks the serving certificate against `<service>.<namespace>.svc`.
 */
import { connect, isIPv4 } from 'node:net';
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import type { KubeObject } from '../../apis/meta.js';
import { PackageManifestResource, PackagesGroup, PackagesVersion } from '../../apis/packages.js';
import type { Applier } from '../../kube/apply.js';
import type { KubeClient } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';

export const APIServiceName = `${PackagesVersion}.${PackagesGroup}`;
export const ServiceName = 'bosun-packageserver';
export const ViewRoleName = 'bosun-packagemanifests-view';

export interface Registration {
  namespace: string;
  /** The IPv4 address the API server reaches the manager at. */
  ip: string;
  port: number;
  caPEM: string;
}

export function registrationObjects(r: Registration): KubeObject[] {
  const labels = { 'app.kubernetes.io/managed-by': 'bosun' };
  const [apiService, viewRole] = sharedRegistrationObjects({
    namespace: r.namespace,
    servicePort: r.port,
    caPEM: r.caPEM,
  });
  return [
    // The Service lives in the global catalog namespace, which may not exist yet.
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: r.namespace } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: ServiceName, namespace: r.namespace, labels },
      spec: {
        type: 'ClusterIP',
        ports: [{ name: 'https', port: r.port, targetPort: r.port, protocol: 'TCP' }],
      },
    } as KubeObject,
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: ServiceName,
        namespace: r.namespace,
        labels: {
          ...labels,
          'kubernetes.io/service-name': ServiceName,
          // Not the EndpointSlice controller's: it leaves this slice alone.
          'endpointslice.kubernetes.io/managed-by': 'bosun',
        },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [r.ip], conditions: { ready: true } }],
      ports: [{ name: 'https', port: r.port, protocol: 'TCP' }],
    } as KubeObject,
    apiService,
    viewRole,
  ];
}

/**
 * Where the replicas serve behind a Service of deploy/'s (selecting every manager Pod), what the
 * manager registers: the APIService naming that Service's port and trusting `caPEM` (one or more
 * CA certificates), and the view ClusterRole. The Service and its endpoints are not the manager's.
 */
export function sharedRegistrationObjects(r: {
  namespace: string;
  servicePort: number;
  caPEM: string;
}): [KubeObject, KubeObject] {
  const labels = { 'app.kubernetes.io/managed-by': 'bosun' };
  return [
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: APIServiceName, labels },
      spec: {
        group: PackagesGroup,
        version: PackagesVersion,
        service: { namespace: r.namespace, name: ServiceName, port: r.servicePort },
        caBundle: Buffer.from(r.caPEM).toString('base64'),
        groupPriorityMinimum: 2000,
        versionPriority: 15,
      },
    } as KubeObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: ViewRoleName,
        labels: {
          ...labels,
          'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
          'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
          'rbac.authorization.k8s.io/aggregate-to-view': 'true',
        },
      },
      rules: [
        {
          apiGroups: [PackagesGroup],
          resources: [PackageManifestResource, `${PackageManifestResource}/icon`],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    } as KubeObject,
  ];
}

export async function register(applier: Applier, r: Registration): Promise<void> {
  for (const o of registrationObjects(r)) await applier.apply(o);
}

/**
 * Takes the APIService (and its Service) away when the manager stops: an APIService nobody
 * answers makes every discovery fail, kubectl warn on every command, and namespaces stick in
 * Terminating.
 */
export async function unregister(client: KubeClient, namespace: string): Promise<void> {
  for (const path of [
    `/apis/apiregistration.k8s.io/v1/apiservices/${APIServiceName}`,
    `/api/v1/namespaces/${namespace}/services/${ServiceName}`,
    `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices/${ServiceName}`,
  ]) {
    try {
      await client.request({ method: 'DELETE', path });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** Whether the aggregator reports the API available (its `Available` condition). */
export async function apiServiceAvailable(
  client: KubeClient,
): Promise<{ available: boolean; message: string }> {
  const svc = await client.request<{
    status?: { conditions?: { type: string; status: string; message?: string }[] };
  }>({
    path: `/apis/apiregistration.k8s.io/v1/apiservices/${APIServiceName}`,
  });
  const c = svc.status?.conditions?.find((x) => x.type === 'Available');
  return { available: c?.status === 'True', message: c?.message ?? 'not checked yet' };
}

/**
 * The address to serve at and to name in the EndpointSlice: the host of `address` when it is a
 * usable IPv4 address, else (unspecified or loopback) the host's first non-loopback IPv4 address.
 */
export function advertisedAddress(
  address: { host: string; port: number },
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): { ip: string } | { error: string } {
  const { host } = address;
  if (isIPv4(host) && host !== '0.0.0.0' && !host.startsWith('127.')) return { ip: host };
  if (host !== '' && host !== '0.0.0.0' && host !== 'localhost' && !host.startsWith('127.'))
    return { error: `the PackageManifest API address "${host}" is not an IPv4 address` };
  for (const list of Object.values(interfaces)) {
    const found = list?.find((i) => i.family === 'IPv4' && !i.internal);
    if (found) return { ip: found.address };
  }
  return {
    error:
      'the host has no non-loopback IPv4 address for the API server to reach the PackageManifest API at (an EndpointSlice may not name a loopback address)',
  };
}

/** Whether something accepts a TCP connection at `ip:port` within `timeoutMs`. */
export function tcpReachable(ip: string, port: number, timeoutMs = 3000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: ip, port, timeout: timeoutMs });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

interface RegisteredAPIService {
  metadata?: { labels?: Record<string, string> };
  spec?: { service?: { name?: string; namespace?: string } };
  status?: { conditions?: { type: string; status: string }[] };
}

interface RegisteredSlice {
  metadata?: { labels?: Record<string, string> };
  endpoints?: { addresses?: string[] }[];
  ports?: { port?: number }[];
}

/**
 * Whether the PackageManifest APIService is one a Bosun manager registered and no manager serves
 * any more: a manager that dies without stopping (killed, out of memory, aborted) leaves it, and
 * an APIService nobody answers makes every namespace deletion in the cluster hang (the namespace
 * controller must list every API before it deletes) and every discovery warn.
 *
 * Ours: labelled `app.kubernetes.io/managed-by: bosun` and pointing at Bosun's Service in
 * `namespace`; OLM's packageserver, or anyone else's, is never touched. Stale: where Bosun wrote
 * the endpoint itself (a manager outside the cluster), nothing accepts a connection at that
 * address; otherwise (a Service whose endpoints are pods) the aggregator reports it unavailable.
 * A live manager elsewhere answers at its address, so its registration is kept.
 */
export async function staleRegistration(
  client: KubeClient,
  namespace: string,
  reachable: (ip: string, port: number) => Promise<boolean> = tcpReachable,
): Promise<{ stale: boolean; why: string } | undefined> {
  const get = async <T>(path: string): Promise<T | undefined> => {
    try {
      return await client.request<T>({ path });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const svc = await get<RegisteredAPIService>(
    `/apis/apiregistration.k8s.io/v1/apiservices/${APIServiceName}`,
  );
  if (!svc) return undefined;
  const ours =
    svc.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'bosun' &&
    svc.spec?.service?.name === ServiceName &&
    svc.spec.service.namespace === namespace;
  if (!ours) return { stale: false, why: 'not registered by Bosun' };
  const slice = await get<RegisteredSlice>(
    `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices/${ServiceName}`,
  );
  const ip = slice?.endpoints?.[0]?.addresses?.[0];
  const port = slice?.ports?.[0]?.port;
  if (slice?.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'] === 'bosun' && ip && port) {
    return (await reachable(ip, port))
      ? { stale: false, why: `a server answers at ${ip}:${port}` }
      : { stale: true, why: `nothing answers at ${ip}:${port}, the address it was registered with` };
  }
  const available = svc.status?.conditions?.find((c) => c.type === 'Available')?.status;
  return available === 'False'
    ? { stale: true, why: 'the aggregator reports it unavailable' }
    : { stale: false, why: 'the aggregator has not reported it unavailable' };
}

/** Removes the registration when staleRegistration finds it stale; returns why, or undefined. */
export async function removeStaleRegistration(
  client: KubeClient,
  namespace: string,
  reachable?: (ip: string, port: number) => Promise<boolean>,
): Promise<string | undefined> {
  const found = await staleRegistration(client, namespace, reachable);
  if (!found?.stale) return undefined;
  await unregister(client, namespace);
  return found.why;
}
