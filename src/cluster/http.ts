import { request } from 'node:https';

export interface ClientTLS {
  ca: string;
  cert: string;
  key: string;
}

export interface Response {
  status: number;
  body: string;
}

/**
 * One HTTPS request to the API server with the admin client certificate. The cluster module talks
 * to the API server only to wait for health and register the node, so it needs no client library.
 */
export function apiRequest(
  port: number,
  tls: ClientTLS,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 5000,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        timeout: timeoutMs,
        headers: payload
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : {},
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          data += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
