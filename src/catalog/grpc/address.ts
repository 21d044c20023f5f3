/**
 * A CatalogSource's `spec.address` for a registry server: `host:port`, as OLM dials registry pods
 * (a Service's DNS name or an IP address, and the port `opm serve` listens on).
 *
 * gRPC reads more than that from a target string: `unix:/path` and `unix-abstract:name` dial a
 * socket on the manager's own machine, `ipv4:a,b` several hosts, `dns://server/name` asks another
 * DNS server, and any other `word:` prefix is taken for a scheme when gRPC knows one. So an
 * address is parsed here, strictly, and gRPC is handed a target of our own making (`dns:` and the
 * host and port), never the text a CatalogSource holds: the only thing an address chooses is
 * which TCP host and port Bosun connects to.
 *
 * Pure.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface RegistryAddress {
  /** The name or IP address (IPv6 without its brackets). */
  host: string;
  port: number;
  /** The target gRPC dials: always the `dns:` scheme, which also takes IP literals. */
  target: string;
}

export type ParsedAddress = { ok: true; value: RegistryAddress } | { ok: false; message: string };

/** A DNS name of labels of letters, digits and inner hyphens (RFC 1123), 253 characters at most. */
const dnsLabel = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

const example = 'e.g. my-catalog.olm.svc:50051 or 10.96.0.12:50051';

/**
 * gRPC's target schemes (Go's and Node's). `unix:50051` reads as host "unix" here, but a user who
 * writes it means a socket, and OLM's gRPC would dial one: it is refused rather than misread.
 */
const schemes = new Set([
  'dns',
  'unix',
  'unix-abstract',
  'ipv4',
  'ipv6',
  'passthrough',
  'xds',
  'vsock',
  'google-c2p',
]);

export function parseRegistryAddress(address: unknown): ParsedAddress {
  const refuse = (why: string): ParsedAddress => ({
    ok: false,
    message: `spec.address: ${JSON.stringify(address)} is not a registry address: ${why}; give host:port (${example})`,
  });
  if (typeof address !== 'string' || address === '') return refuse('it is empty');
  if (address.length > 300) return refuse('it is longer than a host name and port can be');
  // Anything but a name, an address and a port: schemes, paths, user info, spaces, controls.
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(address))
    return refuse('only letters, digits, ".", "-", ":" and "[ ]" around an IPv6 address belong in it');

  let host: string;
  let portText: string;
  const bracketed = /^\[([^\]]*)\]:([^:]*)$/.exec(address);
  if (bracketed) {
    host = bracketed[1]!;
    portText = bracketed[2]!;
    if (!isIPv6(host)) return refuse(`[${host}] is not an IPv6 address`);
  } else {
    const colon = address.lastIndexOf(':');
    if (colon < 0) return refuse('it has no port');
    host = address.slice(0, colon);
    portText = address.slice(colon + 1);
    if (host.includes(':'))
      return refuse(
        isIPv6(host) ? 'an IPv6 address goes in brackets, as [::1]:50051' : 'it has more than one ":"',
      );
    if (host === '') return refuse('it has no host');
    if (schemes.has(host.toLowerCase()))
      return refuse(
        `${host}: names a gRPC scheme, not a host; a registry is reached at a TCP host and port only`,
      );
    const looksNumeric = /^[0-9.]+$/.test(host);
    if (looksNumeric ? !isIPv4(host) : !isDnsName(host))
      return refuse(
        looksNumeric ? `${host} is not an IPv4 address` : `${host} is not a DNS name or an IP address`,
      );
  }
  if (!/^[0-9]{1,5}$/.test(portText)) return refuse(`the port ${JSON.stringify(portText)} is not a number`);
  const port = Number(portText);
  if (port < 1 || port > 65535) return refuse(`the port ${port} is not between 1 and 65535`);
  const hostPart = isIPv6(host) ? `[${host}]` : host;
  return { ok: true, value: { host, port, target: `dns:${hostPart}:${port}` } };
}

function isDnsName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host; // a fully qualified name's root dot
  return name.length > 0 && name.length <= 253 && name.split('.').every((l) => dnsLabel.test(l));
}
