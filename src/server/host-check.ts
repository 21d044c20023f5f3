/**
 * Which `Host` a request to the manager's HTTP port may name. A page of another site can make a
 * browser send requests to the manager, and read the answers, if a name of that site resolves to
 * the manager's address (DNS rebinding): the browser then takes the manager for that site. Such a
 * request names the other site in its `Host`. So the port answers only requests that name it by:
 * - an IP address (a page cannot be served from an address the manager holds, so no page of
 *   another site has that origin; kubelet probes and Prometheus use these);
 * - `localhost` (which resolves to loopback only, and browsers never ask DNS for);
 * - a name given with `--web-hosts` (an Ingress's, a Service's DNS name).
 * Any other, and a request without a `Host`, is refused (421 Misdirected Request, 400).
 */
import { isIP } from 'node:net';

/** The host name of a `Host` header: lower case, without port or IPv6 brackets; undefined if malformed. */
export function hostName(header: string): string | undefined {
  const h = header.trim().toLowerCase();
  const v6 = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(h);
  if (v6) return isIP(v6[1]!) === 6 ? v6[1] : undefined;
  const m = /^([a-z0-9.-]+)(?::\d{1,5})?$/.exec(h);
  return m?.[1];
}

export type HostVerdict = { ok: true } | { ok: false; status: 400 | 421; message: string };

export function checkHost(header: string | undefined, names: readonly string[]): HostVerdict {
  if (header === undefined || header === '')
    return { ok: false, status: 400, message: 'the request names no Host' };
  const name = hostName(header);
  if (name === undefined) return { ok: false, status: 400, message: 'the Host header is malformed' };
  if (isIP(name) !== 0 || name === 'localhost' || names.some((n) => n.toLowerCase() === name))
    return { ok: true };
  return {
    ok: false,
    status: 421,
    message: `this server is not "${name}": it answers to its IP addresses, localhost and the names given with --web-hosts\n`,
  };
}
