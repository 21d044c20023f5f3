import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clusterAccess } from '../../../src/kube/access.js';
import { collectionPath, KubeClient, objectPath } from '../../../src/kube/client.js';
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
