import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Serves `text` at every path on loopback; returns the URL a CatalogSource of type http reads. */
export async function serveText(text: string): Promise<{ url: string; close(): void }> {
  const server = createServer((_req, res) => res.writeHead(200).end(text));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/all`,
    close: () => server.close(),
  };
}
