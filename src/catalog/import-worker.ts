/**
 * A worker thread that imports package directories for import.ts: parsing YAML is most of an
 * import's time and JavaScript parses on one core, so a large import spreads packages over
 * workers. Messages in: `{ id, dir, opts }`; out: `{ id, cfg, result, origins }` (or `{ id, error }`). Origins (which
 * file each document came from) do not survive the copy between threads, so they travel beside
 * the documents and are set again on the other side.
 */
import { parentPort } from 'node:worker_threads';
import type { DeclarativeConfig } from '../apis/fbc.js';
import { type ImportOptions, importPackageDir, type PackageImportResult } from './import.js';
import { fileOf } from './origin.js';
import { serveRequests } from '../util/workers.js';

export interface WorkRequest {
  dir: string;
  opts: Pick<ImportOptions, 'validateBundles' | 'convertRemovedApis'>;
}

export interface WorkResponse {
  cfg: DeclarativeConfig;
  result: PackageImportResult;
  origins: {
    packages: (string | undefined)[];
    channels: (string | undefined)[];
    bundles: (string | undefined)[];
  };
}

if (parentPort) {
  serveRequests<WorkRequest, WorkResponse>(parentPort, async (req) => {
    const { cfg, result } = await importPackageDir(req.dir, req.opts);
    const origins = {
      packages: cfg.packages.map(fileOf),
      channels: cfg.channels.map(fileOf),
      bundles: cfg.bundles.map(fileOf),
    };
    return { answer: { cfg, result, origins } };
  });
}
