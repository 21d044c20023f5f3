/**
 * Pure helpers of the CatalogSource controller: Go durations for `registryPoll.interval`, and the
 * status a CatalogSource should show for one sync outcome. No clients, no clock (times are passed
 * in). What a catalog's content is, and whether it is valid, is src/catalog/content's.
 */
import type { Condition } from '../apis/meta.js';
import {
  type CatalogSource,
  type CatalogSourceStatus,
  type ConfigMapResourceReference,
  ConnectionState,
  SourceType,
} from '../apis/operators.js';
import { FetchFailureReason, SourceKind } from '../catalog/content/fetcher.js';
import { formatTime, setCondition } from '../kube/conditions.js';

/**
 * Bosun's condition on CatalogSources (OLM writes none; it only has `status.reason`/`message`).
 * `Ready` is True when the last sync fetched and validated the catalog.
 */
export const CatalogSourceConditionType = { Ready: 'Ready' } as const;

/**
 * Reasons of the `Ready` condition: Synced, or why the fetch failed (FetchFailureReason, which
 * reuses OLM's `status.reason` values where one fits).
 */
export const CatalogSourceConditionReason = {
  Synced: 'Synced',
  ...FetchFailureReason,
} as const;
export type CatalogSourceConditionReason =
  (typeof CatalogSourceConditionReason)[keyof typeof CatalogSourceConditionReason];

/**
 * Which fetcher reads a CatalogSource: its sourceType's, and for grpc the image's when it names
 * one, else the registry address's (OLM's choice too). Undefined for a sourceType Bosun does not know.
 */
export function sourceKindOf(cs: CatalogSource): SourceKind | undefined {
  switch (cs.spec.sourceType) {
    case SourceType.ConfigMap:
    case SourceType.Internal:
      return SourceKind.ConfigMap;
    case SourceType.Http:
      return SourceKind.Http;
    case SourceType.Grpc:
      return cs.spec.image ? SourceKind.Image : SourceKind.Grpc;
    default:
      return undefined;
  }
}

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

/** The outcome of one sync, as the status needs it. */
export type SyncOutcome =
  | {
      ok: true;
      address?: string;
      /** A catalog image pinned to the digest read. */
      image?: string;
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
      message: `catalog synced: ${outcome.packages} packages, ${outcome.bundles} bundles${outcome.image ? ` from ${outcome.image}` : ''}`,
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
