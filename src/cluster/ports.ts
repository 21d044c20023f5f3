import { createServer } from 'node:net';
import { UserError } from '../util/errors.js';

/** Asks the kernel for a free port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function assertPortFree(port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new UserError(
              `port 127.0.0.1:${port} for ${what} is already in use; choose another with --port, or stop what uses it`,
            )
          : err,
      ),
    );
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
  });
}
