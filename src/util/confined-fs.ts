/**
 * Files below a directory the user named (a catalog, a bundle), read and written without
 * following a symbolic link anywhere below it. The directory itself may be a link: the user named
 * it. Below it, a link could lead a write out of the tree (a package folder linked to
 * `/etc/something` would have `catalog publish` replace the file there) or a read out of it, so:
 *
 * - before anything is written, every part of each path below the root is looked at with lstat,
 *   and a link, or a file where a folder belongs, refuses the whole write (`linkInTheWay`);
 * - folders are created one level at a time, each checked to be a real folder after it is made,
 *   and a folder is written into only while its real path is the root's real path joined with
 *   its path below the root (`assertInside`): a link swapped in after the check shows there;
 * - files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` (a name someone has put a link or a
 *   file at in the meantime fails instead of being followed or truncated), and opened for reading
 *   with `O_NOFOLLOW`.
 *
 * Node has no openat/renameat, so a process that can rename this tree's folders while a write runs
 * could still move a checked folder away between the last check and a rename; such a process can
 * change the tree at will anyway.
 */
import { constants } from 'node:fs';
import * as nodefs from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import type { Problem } from './result.js';

/** The filesystem calls made here; tests substitute failing ones. */
export interface ConfinedFs {
  lstat: (path: string) => Promise<{ isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean }>;
  readlink: (path: string) => Promise<string>;
  realpath: (path: string) => Promise<string>;
  /** Makes one folder (not its parents); fails when the name is taken. */
  mkdir: (path: string) => Promise<void>;
  rmdir: (path: string) => Promise<void>;
  /** Creates a new file with `data`; fails when the name is taken, by anything, a link included. */
  createFile: (path: string, data: string) => Promise<void>;
  rename: (from: string, to: string) => Promise<void>;
  rm: (path: string) => Promise<void>;
}

/** Exclusive, and no link followed at the last step (`O_EXCL` alone already refuses a link there). */
const CreateFlags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

export const realConfinedFs: ConfinedFs = {
  lstat: (p) => nodefs.lstat(p),
  readlink: (p) => nodefs.readlink(p),
  realpath: (p) => nodefs.realpath(p),
  mkdir: async (p) => {
    await nodefs.mkdir(p);
  },
  rmdir: (p) => nodefs.rmdir(p),
  createFile: async (p, data) => {
    await using handle = await nodefs.open(p, CreateFlags, 0o666);
    await handle.writeFile(data);
  },
  rename: (a, b) => nodefs.rename(a, b),
  rm: (p) => nodefs.rm(p, { force: true }),
};

/** Opens a file for reading; a link at its name fails (ELOOP) instead of being followed. */
export function openNoFollow(path: string): Promise<nodefs.FileHandle> {
  return nodefs.open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
}

/** The same, synchronous: a file descriptor. */
export const NoFollowRead = constants.O_RDONLY | constants.O_NOFOLLOW;

/** A file's text, read without following a link at its name. */
export async function readFileNoFollow(path: string): Promise<Buffer> {
  await using handle = await openNoFollow(path);
  return handle.readFile();
}

/** A tree to write under: the root as named, and its real path (the root may be a link). */
export interface Tree {
  root: string;
  real: string;
}

export async function openTree(root: string, fs: ConfinedFs = realConfinedFs): Promise<Tree> {
  return { root, real: await fs.realpath(root) };
}

/**
 * The parts of `rel`, when it is a plain path below a root (no `..`, not absolute, nothing
 * doubled); undefined otherwise.
 */
export function pathParts(rel: string): string[] | undefined {
  if (rel === '' || isAbsolute(rel) || normalize(rel) !== rel) return undefined;
  const parts = rel.split(sep);
  return parts.some((p) => p === '' || p === '.' || p === '..') ? undefined : parts;
}

