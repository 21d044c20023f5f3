/**
 * How large a catalog Bosun reads: each file (a catalog directory's file, a ConfigMap's key, an
 * HTTP response body) and a whole catalog. Checked before a file is read (its size on disk) or
 * while it arrives (an HTTP body is counted as it streams to disk and cut off at the limit), so a
 * huge input is refused at once instead of exhausting memory; what one document may hold is the
 * codec's limit (bundle/document-limits.ts).
 *
 * The yardstick is the 2021 OperatorHub corpus imported as a catalog: 118 MB over 191 files,
 * the largest 10.9 MB (victoriametrics-operator), and 128 MB as the one JSON file `catalog
 * render -o json` makes of it (122 MB as YAML), which is what an http CatalogSource fetches.
 * The per-file limit overrides with BOSUN_CATALOG_MAX_FILE_MIB, named in every refusal.
 */
import { DocumentLimits } from '../bundle/document-limits.js';

const MiB = 2 ** 20;

export const CatalogLimitEnv = { File: 'BOSUN_CATALOG_MAX_FILE_MIB' } as const;

export const CatalogLimits = {
  /** Bytes of one catalog file or body: twice the corpus in one file. */
  maxFileBytes: 256 * MiB,
  /** Bytes of all the files of one catalog: four times the corpus. */
  maxCatalogBytes: 512 * MiB,
  /** Characters of one lifted value (an inline manifest's or icon's base64): one document's. */
  maxPayloadChars: DocumentLimits.maxDocumentChars,
} as const;

/**
 * The per-file limit, with the environment's override. A file is parsed whole, and text longer
 * than V8's longest string (about 512 MiB) cannot be, so an override stays below that.
 */
export function maxCatalogFileBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[CatalogLimitEnv.File];
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  if (!Number.isFinite(n) || n <= 0) return CatalogLimits.maxFileBytes;
  return Math.floor(Math.min(n, 500) * MiB);
}

const inMiB = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** What raises the per-file limit, as every refusal of a file past it says. */
export const catalogFileLimitRaise = `${CatalogLimitEnv.File} raises it, up to 500`;

/**
 * The refusal of a file past the per-file limit, or undefined. `sofar`: the size is what has
 * arrived so far of a body that was cut off there.
 */
export function catalogFileTooLarge(
  size: number,
  opts: { limit?: number; sofar?: boolean } = {},
): string | undefined {
  const limit = opts.limit ?? maxCatalogFileBytes();
  if (!(size > limit)) return undefined; // NaN (an unreadable Content-Length) too
  const is = opts.sofar ? `is more than ${inMiB(limit)} (cut off there)` : `is ${inMiB(size)}`;
  return `${is}, past the limit of ${inMiB(limit)} for one catalog file (${catalogFileLimitRaise}): split its documents over several files`;
}

/** The refusal of a catalog whose files add up past the total limit. */
export function catalogTooLarge(total: number): string {
  return `the catalog's files add up to ${inMiB(total)}, past the limit of ${inMiB(CatalogLimits.maxCatalogBytes)} for one catalog (four times the 2021 OperatorHub catalog); nothing more was read`;
}

/** The refusal of one lifted value (a manifest's base64) past the limit. */
export function payloadTooLarge(chars: number, offset: number): string {
  return `the "data" value at byte ${offset} is ${inMiB(chars)}, past the limit of ${inMiB(CatalogLimits.maxPayloadChars)} for one document (the API server takes objects of at most 3 MiB)`;
}
