/**
 * Loading a file-based catalog: every YAML or JSON document stream under a directory, honouring
 * `.indexignore`, sorted by schema into a DeclarativeConfig. Loading only parses; it does not
 * validate (see validate.ts), so a catalog with graph problems still loads and can be inspected.
 *
 * Like opm, documents may be split over files any way the author likes; unlike opm, only files
 * named `*.yaml`, `*.yml` or `*.json` are read, so a README beside the catalog does not break it.
 */
import { closeSync, fstatSync, lstatSync, openSync } from 'node:fs';
import { readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type DeclarativeConfig, emptyConfig, Schema } from '../apis/fbc.js';
import { isObject } from '../bundle/yaml.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { NoFollowRead, readFileNoFollow } from '../util/confined-fs.js';
import { readFullySync } from '../util/fs.js';
import { internStrings } from '../util/intern.js';
import { WorkerPool, workerStarter } from '../util/workers.js';
import { IgnoreMatcher, IndexIgnoreFile, joinRel } from './ignore.js';
import type { FilePart, LoadAnswer, LoadRequest, PartOfFile } from './load-worker.js';
import {
  liftAndParse,
  type Parsed,
  type ParsedPart,
  parsePart,
  parseText,
  restoreFrom,
} from './load-part.js';
import { attachStoredPayloads, type FileIdentity, type PayloadFile } from './payloads.js';
import { setOrigin } from './origin.js';
import { checkDocument, schemaProblems } from './schema.js';
import { catalogFileTooLarge, CatalogLimits, catalogTooLarge } from './limits.js';
import { objectName } from './validate.js';
import type { ErrorObject } from 'ajv';

// One part's parse lives in load-part.ts, which the load worker imports alone.
export {
  KeptBufferBytes,
  liftAndParse,
  type ParsedPart,
  parsePart,
  type PartBuffers,
  restoreFrom,
  reusedBuffer,
  WindowBytes,
} from './load-part.js';

const CATALOG_EXT = /\.(ya?ml|json)$/i;

/** Whether a file of this name is read as a catalog file (where no .indexignore leaves it out). */
export const isCatalogFileName = (name: string): boolean => CATALOG_EXT.test(name);

/**
 * Loads the catalog under `dir`. Errors name the file (and document) that could not be read.
 * Bundle objects' manifests stay in their files, read with readPayloads when used (payloads.ts).
 */
