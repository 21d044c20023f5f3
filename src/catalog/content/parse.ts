/**
 * Fetched FBC made a validated catalog: documents parsed (YAML or JSON streams, split over any
 * files) and checked as `bosun catalog validate` checks a directory, with a message that names the
 * source and the first few problems. Content the store already holds (the same digest: most
 * polls) is not parsed again.
 */
import type { DeclarativeConfig } from '../../apis/fbc.js';
import { emptyConfig } from '../../apis/fbc.js';
import { formatProblem, type Problem } from '../../util/result.js';
import { addDocuments, parseParts } from '../load.js';
import { validateCatalog } from '../validate.js';
import { digestOf, type FetchedFile } from './digest.js';
import type { CatalogSpool, Spooled } from './spool.js';
import type { CatalogContent } from './store.js';

export type ParsedCatalog =
  | { ok: true; config: DeclarativeConfig; digest: string; warnings: Problem[] }
  | { ok: false; message: string };

/** At most this many problems are named in a message; the count says how many more. */
const maxProblemsShown = 5;

/**
 * Parses and validates FBC documents (YAML or JSON streams, any split over files) as one catalog.
 * `where` names the source in messages, e.g. `ConfigMap olm/my-catalog`. (Fetched content is
 * parsed from the spool instead, with parseSpooled.)
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

export type ParsedContent = { ok: true; content: CatalogContent } | { ok: false; message: string };

/**
 * Spooled content → a validated catalog. Content the same as `previous` (the same digest) is not
 * parsed again: the previous content stands, and the new copy is removed. New content is parsed
 * with its inline manifests left in the spooled file, to be read from there when a bundle is
 * installed; only valid content keeps its file.
 */
export async function parseSpooled(
  spool: Pick<CatalogSpool, 'remove'>,
  spooled: Spooled,
  previous: CatalogContent | undefined,
  where: string,
): Promise<ParsedContent> {
  const { path, digest, parts } = spooled;
  if (previous?.digest === digest) {
    await spool.remove(path);
    return { ok: true, content: previous };
  }
  const config = emptyConfig();
  const problems: Problem[] = [];
  let parsed: ParsedCatalog | undefined;
  try {
    await parseParts(parts, config, problems);
    parsed = checkCatalog(config, problems, digest, where);
    return parsed.ok ? { ok: true, content: { config, digest, payloadFile: path } } : parsed;
  } finally {
    if (!parsed?.ok) await spool.remove(path);
  }
}
