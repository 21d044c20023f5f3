/**
 * A worker thread that imports package directories for import.ts: parsing YAML is most of an
 * import's time and JavaScript parses on one core, so a large import spreads packages over
 * workers. Messages in: `{ id, dir, opts }`; out: `{ id, cfg, result, origins }`. Origins (which
 * file each document came from) do not survive the copy between threads, so they travel beside
 * the documents and are set again on the other side.
 */
import { parentPort } from 'node:worker_threads';
import type { DeclarativeConfig } from '../apis/fbc.js';
import { type ImportOptions, importPackageDir, type PackageImportResult } from './import.js';
import { fileOf } from './origin.js';

export interface WorkRequest {
  id: number;
  dir: string;
  opts: Pick<ImportOptions, 'validateBundles'>;
}

export interface WorkResponse {
  id: number;
  cfg: DeclarativeConfig;
  result: PackageImportResult;
  origins: {
    packages: (string | undefined)[];
    channels: (string | undefined)[];
    bundles: (string | undefined)[];
  };
  error?: string;
}

const port = parentPort;
if (port) {
  port.on('message', async (req: WorkRequest) => {
    try {
      const { cfg, result } = await importPackageDir(req.dir, req.opts);
      const origins = {
        packages: cfg.packages.map(fileOf),
        channels: cfg.channels.map(fileOf),
        bundles: cfg.bundles.map(fileOf),
      };
      port.postMessage({ id: req.id, cfg, result, origins } satisfies WorkResponse);
    } catch (err) {
      port.postMessage({
        id: req.id,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
    }
  });
}