export async function loadCatalog(dir: string): Promise<Result<DeclarativeConfig>> {
  const problems: Problem[] = [];
  const files = await listCatalogFiles(dir, problems);
  const cfg = emptyConfig();
  // A catalog too large as a whole is refused before any of it is read.
  const listed = files.reduce((n, rel) => n + sizeOf(join(dir, rel)), 0);
  if (listed > CatalogLimits.maxCatalogBytes) return fail([{ file: dir, message: catalogTooLarge(listed) }]);
  // One file after another, in order (which keeps the outcome deterministic), each read whole
  // into one buffer used again for the next: fresh memory for every file cost more in page
  // faults than the reading itself. Concurrent asynchronous reads left this thread waiting, and
  // worker threads cost as much copying the documents back as they saved parsing (measured on
  // the corpus catalog).
  let buffer = Buffer.allocUnsafe(0);
  let total = 0;
  for (const rel of files) {
    const file = join(dir, rel);
    let identity: FileIdentity;
    try {
      // Listed as a file, not a link; a link put there since is not followed (ELOOP).
      const fd = openSync(file, NoFollowRead);
      try {
        identity = fstatSync(fd);
        const tooLarge = catalogFileTooLarge(identity.size);
        if (tooLarge) throw new Error(tooLarge);
        total += identity.size;
        if (total > CatalogLimits.maxCatalogBytes) {
          // Nothing after this file is read: the catalog is refused whole.
          problems.push({ file, message: catalogTooLarge(total) });
          break;
        }
        if (identity.size > buffer.length)
          buffer = Buffer.allocUnsafe(Math.max(identity.size, 2 * buffer.length));
        if (!readFullySync(fd, buffer, identity.size, 0)) {
          throw new Error('the file ended while it was being read');
        }
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      problems.push({ file, message: `cannot read: ${(err as Error).message}` });
      continue;
    }
    const bytes = buffer.subarray(0, identity.size);
    addDocuments(cfg, bytes, file, problems, { file, identity, base: 0 });
  }
  return problems.length ? fail(problems) : ok(cfg);
}

/**
 * The load worker's heap is capped: content that needs more to parse than any real catalog
 * (the corpus's, 128 MB, parses in a fraction of this) ends the worker, not the manager, and is
 * refused as a problem of that catalog while the last good content stays.
 */
export const LoadWorkerHeapMiB = 2048;
/**
 * Its young generation is small (2 × 2 MiB semi-spaces): a worker's heap is in the manager's
 * memory, and what a parse allocates is garbage at once or documents sent back, so a young
 * generation V8 grew to its default of 2 × 32 MiB held the parser's garbage resident.
 */
export const LoadWorkerYoungMiB = 6;
export const LoadWorkerLimits = {
  maxOldGenerationSizeMb: LoadWorkerHeapMiB,
  maxYoungGenerationSizeMb: LoadWorkerYoungMiB,
} as const;
const startLoadWorker = workerStarter(import.meta.url, 'load-worker', { resourceLimits: LoadWorkerLimits });

/** A file's size as listed (0 if it went away: reading it then says so). */
function sizeOf(file: string): number {
  try {
    return lstatSync(file).size;
  } catch {
    return 0;
  }
}

/** Smaller content is parsed in this thread: a worker's start costs more than its garbage. */
export const WORKER_THRESHOLD_BYTES = 4 * 2 ** 20;

/**
 * Parses byte ranges of one file (a catalog spooled to disk by the manager) into `cfg`, with the
 * bundle objects' manifests left in the file (see payloads.ts).
 */
export async function parseFileParts(
  file: string,
  parts: FilePart[],
  cfg: DeclarativeConfig,
  problems: Problem[],
): Promise<void> {
  await parseParts(
    parts.map((p) => ({ ...p, file })),
    cfg,
    problems,
  );
}

/**
 * Parses byte ranges of files on disk (spooled catalogs) into `cfg`, in the order given, with
 * the bundle objects' manifests left in their files (see payloads.ts). Each part is read on its
 * own, exactly its bytes, and its documents are added before the next part's are read: no
 * catalog is ever whole in memory as bytes.
 */
export async function parseParts(
  parts: readonly PartOfFile[],
  cfg: DeclarativeConfig,
  problems: Problem[],
): Promise<void> {
  const size = parts.reduce((n, p) => n + p.length, 0);
  if (size > CatalogLimits.maxCatalogBytes) {
    problems.push({ file: parts[0]?.file ?? '', message: catalogTooLarge(size) });
    return;
  }
  const parser = partParser({ inThread: size < WORKER_THRESHOLD_BYTES });
  try {
    const adder = partAdder(cfg, problems);
    // All are asked for at once (a worker parses them one after another), each added in turn.
    const pending = parts.map((p) => settle(parser.parse(p)));
    for (const [i, part] of parts.entries()) {
      const got = await pending[i]!;
      if (!got.ok) {
        adder.failed(parts.slice(i), got.error);
        break;
      }
      adder.add(got.value, part);
    }
  } finally {
    await parser.close();
  }
}

/** A promise's outcome as a value, so that one not awaited yet is never an unhandled rejection. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: Error };
export function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: Error) => ({ ok: false as const, error }),
  );
}

/**
 * Parses parts as they are asked for: in a load worker (one, so that what the parse holds at
 * once is one part's bytes and documents, the corpus's largest file being 10.9 MB, whatever the
 * catalog's size; its heap is bounded and goes away with it), or in this thread where workers
 * cannot run or `inThread` says the content is small.
 */
export interface PartParser {
  parse(part: PartOfFile): Promise<ParsedPart>;
  close(): Promise<void>;
}

export function partParser(opts: { inThread: boolean }): PartParser {
  if (!startLoadWorker || opts.inThread) return { parse: parsePart, close: async () => undefined };
  const pool = new WorkerPool<LoadRequest, LoadAnswer>(
    startLoadWorker,
    1,
    (r) => `reading ${r.name} (${r.file})`,
  );
  return {
    parse: async (part) => (await pool.run({ ...part })).part,
    close: () => pool.close(),
  };
}

/**
 * Adds parsed parts to `cfg`, in the order they are given. Strings that arrive from a worker are
 * fresh copies even where they repeat, so each long one is kept once (see intern.ts).
 */
export function partAdder(cfg: DeclarativeConfig, problems: Problem[]) {
  const interned = new Map<string, string>();
  const kept = new WeakSet<unknown[]>();
  return {
    /**
     * Interns a part's strings as soon as it is parsed, for a caller that adds it only later (a
     * catalog image's files are added once the pull is done, in the listing's order): until then
     * every copy of a repeated description was held (4 MiB of the corpus catalog's).
     */
    keep(parsed: ParsedPart): ParsedPart {
      if (parsed.ok && !kept.has(parsed.docs)) kept.add(internStrings(parsed.docs, interned));
      return parsed;
    },
    add(parsed: ParsedPart, part: FilePart): void {
      if (!parsed.ok) return void problems.push(parsed.problem);
      const docs = kept.has(parsed.docs) ? parsed.docs : internStrings(parsed.docs, interned);
      // The handles came beside the documents, never in them (see payloads.ts).
      attachStoredPayloads(docs, parsed.stored);
      addParsedDocuments(cfg, docs, part.name, problems);
    },
    /** The parse of `parts` could not finish: `err` is why (a worker that died). */
    failed(parts: readonly FilePart[], err: Error): void {
      const outOfMemory = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      problems.push({
        file: parts.map((p) => p.name).join(', '),
        message: outOfMemory
          ? `cannot be parsed within ${LoadWorkerHeapMiB} MiB of memory; no real catalog comes near that`
          : `cannot be parsed: ${err.message}`,
      });
    },
  };
}

/**
 * Parses one file's documents into `cfg`; used for catalogs and for `render` of single files.
 * Bytes have their inline manifests lifted out before parsing (see payloads.ts); with `stored`
 * (where the bytes are in a file that stays) bundle objects' manifests are left there.
 */
export function addDocuments(
  cfg: DeclarativeConfig,
  input: string | Buffer,
  file: string,
  problems: Problem[],
  stored?: PayloadFile,
): void {
  const parsed = parseDocuments(input, file, stored);
  if (parsed.ok) addParsedDocuments(cfg, parsed.docs, file, problems);
  else problems.push(parsed.problem);
}

/** Sorts parsed documents into `cfg` by schema, remembering the file each came from. */
function addParsedDocuments(
  cfg: DeclarativeConfig,
  docs: unknown[],
  file: string,
  problems: Problem[],
): void {
  docs.forEach((doc, index) => {
    const where = docs.length > 1 ? `document ${index + 1}: ` : '';
    if (!isObject(doc)) {
      problems.push({
        file,
        message: `${where}expected a catalog document (a map with a "schema"), found ${Array.isArray(doc) ? 'a list' : typeof doc}`,
      });
      return;
    }
    if (typeof doc.schema !== 'string' || doc.schema === '') {
      const name = typeof doc.name === 'string' ? doc.name : undefined;
      problems.push({
        file,
        ...(name ? { object: name } : {}),
        field: 'schema',
        message: `${where}every catalog document needs a "schema" (e.g. olm.package, olm.channel, olm.bundle)`,
      });
      return;
    }
    // Checked against its schema before it is kept: what follows relies on the types.
    setOrigin(doc, { file, doc: index });
    const refused = (errors: ErrorObject[] | null | undefined) =>
      problems.push(...schemaProblems(errors ?? [], file, documentName(doc)));
    const { package: pkg, channel, bundle, deprecations, other } = checkDocument;
    switch (doc.schema) {
      case Schema.Package:
        if (pkg(doc)) cfg.packages.push(doc);
        else refused(pkg.errors);
        break;
      case Schema.Channel:
        if (channel(doc)) cfg.channels.push(doc);
        else refused(channel.errors);
        break;
      case Schema.Bundle:
        if (bundle(doc)) cfg.bundles.push(doc);
        else refused(bundle.errors);
        break;
      case Schema.Deprecations:
        if (deprecations(doc)) cfg.deprecations.push(doc);
        else refused(deprecations.errors);
        break;
      default:
        if (other(doc)) cfg.others.push(doc);
        else refused(other.errors);
    }
  });
}

/** How problems name a document: as validation names it, from whatever names it has. */
function documentName(doc: Record<string, unknown>): string {
  const text = (v: unknown, none: string) => (typeof v === 'string' && v !== '' ? v : none);
  const name = text(doc.name, '<unnamed>');
  const pkg = text(doc.package, '<no package>');
  switch (doc.schema) {
    case Schema.Package:
      return objectName.package(name);
    case Schema.Channel:
      return objectName.channel(pkg, name);
    case Schema.Bundle:
      return objectName.bundle(name);
    case Schema.Deprecations:
      return objectName.deprecations(pkg);
    default:
      return `${String(doc.schema)} ${name}`;
  }
}

function parseDocuments(input: string | Buffer, file: string, stored?: PayloadFile): Parsed {
  if (typeof input === 'string') return parseText(input, file);
  const parsed = liftAndParse(input, file);
  if (parsed.ok) attachStoredPayloads(parsed.docs, restoreFrom(input, parsed, stored));
  return parsed;
}

/**
 * Catalog files relative to `dir`, sorted, without ignored ones. The walk follows no symbolic
 * link below `dir` (which itself may be one: the user named it): a link it would read through (to
 * a folder, or named like a catalog file or `.indexignore`, pointing anywhere or nowhere) is a
 * problem naming it, so a catalog never reads, and `publish` never writes, outside itself through
 * one. A link it would not read anyway (`README.md`, or one `.indexignore` leaves out) is passed
 * over as before.
 */
export async function listCatalogFiles(dir: string, problems: Problem[]): Promise<string[]> {
  const matcher = new IgnoreMatcher();
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(join(dir, rel), { withFileTypes: true });
    } catch (err) {
      problems.push({
        file: join(dir, rel),
        message: `cannot read catalog directory: ${(err as Error).message}`,
      });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const ignoreEntry = entries.find((e) => e.name === IndexIgnoreFile);
    if (ignoreEntry?.isSymbolicLink()) {
      problems.push(await linkProblem(dir, joinRel(rel, IndexIgnoreFile)));
    } else if (ignoreEntry?.isFile()) {
      const file = join(dir, rel, IndexIgnoreFile);
      try {
        matcher.add(rel, (await readFileNoFollow(file)).toString('utf8'));
      } catch (err) {
        problems.push({ file, message: `cannot read: ${(err as Error).message}` });
      }
    }
    for (const e of entries) {
      const path = joinRel(rel, e.name);
      if (e.name === IndexIgnoreFile) continue;
      if (e.isSymbolicLink()) {
        const toDir = await pointsToFolder(join(dir, path));
        if ((toDir || CATALOG_EXT.test(e.name)) && !matcher.ignores(path, toDir))
          problems.push(await linkProblem(dir, path));
      } else if (e.isDirectory()) {
        if (!matcher.ignores(path, true)) await walk(path);
      } else if (e.isFile() && CATALOG_EXT.test(e.name) && !matcher.ignores(path, false)) {
        out.push(path);
      }
    }
  };
  await walk('');
  return out;
}

/** Whether a link leads to a folder (a dangling one leads nowhere). */
async function pointsToFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function linkProblem(dir: string, rel: string): Promise<Problem> {
  const file = join(dir, rel);
  const target = await readlink(file).catch(() => '?');
  const dangling = (await stat(file).catch(() => undefined)) === undefined;
  return {
    file,
    message: `is a symbolic link (to ${target}${dangling ? ', which does not exist' : ''}); a catalog is read without following links, so that nothing outside it is read or written through one: put the file or folder itself there, or leave the link out with .indexignore`,
  };
}

/** Maps `items` with at most `limit` calls in flight; results keep the order of `items`. */
export async function mapConcurrently<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
