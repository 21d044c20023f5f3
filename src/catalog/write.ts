/**
 * Writing catalogs: one file per package, `<catalog>/<pkg>/catalog.yaml` (or `.json`), content
 * from encode.ts, so the same catalog always produces the same bytes.
 *
 * A write is all or nothing. Every new file is first written beside its target under a temporary
 * name; only when all of them are on disk are existing files moved aside and the new ones renamed
 * into place (rename is atomic within a filesystem). If any step fails, what was moved aside is
 * moved back and the temporary files are removed, so a failed command leaves the catalog as it
 * was. Nothing is written through a symbolic link below the catalog's root (commitFiles).
 */
import { randomBytes } from 'node:crypto';
import * as nodefs from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { DeclarativeConfig } from '../apis/fbc.js';
import {
  assertInside,
  type ConfinedFs,
  LinkInTheWay,
  linkInTheWay,
  makeFolders,
  openTree,
  realConfinedFs,
} from '../util/confined-fs.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { type CatalogFormat, catalogFileName, documentsByPackage, encodeDocuments } from './encode.js';
import { fileOf } from './origin.js';
import { withPayloadsAll } from './payloads.js';

/**
 * The catalog's files as they should be: path relative to the catalog root → content. Stored
 * bundle objects are read one package at a time, so only one package's manifests are in memory
 * beside the catalog.
 */
export async function renderCatalogFiles(
  cfg: DeclarativeConfig,
  format: CatalogFormat,
  only?: ReadonlySet<string>,
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const [pkg, docs] of documentsByPackage(cfg)) {
    if (only && !only.has(pkg)) continue;
    const read = await withPayloadsAll(docs);
    files.set(join(pkg, catalogFileName(format)), encodeDocuments(read, format));
  }
  return files;
}

/** One change to a file under the catalog root: new content, or `null` to remove it. */
export interface FileChange {
  path: string;
  content: string | null;
}

const sidecar = (path: string, tag: string) =>
  join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.${tag}`);

/**
 * Applies `changes` under `root` all together, or not at all (see the module comment). Nothing is
 * written through a symbolic link below `root` (util/confined-fs.ts): a link, or a file where a
 * folder belongs, anywhere on a path to write or remove refuses the whole commit before anything
 * is touched, and its problems are returned, naming the path. A link that appears while the
 * commit runs is found before the first file is replaced, and the commit is undone and refused the
 * same way. I/O failures throw, after the same undoing.
 */
export async function commitFiles(
  root: string,
  changes: FileChange[],
  fs: ConfinedFs = realConfinedFs,
): Promise<Problem[]> {
  const refused: Problem[] = [];
  for (const c of changes) {
    const p = await linkInTheWay(root, c.path, fs);
    if (p) refused.push(p);
  }
  if (refused.length) return refused;
  // The root itself was named by the user and may be a link; it is made when missing.
  const made: string[] = [];
  const firstMade = await nodefs.mkdir(root, { recursive: true });
  if (firstMade !== undefined) {
    let at = firstMade;
    made.push(at);
    for (const part of relative(firstMade, root).split(sep).filter(Boolean)) made.push((at = join(at, part)));
  }
  const tree = await openTree(root, fs);

  const staged: { target: string; tmp: string }[] = [];
  const movedAside: { target: string; backup: string }[] = [];
  const installed: string[] = [];
  try {
    for (const c of changes) {
      if (c.content === null) continue;
      const target = join(root, c.path);
      made.push(...(await makeFolders(tree, folderOf(c.path), fs)));
      await assertInside(tree, folderOf(c.path), fs);
      const tmp = sidecar(target, 'tmp');
      await fs.createFile(tmp, c.content);
      staged.push({ target, tmp });
    }
    // Checked again right before the first file is replaced: a folder swapped for a link while
    // the new files were being written is found here, before anything is moved.
    for (const c of changes) {
      const p = await linkInTheWay(root, c.path, fs);
      if (p) throw new LinkInTheWay(p);
      if (c.content !== null || (await exists(fs, join(root, c.path))))
        await assertInside(tree, folderOf(c.path), fs);
    }
    for (const c of changes) {
      const target = join(root, c.path);
      if (!(await exists(fs, target))) continue;
      const backup = sidecar(target, 'bak');
      await fs.rename(target, backup);
      movedAside.push({ target, backup });
    }
    for (const s of staged) {
      await fs.rename(s.tmp, s.target);
      installed.push(s.target);
    }
  } catch (err) {
    for (const t of installed) await fs.rm(t).catch(() => {});
    for (const m of movedAside.reverse()) await fs.rename(m.backup, m.target).catch(() => {});
    for (const s of staged) await fs.rm(s.tmp).catch(() => {});
    for (const d of made.reverse()) await fs.rmdir(d).catch(() => {});
    if (err instanceof LinkInTheWay) return [err.problem];
    throw new Error(`writing the catalog failed, nothing was changed: ${(err as Error).message}`, {
      cause: err,
    });
  }
  for (const m of movedAside) await fs.rm(m.backup).catch(() => {});
  return [];
}

const folderOf = (rel: string) => (dirname(rel) === '.' ? '' : dirname(rel));

async function exists(fs: ConfinedFs, path: string): Promise<boolean> {
  try {
    await fs.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the packages of `cfg` named in `packages` (all when omitted) as one file each, and
 * removes `remove` (files whose documents now live in those package files). The files written, or
 * the problems that refused the write (see commitFiles), with nothing written.
 */
export async function writeCatalog(
  root: string,
  cfg: DeclarativeConfig,
  opts: { format: CatalogFormat; packages?: ReadonlySet<string>; remove?: string[]; fs?: ConfinedFs },
): Promise<Result<string[]>> {
  const files = await renderCatalogFiles(cfg, opts.format, opts.packages);
  const changes: FileChange[] = [...files].map(([path, content]) => ({ path, content }));
  for (const r of opts.remove ?? []) if (!files.has(r)) changes.push({ path: r, content: null });
  const refused = await commitFiles(root, changes, opts.fs);
  return refused.length ? fail(refused) : ok([...files.keys()]);
}

/**
 * The files under `root` that hold documents of `packages` (from load origins), and the problems
 * that stop rewriting them: Bosun writes one package per file, so a file that also holds other
 * packages' documents cannot be replaced.
 */
export function filesOfPackages(
  root: string,
  cfg: DeclarativeConfig,
  packages: ReadonlySet<string>,
): { files: string[]; problems: Problem[] } {
  const owners = new Map<string, Set<string>>();
  const note = (doc: object, pkg: string) => {
    const file = fileOf(doc);
    if (!file) return;
    const set = owners.get(file) ?? new Set<string>();
    set.add(pkg);
    owners.set(file, set);
  };
  for (const p of cfg.packages) note(p, p.name);
  for (const c of cfg.channels) note(c, c.package);
  for (const b of cfg.bundles) note(b, b.package);
  for (const d of cfg.deprecations) note(d, d.package);
  for (const o of cfg.others) note(o, typeof o.package === 'string' ? o.package : '');
  const files: string[] = [];
  const problems: Problem[] = [];
  for (const [file, pkgs] of owners) {
    if (![...pkgs].some((p) => packages.has(p))) continue;
    const others = [...pkgs].filter((p) => !packages.has(p));
    if (others.length) {
      problems.push({
        file,
        message: `also holds documents of ${others.map((p) => p || '(no package)').join(', ')}; Bosun rewrites a package as one file, so split this file by package first`,
      });
      continue;
    }
    const rel = relative(root, file);
    if (!rel.startsWith('..')) files.push(rel);
  }
  return { files: files.sort(), problems };
}
