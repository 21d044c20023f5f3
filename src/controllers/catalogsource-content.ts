/**
 * Pure helpers of the CatalogSource controller: Go durations for `registryPoll.interval`,
 * fetched FBC text → a validated DeclarativeConfig with its digest, and the status a
 * CatalogSource should show for one sync outcome. No clients, no clock (times are passed in).
 */
import { createHash, type Hash } from 'node:crypto';
import type { DeclarativeConfig } from '../apis/fbc.js';
import { emptyConfig } from '../apis/fbc.js';
import type { Condition } from '../apis/meta.js';
import {
  type CatalogSource,
  type CatalogSourceStatus,
  type ConfigMapResourceReference,
  ConnectionState,
} from '../apis/operators.js';
import { addDocuments } from '../catalog/load.js';
import { validateCatalog } from '../catalog/validate.js';
import { formatTime, setCondition } from '../kube/conditions.js';
import { formatProblem, type Problem } from '../util/result.js';

/**
 * Bosun's condition on CatalogSources (OLM writes none; it only has `status.reason`/`message`).
 * `Ready` is True when the last sync fetched and validated the catalog.
 */
export const CatalogSourceConditionType = { Ready: 'Ready' } as const;

/** Reasons of the `Ready` condition; failures reuse OLM's `status.reason` values where one fits. */
export const CatalogSourceConditionReason = {
  Synced: 'Synced',
  ConfigMapError: 'ConfigMapError',
  RegistryServerError: 'RegistryServerError',
  InvalidCatalog: 'InvalidCatalog',
  SpecInvalidError: 'SpecInvalidError',
  SourceTypeNotSupported: 'SourceTypeNotSupported',
} as const;
export type CatalogSourceConditionReason =
  (typeof CatalogSourceConditionReason)[keyof typeof CatalogSourceConditionReason];

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Parses a Go duration (`30s`, `10m`, `1h30m`, `1.5h`) into milliseconds, or undefined if it does not parse. */
export function parseGoDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(s)) return undefined;
  let total = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(m[1]) * unitMs[m[2]!]!;
  return total;
}

/** sha256 of named documents, independent of the order they are given in. */
/** One fetched file: a ConfigMap key's value or an HTTP response body. */
export interface FetchedFile {
  name: string;
  text: string | Buffer;
}

/** A catalog's digest: each file, in order of name, as addToDigest adds it. */
export function digestOf(files: readonly FetchedFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    addToDigest(h, f.name, [f.text]);
  }
  return `sha256:${h.digest('hex')}`;
}

/** One file's share of a catalog digest: its name, a NUL, its bytes, a NUL. */
export function addToDigest(hash: Hash, name: string, chunks: Iterable<Uint8Array | string>): void {
  hash.update(name).update('\0');
  for (const c of chunks) hash.update(c);
  hash.update('\0');
}

export type ParsedCatalog =
  | { ok: true; config: DeclarativeConfig; digest: string; warnings: Problem[] }
  | { ok: false; message: string };

/** At most this many problems are named in a status message; the count says how many more. */
const maxProblemsShown = 5;

/**
 * Parses and validates FBC documents (YAML or JSON streams, any split over files) as one catalog.
 * `where` names the source in messages, e.g. `ConfigMap olm/my-catalog`. (The controller parses
 * spooled content instead, with parseFileParts, and checks it with checkCatalog.)
 */
export function parseCatalogFiles(files: readonly FetchedFile[], where: string): ParsedCatalog {
  const config = emptyConfig();
  const problems: Problem[] = [];
  for (const f of files)
    addDocuments(config, typeof f.text === 'string' ? Buffer.from(f.text) : f.text, f.name, problems);
  return checkCatalog(config, problems, digestOf(files), where);
}

/** Validates parsed content; the message names at most a few of the problems and counts the rest. */
export function checkCatalog(
  config: DeclarativeConfig,
  parseProblems: readonly Problem[],
  digest: string,
  where: string,
): ParsedCatalog {
  const problems = [...parseProblems];
  if (problems.length === 0) {
    const validation = validateCatalog(config);
    problems.push(...validation.errors);
    if (problems.length === 0) return { ok: true, config, digest, warnings: validation.warnings };
  }
  const shown = problems.slice(0, maxProblemsShown).map(formatProblem).join('; ');
  const more = problems.length > maxProblemsShown ? ` (and ${problems.length - maxProblemsShown} more)` : '';
  return { ok: false, message: `${where} is not a valid file-based catalog: ${shown}${more}` };
}

/** The outcome of one sync, as the status needs it. */
export type SyncOutcome =
  | {
      ok: true;
      address?: string;
      at: number;
      bundles: number;
      packages: number;
      configMap?: ConfigMapResourceReference;
    }
  | { ok: false; reason: CatalogSourceConditionReason; message: string; address?: string; at: number };

/**
 * The status after a sync. On success `lastSync` moves to `at`; on failure it keeps the time of
 * the last good sync, since the store keeps serving that content.
 */
export function catalogSourceStatus(current: CatalogSource, outcome: SyncOutcome): CatalogSourceStatus {
  const previous = current.status ?? {};
  const status: CatalogSourceStatus & { lastSync?: string } = { ...previous };
  const generation = current.metadata.generation;
  const condition = (c: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>) =>
    setCondition<Condition>(
      previous.conditions,
      { ...c, ...(generation !== undefined ? { observedGeneration: generation } : {}) },
      outcome.at,
    );
  if (outcome.ok) {
    status.connectionState = {
      lastObservedState: ConnectionState.Ready,
      lastConnect: formatTime(outcome.at),
      ...(outcome.address ? { address: outcome.address } : {}),
    };
    status.lastSync = formatTime(outcome.at);
    if (outcome.configMap) status.configMapReference = outcome.configMap;
    delete status.reason;
    delete status.message;
    status.conditions = condition({
      type: CatalogSourceConditionType.Ready,
      status: 'True',
      reason: CatalogSourceConditionReason.Synced,
      message: `catalog synced: ${outcome.packages} packages, ${outcome.bundles} bundles`,
    });
  } else {
    status.connectionState = {
      lastObservedState: ConnectionState.TransientFailure,
      lastConnect: formatTime(outcome.at),
      ...(outcome.address ? { address: outcome.address } : {}),
    };
    if (isOlmReason(outcome.reason)) status.reason = outcome.reason;
    else delete status.reason;
    status.message = outcome.message;
    status.conditions = condition({
      type: CatalogSourceConditionType.Ready,
      status: 'False',
      reason: outcome.reason,
      message: outcome.message,
    });
  }
  return status;
}

/**
 * Status fields that record when something was last checked rather than what was found.
 * A poll that finds the same content changes only these, and does not rewrite the status.
 */
export const catalogSourceHeartbeats: readonly string[] = [
  'lastUpdated',
  'lastUpdateTime',
  'lastHeartbeatTime',
  'lastConnect',
  'lastSync',
];

/** `status.reason` only takes OLM's values (CatalogSourceReason). */
function isOlmReason(r: string): r is 'ConfigMapError' | 'RegistryServerError' | 'SpecInvalidError' {
  return r === 'ConfigMapError' || r === 'RegistryServerError' || r === 'SpecInvalidError';
}
