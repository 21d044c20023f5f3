/**
 * Where the PackageManifest API listens, and the address the API server is told to dial: two
 * different things. The server binds exactly the host it is given. The aggregator reaches it
 * through the EndpointSlice Bosun writes (register.ts), which may not name a loopback address: so
 * a specific IPv4 address is both bound and advertised; `0.0.0.0` binds every interface and
 * advertises the host's first non-loopback IPv4 address; and a loopback host is refused, since the
 * API server could never reach a server bound there (binding elsewhere instead would serve on an
 * interface nobody asked for).
 */
import { isIP, isIPv4 } from 'node:net';
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import { parseAddress } from '../http.js';
import { advertisedAddress } from './register.js';

export interface ListenPlan {
  /** What the server binds. */
  bind: { host: string; port: number };
  /** The IPv4 address the EndpointSlice names, which the API server dials. */
  advertise: string;
}

const isLoopback = (host: string) =>
  host === 'localhost' || host.endsWith('.localhost') || host.startsWith('127.') || host === '::1';

export function listenPlan(
  address: string,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): { ok: true; value: ListenPlan } | { ok: false; error: string } {
  let listen: { host: string; port: number };
  try {
    listen = parseAddress(address, 'the PackageManifest API address');
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
  const { host, port } = listen;
  if (isLoopback(host)) {
    const example = advertisedAddress({ host: '0.0.0.0', port }, interfaces);
    return {
      ok: false,
      error:
        `the PackageManifest API address "${address}" is a loopback address, which the API server cannot ` +
        `reach: it dials the address of an EndpointSlice, and an EndpointSlice may not name a loopback ` +
        `address. Give an IPv4 address of this host the API server reaches` +
        ('ip' in example ? ` (e.g. ${example.ip}:${port})` : '') +
        `, or 0.0.0.0:${port} for every interface`,
    };
  }
  if (host !== '0.0.0.0' && !isIPv4(host)) {
    return {
      ok: false,
      error: `the PackageManifest API address "${address}": ${isIP(host) ? `"${host}" is not an IPv4 address (EndpointSlices of the manager are IPv4)` : `"${host}" is not an IP address`}`,
    };
  }
  const advertised = advertisedAddress(listen, interfaces);
  if ('error' in advertised) return { ok: false, error: advertised.error };
  return { ok: true, value: { bind: listen, advertise: advertised.ip } };
}

/**
 * What `bosun start` serves the API at beside the local control plane: the host's first
 * non-loopback IPv4 address (which the API server, on the same host, reaches) and any free port,
 * rather than every interface.
 */
export function defaultPackageApiAddress(
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): string {
  const found = advertisedAddress({ host: '0.0.0.0', port: 0 }, interfaces);
  return 'ip' in found ? `${found.ip}:0` : '0.0.0.0:0';
}
