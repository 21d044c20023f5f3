import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clusterAccess } from '../../../src/kube/access.js';
import { collectionPath, isWrite, KubeClient, objectPath } from '../../../src/kube/client.js';
import { parseKubeconfig } from '../../../src/kube/kubeconfig.js';

describe('API paths', () => {
  const subscriptions = {
    group: 'operators.coreos.com',
    version: 'v1alpha1',
    plural: 'subscriptions',
    namespaced: true,
  };
  const namespaces = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
  it.each([
    [
      collectionPath(subscriptions, 'ops'),
      '/apis/operators.coreos.com/v1alpha1/namespaces/ops/subscriptions',
    ],
    [collectionPath(subscriptions), '/apis/operators.coreos.com/v1alpha1/subscriptions'],
    [
      objectPath(subscriptions, 'etcd', 'ops'),
      '/apis/operators.coreos.com/v1alpha1/namespaces/ops/subscriptions/etcd',
    ],
    [objectPath(namespaces, 'ops', 'ignored'), '/api/v1/namespaces/ops'],
  ])('%s', (path, expected) => {
    expect(path).toBe(expected);
  });
});

describe('KubeClient', () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  });

  it('gives up on a server that accepts the connection and never answers', async () => {
    // Not an API server: a socket that stays silent, as a dead peer behind a live load balancer does.
    server = createServer((s) => sockets.push(s));
    const port = await new Promise<number>((resolve) =>
      server!.listen(0, '127.0.0.1', () => resolve((server!.address() as { port: number }).port)),
    );
    const config = parseKubeconfig(
      [
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:' +
          port +
          '", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
      'test',
    );
    const client = new KubeClient(clusterAccess(config));
    await expect(client.request({ path: '/version', timeoutMs: 200 })).rejects.toThrow(/abort|timeout/i);
    client.close();
  });
});

describe('KubeClient.impersonating', () => {
  let server: HttpServer | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  });

  /** A plain HTTP server that answers each request with the headers it got and its socket's port. */
  async function echo(): Promise<KubeClient> {
    server = createHttpServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ headers: req.headersDistinct, port: req.socket.remotePort }));
    });
    const port = await new Promise<number>((resolve) =>
      server!.listen(0, '127.0.0.1', () => resolve((server!.address() as { port: number }).port)),
    );
    const config = parseKubeconfig(
      [
        `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]`,
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
      'test',
    );
    return new KubeClient(clusterAccess(config));
  }
  type Echo = { headers: Record<string, string[]>; port: number };

  it('sends the user as Impersonate-User with the same credentials, over the same connections', async () => {
    const client = await echo();
    const scoped = client.impersonating({ user: 'system:serviceaccount:team:installer' });
    const plain = await client.request<Echo>({ path: '/a' });
    const as = await scoped.request<Echo>({ path: '/b' });
    expect(plain.headers['impersonate-user']).toBeUndefined();
    expect(as.headers['impersonate-user']).toEqual(['system:serviceaccount:team:installer']);
    // No groups: the API server gives a ServiceAccount its own, and naming any needs more rights.
    expect(as.headers['impersonate-group']).toBeUndefined();
    expect(as.headers.authorization).toEqual(['Bearer t']);
    expect(as.port).toBe(plain.port);
    expect(scoped.impersonation).toEqual({ user: 'system:serviceaccount:team:installer' });
    // Closing the derived client leaves its parent's connections alone.
    scoped.close();
    expect((await client.request<Echo>({ path: '/c' })).port).toBe(plain.port);
    client.close();
  });

  it.each(['', 'a\r\nImpersonate-Group: system:masters', 'a\nb', 'a\0b'])(
    'refuses to impersonate %j',
    async (user) => {
      const client = await echo();
      expect(() => client.impersonating({ user })).toThrow(/cannot impersonate/);
      client.close();
    },
  );

  it('a guarded client sends no write its guard refuses, nor does a client derived from it', async () => {
    const client = await echo();
    let received = 0;
    server!.on('request', () => received++);
    let leading = true;
    const gated = client.guarded((opts) => {
      if (isWrite(opts) && !leading) throw new Error(`refused ${opts.method}`);
    });
    const scoped = gated.impersonating({ user: 'system:serviceaccount:team:installer' });
    await gated.request({ method: 'PATCH', path: '/a', body: {} });
    expect(received).toBe(1);
    leading = false;
    // Every verb that changes the cluster, from the client and from one it derived.
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      await expect(gated.request({ method, path: '/b', body: {} })).rejects.toThrow(`refused ${method}`);
      await expect(scoped.request({ method, path: '/b', body: {} })).rejects.toThrow(`refused ${method}`);
    }
    expect(received).toBe(1);
    // Reads still pass, as the guard says; the parent client is not guarded.
    await gated.request({ path: '/c' });
    await client.request({ method: 'DELETE', path: '/d' });
    expect(received).toBe(3);
    client.close();
  });

  it('does not impersonate twice', async () => {
    const client = await echo();
    const scoped = client.impersonating({ user: 'system:serviceaccount:a:b' });
    expect(() => scoped.impersonating({ user: 'system:serviceaccount:c:d' })).toThrow(
      /cannot impersonate again/,
    );
    client.close();
  });
});
