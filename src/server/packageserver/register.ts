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
import { isIPv4 } from 'node:net';
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
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: APIServiceName, labels },
      spec: {
        group: PackagesGroup,
        version: PackagesVersion,
        service: { namespace: r.namespace, name: ServiceName, port: r.port },
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
