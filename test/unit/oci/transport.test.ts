/**
 * Where requests may go: plain HTTP only to this machine or a registry marked insecure, however
 * the address arrives (a reference, a redirect, a token realm), and credentials never to another
 * origin. The redirect tests run local servers on 127.0.0.1 and 127.0.0.2; a non-loopback address
 * is refused before anything is sent to it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFollowing, isLoopback, makeAgent, schemesFor, urlAllowed } from '../../../src/oci/transport.js';

describe('the plain-HTTP policy', () => {
  it.each([
    ['127.0.0.1:5000', ['https', 'http']],
    ['127.8.9.10', ['https', 'http']],
    ['localhost:5000', ['https', 'http']],
    ['LOCALHOST', ['https', 'http']],
    ['[::1]:5000', ['https', 'http']],
    ['quay.io', ['https']],
    ['registry.example.com:5000', ['https']],
    ['10.0.0.1:5000', ['https']],
    ['192.168.1.10', ['https']],
    ['128.0.0.1', ['https']],
    ['localhost.example.com', ['https']],
    ['127.0.0.1.nip.io', ['https']],
    ['[::2]:5000', ['https']],
  ])('%s may be reached with %j', (host, schemes) => {
    expect(schemesFor(host)).toEqual(schemes);
  });

  it('allows plain HTTP to a registry only when the user marks it insecure, by its exact name', () => {
    expect(schemesFor('registry.lab:5000', ['registry.lab:5000'])).toEqual(['https', 'http']);
    expect(schemesFor('registry.lab:5001', ['registry.lab:5000'])).toEqual(['https']);
    expect(schemesFor('registry.lab', ['registry.lab:5000'])).toEqual(['https']);
    expect(urlAllowed(new URL('http://registry.lab:5000/v2/'), ['registry.lab:5000'])).toBe(true);
    expect(urlAllowed(new URL('http://registry.lab/v2/'))).toBe(false);
    expect(urlAllowed(new URL('https://registry.lab/v2/'))).toBe(true);
    expect(urlAllowed(new URL('ftp://127.0.0.1/'))).toBe(false);
    expect(urlAllowed(new URL('file:///etc/passwd'))).toBe(false);
    expect(isLoopback('127.0.0.1:1')).toBe(true);
  });
});

describe('redirects', () => {
  const seen: { host: string; authorization?: string }[] = [];
  let first: Server;
  let second: Server;
  let firstPort = 0;
  let secondPort = 0;
  const agent = makeAgent({}).agent;
  const listen = (server: Server, host: string) =>
    new Promise<number>((resolve) =>
      server.listen(0, host, () => resolve((server.address() as AddressInfo).port)),
    );
  const record = (headers: IncomingHttpHeaders) =>
    seen.push({
      host: headers.host ?? '',
      ...(headers.authorization && { authorization: headers.authorization }),
    });

  beforeAll(async () => {
    first = createServer((req, res) => {
      record(req.headers);
      const to: Record<string, string> = {
        '/downgrade': 'http://registry.example.com/v2/blob',
        '/other-origin': `http://127.0.0.2:${secondPort}/blob`,
        '/same-origin': '/v2/final',
        '/loop': '/loop',
        '/file': 'file:///etc/passwd',
      };
      if (to[req.url!]) res.writeHead(307, { location: to[req.url!] }).end();
      else res.writeHead(200).end('first');
    });
    second = createServer((req, res) => {
      record(req.headers);
      res.writeHead(200).end('second');
    });
    firstPort = await listen(first, '127.0.0.1');
    secondPort = await listen(second, '127.0.0.2');
  });
  afterAll(async () => {
    first.close();
    second.close();
    await agent.close();
  });

  const get = (path: string) =>
    fetchFollowing(
      agent,
      new URL(`http://127.0.0.1:${firstPort}${path}`),
      { headers: { authorization: 'Bearer secret' } },
      [],
      () => 'test',
    );

  it('refuses a redirect to plain HTTP on another machine, sending nothing there', async () => {
    seen.length = 0;
    await expect(get('/downgrade')).rejects.toThrow(
      "test: refused to send a request to http://registry.example.com: plain HTTP is used only for this machine's addresses and registries marked insecure",
    );
    expect(seen.map((s) => s.host)).toEqual([`127.0.0.1:${firstPort}`]);
  });

  it('refuses a redirect to a file: URL', async () => {
    await expect(get('/file')).rejects.toThrow(/refused to send a request to file:/);
  });

  it('keeps credentials for the same origin and drops them for another', async () => {
    seen.length = 0;
    const same = await get('/same-origin');
    expect(await same.response.text()).toBe('first');
    const other = await get('/other-origin');
    expect(await other.response.text()).toBe('second');
    expect(seen).toEqual([
      { host: `127.0.0.1:${firstPort}`, authorization: 'Bearer secret' },
      { host: `127.0.0.1:${firstPort}`, authorization: 'Bearer secret' },
      { host: `127.0.0.1:${firstPort}`, authorization: 'Bearer secret' },
      { host: `127.0.0.2:${secondPort}` },
    ]);
  });

  it('stops after five redirects', async () => {
    await expect(get('/loop')).rejects.toThrow('test: more than 5 redirects');
  });
});
