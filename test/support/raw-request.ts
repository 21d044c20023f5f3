/**
 * One request exactly as a test writes it: the target sent as it is (no URL normalisation), any
 * headers (a forged Host too), and for HTTPS any client certificate.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTPS request exactly as given: the target sent as it is (no URL normalisation), any headers,
 * any client certificate. The server's certificate is checked against `ca` when given.
 */
export function rawHttps(
  base: string,
  target: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    cert?: string;
    key?: string;
    ca?: string;
  } = {},
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: url.hostname,
        port: url.port,
        method: opts.method ?? 'GET',
        path: target,
        headers: opts.headers ?? {},
        ...(opts.cert ? { cert: opts.cert, key: opts.key } : {}),
        ...(opts.ca ? { ca: opts.ca } : { rejectUnauthorized: false }),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** One plain HTTP request exactly as given (the Host header too, when `headers` names one). */
export function rawHttp(
  base: string,
  target: string,
  opts: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: opts.method ?? 'GET',
        path: target,
        headers: opts.headers ?? {},
        agent: false,
        // Node writes the Host header from host:port unless told; a test may want none at all.
        setHost: !Object.keys(opts.headers ?? {}).some((h) => h.toLowerCase() === 'host'),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
