/**
 * A CSV's upgrade edges, as OLM reads them from the CSV and as opm puts them in a channel entry:
 * `spec.replaces`, `spec.skips`, and the `olm.skipRange` annotation. Import and publish build
 * channel entries with `csvEdges`; bundle validation reports `csvEdgeProblems`.
 */
import { CSVAnnotation, type KubeManifest } from '../apis/bundle.js';
import type { ChannelEntry } from '../apis/fbc.js';
import { inRange, parseRange, parseTolerant } from './version.js';

export interface EdgeProblem {
  field: string;
  message: string;
}

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

const specOf = (csv: KubeManifest) => record(csv.spec);
const annotationsOf = (csv: KubeManifest) => record(record(csv.metadata)?.annotations);

/** The CSV's `olm.skipRange` annotation, if it is a string. */
export function csvSkipRange(csv: KubeManifest): string | undefined {
  const v = annotationsOf(csv)?.[CSVAnnotation.SkipRange];
  return typeof v === 'string' ? v : undefined;
}

/** The CSV's `spec.skips`, keeping only strings (validation reports the rest). */
export function csvSkips(csv: KubeManifest): string[] {
  const v = specOf(csv)?.skips;
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

/** The CSV's `spec.replaces`, if it is a non-empty string. */
export function csvReplaces(csv: KubeManifest): string | undefined {
  const v = specOf(csv)?.replaces;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The channel entry named `name` with the CSV's edges (an empty one is left out). */
export function csvEdges(name: string, csv: KubeManifest): ChannelEntry {
  const e: ChannelEntry = { name };
  const replaces = csvReplaces(csv);
  if (replaces) e.replaces = replaces;
  const skips = csvSkips(csv);
  if (skips.length) e.skips = skips;
  const skipRange = csvSkipRange(csv);
  if (skipRange) e.skipRange = skipRange;
  return e;
}

/** True when the entry has any upgrade edge. */
export function hasEdges(e: ChannelEntry): boolean {
  return e.replaces !== undefined || e.skips !== undefined || e.skipRange !== undefined;
}

/** What is wrong with the edges of the CSV named `name`, by field. */
export function csvEdgeProblems(csv: KubeManifest, name: string | undefined): EdgeProblem[] {
  const out: EdgeProblem[] = [];
  const spec = specOf(csv);
  if (spec?.replaces !== undefined) {
    if (typeof spec.replaces !== 'string')
      out.push({ field: 'spec.replaces', message: 'must be a string (a CSV name)' });
    else if (spec.replaces === name)
      out.push({ field: 'spec.replaces', message: 'a CSV cannot replace itself' });
  }
  if (spec?.skips !== undefined) {
    const skips = spec.skips;
    if (!Array.isArray(skips)) out.push({ field: 'spec.skips', message: 'must be a list of CSV names' });
    else
      skips.forEach((s, i) => {
        if (typeof s !== 'string' || s === '')
          out.push({ field: `spec.skips[${i}]`, message: 'must be a CSV name' });
        else if (s === name) out.push({ field: `spec.skips[${i}]`, message: 'a CSV cannot skip itself' });
      });
  }
  const skipRange = csvSkipRange(csv);
  if (skipRange !== undefined) {
    const r = parseRange(skipRange);
    if (!r.ok) out.push({ field: `metadata.annotations.${CSVAnnotation.SkipRange}`, message: r.message });
  }
  return out;
}

/**
 * Whether the CSV upgrades from `installed` by one of its edges: it replaces it, skips it, or its
 * skipRange holds its version (read leniently, as OLM reads an installed CSV's version).
 */
export function upgradesFrom(csv: KubeManifest, installed: { name: string; version?: string }): boolean {
  if (csvReplaces(csv) === installed.name || csvSkips(csv).includes(installed.name)) return true;
  const text = csvSkipRange(csv);
  const range = text === undefined ? undefined : parseRange(text);
  const version = installed.version === undefined ? undefined : parseTolerant(installed.version);
  return range?.ok === true && version !== undefined && inRange(version, range.range);
}
