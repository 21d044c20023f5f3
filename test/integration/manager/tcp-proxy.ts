/**
 * A TCP proxy in front of the API server that the test can cut, so that one manager loses the
 * API server while another, behind a proxy of its own, still reaches it. TLS passes through
 * untouched: the manager still verifies the API server's certificate (which names 127.0.0.1).
 *
 * A cut is a partition, not a refusal: connections stay open and new ones are accepted, but no
 * byte goes through either way, so the manager's requests hang as they do when packets are lost,
 * and nothing it sends during the cut reaches the API server later. On restore the connections
 * of the cut are closed (their TLS streams lost bytes and cannot go on) and new ones forward.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** `https://127.0.0.1:<port>`, to put in a kubeconfig in place of the API server's URL. */
  url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  upstream?: Socket;
  /** Set by a cut: its bytes are dropped from then on. */
  dropped: boolean;
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const links = new Set<Link>();
  let cut = false;
  const server = createServer((client) => {
    const link: Link = { client, dropped: cut };
    links.add(link);
    const end = () => {
      links.delete(link);
      client.destroy();
      link.upstream?.destroy();
    };
    client.on('error', end).on('close', end);
    // Read and drop what arrives during a cut, as a partition loses the packets.
    client.on('data', (chunk) => {
      if (!link.dropped) link.upstream?.write(chunk);
    });
    if (link.dropped) return;
    client.pause();
    const upstream = connect(target, () => client.resume());
    link.upstream = upstream;
    upstream.on('data', (chunk) => {
      if (!link.dropped) client.write(chunk);
    });
    upstream.on('error', end).on('close', () => {
      // The API server closed it: say so to the client, unless a cut hides it.
      if (!link.dropped) end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    cut() {
      cut = true;
      for (const link of links) {
        link.dropped = true;
        // The API server sees the connection go; the manager sees nothing at all.
        link.upstream?.destroy();
      }
    },
    restore() {
      cut = false;
      for (const link of [...links]) if (link.dropped) link.client.destroy();
    },
    async close() {
      for (const link of links) {
        link.client.destroy();
        link.upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