/** Why a write below the tree was refused: the path named and what is in the way. */
export class LinkInTheWay extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.file}: ${problem.message}`);
    this.name = 'LinkInTheWay';
  }
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** What stands at `path`: nothing, a folder, a file, a link (with where it points), or something else. */
async function whatIsAt(
  fs: ConfinedFs,
  path: string,
): Promise<{ kind: 'none' | 'dir' | 'file' | 'other' } | { kind: 'link'; target: string }> {
  let st: Awaited<ReturnType<ConfinedFs['lstat']>>;
  try {
    st = await fs.lstat(path);
  } catch (err) {
    if (isMissing(err)) return { kind: 'none' };
    throw err;
  }
  if (st.isSymbolicLink()) return { kind: 'link', target: await fs.readlink(path).catch(() => '?') };
  return { kind: st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other' };
}

/**
 * Why writing (or removing) the file `rel` below `root` would follow a link or replace something
 * that is not a file; undefined when nothing is in the way. Looks only; changes nothing.
 */
export async function linkInTheWay(
  root: string,
  rel: string,
  fs: ConfinedFs = realConfinedFs,
): Promise<Problem | undefined> {
  const parts = pathParts(rel);
  if (!parts)
    return { file: join(root, rel), message: 'is not a path inside the catalog; nothing was written' };
  let at = root;
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    const last = i === parts.length - 1;
    const found = await whatIsAt(fs, at);
    if (found.kind === 'none') return undefined; // made by the write, inside the tree
    if (found.kind === 'link') return linkProblem(at, found.target, last ? 'file' : 'folder');
    if (!last && found.kind !== 'dir')
      return {
        file: at,
        message: 'is not a folder, so nothing can be written below it; nothing was written',
      };
    if (last && found.kind !== 'file')
      return {
        file: at,
        message: 'is not a regular file, so Bosun will not replace it; nothing was written',
      };
  }
  return undefined;
}

function linkProblem(path: string, target: string, what: 'file' | 'folder'): Problem {
  return {
    file: path,
    message: `is a symbolic link (to ${target}); Bosun does not write through links inside a catalog, so nothing was written: put the ${what} itself there instead of a link`,
  };
}

/**
 * Throws LinkInTheWay unless the folder `relDir` below the tree is the tree's own: its real path
 * is the tree's real path joined with `relDir`, so no part of it is (any longer) a link.
 */
export async function assertInside(
  tree: Tree,
  relDir: string,
  fs: ConfinedFs = realConfinedFs,
): Promise<void> {
  const dir = relDir === '' ? tree.root : join(tree.root, relDir);
  const real = await fs.realpath(dir);
  const expected = relDir === '' ? tree.real : join(tree.real, relDir);
  if (real === expected) return;
  const rel = relative(tree.real, real);
  const where =
    rel === '' || rel.startsWith('..') || isAbsolute(rel)
      ? real
      : `${relative(tree.real, real)} in the catalog`;
  throw new LinkInTheWay({
    file: dir,
    message: `leads to ${where} through a symbolic link (it changed while the catalog was being written); nothing was written`,
  });
}

/**
 * Makes the folders of `relDir` that are missing, one level at a time, each checked to be a
 * real folder once made. Returns the folders it made, outermost first, so a failed write can
 * remove them again.
 */
export async function makeFolders(
  tree: Tree,
  relDir: string,
  fs: ConfinedFs = realConfinedFs,
): Promise<string[]> {
  const made: string[] = [];
  if (relDir === '') return made;
  const parts = pathParts(relDir);
  if (!parts)
    throw new LinkInTheWay({ file: join(tree.root, relDir), message: 'is not a path inside the catalog' });
  let at = tree.root;
  for (const part of parts) {
    at = join(at, part);
    let found = await whatIsAt(fs, at);
    if (found.kind === 'none') {
      try {
        await fs.mkdir(at);
        made.push(at);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      found = await whatIsAt(fs, at);
    }
    if (found.kind === 'link') throw new LinkInTheWay(linkProblem(at, found.target, 'folder'));
    if (found.kind !== 'dir')
      throw new LinkInTheWay({ file: at, message: 'is not a folder, so nothing can be written below it' });
  }
  return made;
}
