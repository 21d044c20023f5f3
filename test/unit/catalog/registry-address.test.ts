/**
 * A registry CatalogSource's spec.address is host:port and nothing else: gRPC reads schemes,
 * socket paths, DNS servers and host lists out of a target string, and none of them may come from
 * a CatalogSource. Every accepted address becomes a `dns:` target of our own making.
 */
import { describe, expect, it } from 'vitest';
import { parseRegistryAddress } from '../../../src/catalog/grpc/address.js';

describe('registry addresses', () => {
  it.each([
    ['127.0.0.1:50051', '127.0.0.1', 50051, 'dns:127.0.0.1:50051'],
    ['localhost:1', 'localhost', 1, 'dns:localhost:1'],
    ['my-catalog.olm.svc:50051', 'my-catalog.olm.svc', 50051, 'dns:my-catalog.olm.svc:50051'],
    [
      'my-catalog.olm.svc.cluster.local.:65535',
      'my-catalog.olm.svc.cluster.local.',
      65535,
      'dns:my-catalog.olm.svc.cluster.local.:65535',
    ],
    ['[::1]:50051', '::1', 50051, 'dns:[::1]:50051'],
    ['[fd00::12]:8080', 'fd00::12', 8080, 'dns:[fd00::12]:8080'],
    ['Catalog-1.Example:443', 'Catalog-1.Example', 443, 'dns:Catalog-1.Example:443'],
  ])('%s is host %s, port %d', (address, host, port, target) => {
    expect(parseRegistryAddress(address)).toEqual({ ok: true, value: { host, port, target } });
  });

  // Each shape gRPC would read as something other than one TCP host and port.
  it.each([
    ['a Unix socket', 'unix:/var/run/docker.sock'],
    ['a Unix socket, URL form', 'unix:///var/run/secrets/kubernetes.io/serviceaccount/token'],
    ['a relative Unix socket', 'unix:50051'],
    ['a scheme in capitals', 'UNIX:50051'],
    ['a passthrough target', 'passthrough:50051'],
    ['an abstract Unix socket', 'unix-abstract:containerd'],
    ['another DNS server', 'dns://8.8.8.8/catalog.example:50051'],
    ['an explicit dns scheme', 'dns:///catalog.example:50051'],
    ['a host list', 'ipv4:10.0.0.1:50051,10.0.0.2:50051'],
    ['an ipv6 scheme', 'ipv6:[::1]:50051'],
    ['an xDS target', 'xds:///catalog'],
    ['an http URL', 'http://catalog.example:50051'],
    ['an https URL with a path', 'https://catalog.example:50051/api'],
    ['a path', 'catalog.example:50051/extra'],
    ['user info', 'admin@catalog.example:50051'],
    ['a query', 'catalog.example:50051?x=1'],
    ['a comma list', '10.0.0.1:1,10.0.0.2:2'],
    ['a leading space', ' catalog.example:50051'],
    ['a newline', 'catalog.example:50051\n'],
    ['a NUL', 'catalog.example\0:50051'],
    ['an escape sequence', '\u001b[31mcatalog:50051'],
    ['a percent escape', 'catalog%2eexample:50051'],
    ['a non-ASCII name', 'cätalog.example:50051'],
  ])('%s is refused: %j', (_what, address) => {
    const parsed = parseRegistryAddress(address);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.message).toMatch(/^spec\.address: ".*" is not a registry address: .*; give host:port/);
  });

  it.each([
    ['', 'it is empty'],
    ['catalog.example', 'it has no port'],
    ['catalog.example:', 'the port "" is not a number'],
    [':50051', 'it has no host'],
    ['catalog.example:0', 'the port 0 is not between 1 and 65535'],
    ['catalog.example:65536', 'the port 65536 is not between 1 and 65535'],
    ['catalog.example:99999', 'the port 99999 is not between 1 and 65535'],
    ['catalog.example:123456', 'the port "123456" is not a number'],
    ['catalog.example:-1', 'the port "-1" is not a number'],
    ['catalog.example:0x10', 'the port "0x10" is not a number'],
    ['catalog.example:http', 'the port "http" is not a number'],
    ['1.2.3:50051', '1.2.3 is not an IPv4 address'],
    ['256.1.1.1:50051', '256.1.1.1 is not an IPv4 address'],
    ['::1:50051', 'an IPv6 address goes in brackets, as [::1]:50051'],
    ['[zz::1]:50051', '[zz::1] is not an IPv6 address'],
    ['[::1]50051', 'it has more than one ":"'],
    ['-catalog.example:50051', '-catalog.example is not a DNS name or an IP address'],
    ['catalog..example:50051', 'catalog..example is not a DNS name or an IP address'],
    [`${'a'.repeat(64)}.example:50051`, `${'a'.repeat(64)}.example is not a DNS name or an IP address`],
    [
      `${'abcdefghi.'.repeat(26)}example:1`,
      `${'abcdefghi.'.repeat(26)}example is not a DNS name or an IP address`,
    ],
    [`${'a'.repeat(400)}:1`, 'it is longer than a host name and port can be'],
  ])('%j is refused: %s', (address, why) => {
    const parsed = parseRegistryAddress(address);
    expect(parsed).toEqual({
      ok: false,
      message: `spec.address: ${JSON.stringify(address)} is not a registry address: ${why}; give host:port (e.g. my-catalog.olm.svc:50051 or 10.96.0.12:50051)`,
    });
  });

  it('anything but a string is refused', () => {
    for (const v of [undefined, null, 50051, { host: 'a' }]) expect(parseRegistryAddress(v).ok).toBe(false);
  });
});
