/**
 * Loading a file-based catalog: every YAML or JSON document stream under a directory, honouring
 * `.indexignore`, sorted by schema into a DeclarativeConfig. Loading only parses; it does not
 * validate (see validate.ts), so a catalog with graph problems still loads and can be inspected.
 *
 * Like opm, documents may be split over files any way the author likes; unlike opm, only files
 * named `*.yaml`, `*.yml` or `*.json` are read, so a README beside the catalog does not break it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DeclarativeConfig, emptyConfig, Schema } from '../apis/fbc.js';
import { isObject, parseYamlStream, stripBom } from '../bundle/yaml.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { IgnoreMatcher, IndexIgnoreFile, joinRel } from './ignore.js';
import { parseJsonStream } from './json-stream.js';
import { setOrigin } from './origin.js';

const CATALOG_EXT = /\.(ya?ml|json)$/i;
const READ_CONCURRENCY = 16;

/** Loads the catalog under `dir`. Errors name the file (and document) that could not be read. */
export async function loadCatalog(dir: string): Promise<Result<DeclarativeConfig>> {
  const problems: Problem[] = [];
  const files = await listCatalogFiles(dir, problems);
  // Each file is parsed as soon as it is read, so its text can be dropped early; the per-file
  // results are then joined in file order, which keeps the outcome deterministic.
  const perFile = await mapConcurrently(files, READ_CONCURRENCY, async (rel) => {
    const file = join(dir, rel);
    const local = emptyConfig();
    const localProblems: Problem[] = [];
    try {
      addDocuments(local, await readFile(file, 'utf8'), file, localProblems);
    } catch (err) {
      localProblems.push({ file, message: `cannot read: ${(err as Error).message}` });
    }
    return { local, localProblems };
  });
  const cfg = emptyConfig();
  for (const { local, localProblems } of perFile) {
    problems.push(...localProblems);
    cfg.packages.push(...local.packages);
    cfg.channels.push(...local.channels);
    cfg.bundles.push(...local.bundles);
    cfg.deprecations.push(...local.deprecations);
    cfg.others.push(...local.others);
  }
  return problems.length ? fail(problems) : ok(cfg);
}

/** Parses one file's documents into `cfg`; used for catalogs and for `render` of single files. */
export function addDocuments(cfg: DeclarativeConfig, text: string, file: string, problems: Problem[]): void {
  const body = stripBom(text);
  const firstChar = body.trimStart()[0];
  // opm sniffs the content rather than trusting the extension: a stream that starts with "{" is JSON.
  const parsed =
    firstChar === '{' || firstChar === '['
      ? parseJsonStream(body, file)
      : (() => {
          const y = parseYamlStream(body, file, { liftPayloads: true });
          return y.ok ? { ok: true as const, docs: y.docs.map((d) => d.value) } : y;
        })();
  if (!parsed.ok) {
    problems.push(parsed.problem);
    return;
  }
  parsed.docs.forEach((doc, index) => {
    const where = parsed.docs.length > 1 ? `document ${index + 1}: ` : '';
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
    setOrigin(doc, { file, doc: index });
    switch (doc.schema) {
      case Schema.Package:
        cfg.packages.push(doc as never);
        break;
      case Schema.Channel:
        cfg.channels.push(doc as never);
        break;
      case Schema.Bundle:
        cfg.bundles.push(doc as never);
        break;
      case Schema.Deprecations:
        cfg.deprecations.push(doc as never);
        break;
      default:
        cfg.others.push(doc as never);
    }
  });
}

/** Catalog files relative to `dir`, sorted, without ignored ones. */
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
    const ignoreEntry = entries.find((e) => e.name === IndexIgnoreFile && e.isFile());
    if (ignoreEntry) matcher.add(rel, await readFile(join(dir, rel, IndexIgnoreFile), 'utf8'));
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = joinRel(rel, e.name);
      if (e.name === IndexIgnoreFile) continue;
      if (e.isDirectory()) {
        if (!matcher.ignores(path, true)) await walk(path);
      } else if (e.isFile() && CATALOG_EXT.test(e.name) && !matcher.ignores(path, false)) {
        out.push(path);
      }
    }
  };
  await walk('');
  return out;
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
