/**
 * How much of a bundle Bosun reads. Sizes are checked before anything is read: a file's size from
 * the directory entry or the tar header, an archive's from its file, so a huge input is refused
 * at once instead of exhausting memory. A Kubernetes object is at most a few MiB (the API server
 * takes requests up to 3 MiB), so the defaults leave ample room and still stop a bomb early.
 * Both are overridable, in MiB, by environment variables named in every refusal.
 */
import { UsageError } from '../util/errors.js';

export interface ReadLimits {
  /** Bytes of one file of the bundle. */
  maxFileBytes: number;
  /** Bytes of all the bundle's files together (for an archive: inflated). */
  maxTotalBytes: number;
  /** Entries of an archive. */
  maxEntries: number;
}

export const LimitEnv = {
  File: 'BOSUN_BUNDLE_MAX_FILE_MIB',
  Total: 'BOSUN_BUNDLE_MAX_MIB',
} as const;

const MiB = 1024 * 1024;
export const DefaultReadLimits: ReadLimits = {
  maxFileBytes: 16 * MiB,
  maxTotalBytes: 64 * MiB,
  maxEntries: 10_000,
};

/** The limits, with the environment's overrides; a value that is not a positive number is refused. */
export function readLimits(env: NodeJS.ProcessEnv = process.env): ReadLimits {
  const mib = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0)
      throw new UsageError(`${name}: "${raw}" is not a positive number of MiB`);
    return Math.floor(n * MiB);
  };
  return {
    maxFileBytes: mib(LimitEnv.File, DefaultReadLimits.maxFileBytes),
    maxTotalBytes: mib(LimitEnv.Total, DefaultReadLimits.maxTotalBytes),
    maxEntries: DefaultReadLimits.maxEntries,
  };
}

const inMiB = (bytes: number) => `${(bytes / MiB).toFixed(bytes < MiB ? 2 : 1)} MiB`;

/** The refusal of a file past the per-file limit. */
export function fileTooLarge(size: number, limits: ReadLimits): string {
  return `is ${inMiB(size)}, past the limit of ${inMiB(limits.maxFileBytes)} for one file of a bundle (${LimitEnv.File} raises it); nothing was read`;
}

/** The refusal of a bundle past the total limit. */
export function bundleTooLarge(what: string, limits: ReadLimits): string {
  return `${what} past the limit of ${inMiB(limits.maxTotalBytes)} for a whole bundle (${LimitEnv.Total} raises it)`;
}
