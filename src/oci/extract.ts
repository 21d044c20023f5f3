/**
 * Image layers applied in order into a fresh folder or into memory, safe by construction:
 *
 * - every entry's path is checked (no `..`, not absolute) and every folder on its way must be a
 *   folder this extraction made: an entry below a symlink is refused, so no write ever passes
 *   through a link, whichever entry made it;
 * - a symlink whose target leads out of the root is refused, and the others are written in a
 *   canonical form (layer-paths.ts) that cannot lead out whatever is later made below them;
 * - a hard link must name a regular file extracted before it; devices, FIFOs and other entry
 *   types are refused;
 * - files are created with O_CREAT|O_EXCL|O_NOFOLLOW, so a name already taken (by a link above
 *   all) fails instead of being followed or truncated;
 * - the number of entries, each file's size (from its header, before its data) and the total
 *   size (headers, and the inflated stream as it flows) are bounded.
 *
 * OCI whiteouts (`.wh.<name>`, `.wh..wh..opq`) remove what lower layers made. Any refusal names
 * the image, the layer and the entry; the folder is then removed whole, so nothing half-extracted
 * is left, and the folder must not exist before (a fresh folder holds no links to be tricked by).
 */
import { constants } from 'node:fs';
import { link, mkdir, open, rm, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createZstdDecompress } from 'node:zlib';
import type { ReadEntry } from 'tar';
import { LayerEntryError, OciError } from './errors.js';
import { canonicalLinkTarget, linkDestination, normalizeEntryPath, whiteoutOf } from './layer-paths.js';
import { layerCompression } from './media-types.js';

export interface ExtractLimits {
  /** Bytes of one file. */
  maxFileBytes: number;
  /** What raises `maxFileBytes`, said in its refusal (`BOSUN_CATALOG_MAX_FILE_MIB raises it`). */
  maxFileBytesRaise?: string;
  /** Bytes of all files of all layers together (what is written, before whiteouts remove any). */
  maxTotalBytes: number;
  /** Entries of all layers together, whiteouts and folders included. */
  maxEntries: number;
}

const MiB = 1024 * 1024;
/**
 * A catalog file may be 256 MiB (catalog/limits.ts), and the largest catalog image of 2021's
 * OperatorHub holds some hundred MiB; a bundle image is far smaller. Callers pass their own.
 */
export const DefaultExtractLimits: ExtractLimits = {
  maxFileBytes: 256 * MiB,
  maxTotalBytes: 1024 * MiB,
  maxEntries: 100_000,
};

/** One layer to apply: its descriptor, and its bytes (verified against the digest as they stream). */
export interface LayerSource {
  digest: string;
  mediaType: string;
  open: () => Promise<Readable>;
}

export interface ExtractOptions {
  /** The image, for messages: `quay.io/org/catalog:v1@sha256:...`. */
  image: string;
  limits?: ExtractLimits;
  /**
   * Only entries below these paths are kept (`configs`, or `manifests` and `metadata`); the
   * rest of each layer is read past, unchecked but counted. All are kept when undefined.
   */
  only?: readonly string[];
  /**
   * Told of each file as soon as it is whole on disk (a regular file, or a hard link made to
   * one), with its path from the root and its size: a caller may start reading it while later
   * entries are extracted. A later entry may still replace or remove it (the same path told
   * again, a whiteout); only what is there when extraction ends is the image's content.
   */
  onFile?: (path: string, size: number) => void;
}

export interface ExtractSummary {
  files: number;
  bytes: number;
}

/** Content read into memory: files by path from the image root, symlinks with their canonical target. */
export interface ImageFiles {
  files: Map<string, Buffer>;
  symlinks: Map<string, string>;
  dirs: string[];
}

type Kind = 'dir' | 'file' | 'symlink';
interface Node {
  kind: Kind;
  /** The layer that made it: whiteouts remove only what lower layers made. */
  layer: number;
  children?: Map<string, Node>;
  data?: Buffer;
  /** A file's size. */
  size?: number;
  target?: string;
}

/** Where extracted content goes: a folder on disk, or memory. Called only with checked paths. */
interface Sink {
  mkdir(path: string): Promise<void>;
  /** Creates `path` (which is free) from `data`; returns the bytes for memory. */
  writeFile(path: string, data: AsyncIterable<Buffer>, mode: number): Promise<Buffer | undefined>;
  symlink(path: string, target: string): Promise<void>;
  link(path: string, existing: string): Promise<void>;
  remove(path: string, kind: Kind): Promise<void>;
}

/** Folders and files as made by extraction: readable by all, executable where the image said so. */
const FileMode = (mode: number | undefined) => ((mode ?? 0o644) & 0o111 ? 0o755 : 0o644);
const CreateFlags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

function diskSink(root: string): Sink {
  const at = (p: string) => join(root, p);
  return {
    mkdir: async (p) => {
      await mkdir(at(p), 0o755);
    },
    writeFile: async (p, data, mode) => {
      await using handle = await open(at(p), CreateFlags, mode);
      for await (const chunk of data) await handle.write(chunk);
      return undefined;
    },
    symlink: (p, target) => symlink(target, at(p)),
    // link(2) does not follow a symlink at `existing`; it is a file extraction made anyway.
    link: (p, existing) => link(at(existing), at(p)),
    remove: (p, kind) => (kind === 'dir' ? rm(at(p), { recursive: true, force: true }) : unlink(at(p))),
  };
}

const memorySink: Sink = {
  mkdir: async () => undefined,
  writeFile: async (_p, data) => {
    const chunks: Buffer[] = [];
    for await (const chunk of data) chunks.push(chunk);
    return Buffer.concat(chunks);
  },
  symlink: async () => undefined,
  link: async () => undefined,
  remove: async () => undefined,
};

class Refused extends Error {
  constructor(
    readonly entry: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** The state of one extraction: the tree made so far, what it counted, where it writes. */
class Extraction {
  readonly root: Node = { kind: 'dir', layer: -1, children: new Map() };
  entries = 0;
  bytes = 0;
  files = 0;

  constructor(
    readonly sink: Sink,
    readonly limits: ExtractLimits,
    readonly only: readonly string[] | undefined,
    readonly onFile: ExtractOptions['onFile'] = undefined,
  ) {}

  /**
   * The node at `path` and the folder it is in, without following links: `blocked` says which
   * part on the way is not a folder; neither is set when a folder on the way is missing.
   */
  private lookup(path: string): { parent?: Node; node?: Node; name: string; blocked?: string } {
    const parts = path.split('/');
    const name = parts.at(-1)!;
    let dir = this.root;
    for (let i = 0; i < parts.length - 1; i++) {
      const next = dir.children!.get(parts[i]!);
      if (!next) return { name };
      if (next.kind !== 'dir')
        return { name, blocked: `${parts.slice(0, i + 1).join('/')} is a ${next.kind}` };
      dir = next;
    }
    return { parent: dir, node: dir.children!.get(name), name };
  }

  /** The folders of `path` (all but its last part), made where missing: tar files may leave them out. */
  private async parentOf(path: string, layer: number): Promise<Node> {
    const parts = path.split('/');
    let dir = this.root;
    for (let i = 0; i < parts.length - 1; i++) {
      const name = parts[i]!;
      const sofar = parts.slice(0, i + 1).join('/');
      let next = dir.children!.get(name);
      if (next && next.kind !== 'dir')
        throw new Refused(
          path,
          next.kind === 'symlink'
            ? `it would be written through the symlink ${sofar}, which extraction never follows`
            : `it would be written below the file ${sofar}`,
        );
      if (!next) {
        this.count(sofar);
        await this.sink.mkdir(sofar);
        next = { kind: 'dir', layer, children: new Map() };
        dir.children!.set(name, next);
      }
      dir = next;
    }
    return dir;
  }

  private count(path: string): void {
    this.entries++;
    if (this.entries > this.limits.maxEntries)
      throw new Refused(path, `the image has more than ${this.limits.maxEntries} entries, the limit`);
  }

  private wanted(path: string): boolean {
    if (!this.only) return true;
    return this.only.some((p) => path === p || path.startsWith(`${p}/`) || p.startsWith(`${path}/`));
  }

  /** Removes what is at `name` in `parent` (a subtree, for a folder). */
  private async removeChild(parent: Node, name: string, path: string): Promise<void> {
    const node = parent.children!.get(name);
    if (!node) return;
    await this.sink.remove(path, node.kind);
    parent.children!.delete(name);
  }

  async entry(entry: ReadEntry, layer: number): Promise<void> {
    const raw = entry.path;
    const normal = normalizeEntryPath(raw);
    if (!normal.ok) throw new Refused(raw, normal.why);
    const path = normal.path;
    if (path === '') {
      // The root itself (`./`): nothing to make.
      this.count(raw);
      entry.resume();
      return;
    }
    if (!this.wanted(path)) {
      this.count(path);
      entry.resume();
      return;
    }
    this.count(path);
    const whiteout = whiteoutOf(path);
    if (whiteout.kind !== 'none') {
      entry.resume();
      if (whiteout.kind === 'invalid') throw new Refused(path, 'it is a whiteout that names nothing');
      if (whiteout.kind === 'meta') return;
      if (whiteout.kind === 'opaque') {
        const dir = whiteout.dir === '' ? this.root : await this.folder(whiteout.dir, layer);
        for (const [name, child] of [...dir.children!])
          if (child.layer < layer)
            await this.removeChild(dir, name, whiteout.dir === '' ? name : `${whiteout.dir}/${name}`);
        return;
      }
      const found = this.lookup(whiteout.path);
      if (found.blocked)
        throw new Refused(path, `it is a whiteout below something that is not a folder (${found.blocked})`);
      if (found.parent && found.node && found.node.layer < layer)
        await this.removeChild(found.parent, found.name, whiteout.path);
      return;
    }

    const parent = await this.parentOf(path, layer);
    const name = path.slice(path.lastIndexOf('/') + 1);
    const existing = parent.children!.get(name);
    switch (entry.type) {
      case 'Directory': {
        entry.resume();
        if (existing?.kind === 'dir') {
          existing.layer = layer;
          return;
        }
        await this.removeChild(parent, name, path);
        await this.sink.mkdir(path);
        parent.children!.set(name, { kind: 'dir', layer, children: new Map() });
        return;
      }
      case 'File':
      case 'OldFile':
      case 'ContiguousFile': {
        const size = entry.size ?? 0;
        if (size > this.limits.maxFileBytes)
          throw new Refused(
            path,
            `it is ${size} bytes, past the limit of ${this.limits.maxFileBytes} for one file${this.limits.maxFileBytesRaise ? ` (${this.limits.maxFileBytesRaise})` : ''}`,
          );
        this.bytes += size;
        if (this.bytes > this.limits.maxTotalBytes)
          throw new Refused(
            path,
            `the image's files go past the limit of ${this.limits.maxTotalBytes} bytes in all`,
          );
        await this.removeChild(parent, name, path);
        const data = await this.sink.writeFile(path, entry as AsyncIterable<Buffer>, FileMode(entry.mode));
        parent.children!.set(name, { kind: 'file', layer, size, ...(data && { data }) });
        this.files++;
        this.onFile?.(path, size);
        return;
      }
      case 'SymbolicLink': {
        entry.resume();
        const target = entry.linkpath ?? '';
        const destination = linkDestination(path, target);
        if (destination === undefined)
          throw new Refused(path, `it is a symlink to "${target}", which leads out of the image root`);
        const canonical = canonicalLinkTarget(path, destination);
        await this.removeChild(parent, name, path);
        await this.sink.symlink(path, canonical);
        parent.children!.set(name, { kind: 'symlink', layer, target: canonical });
        return;
      }
      case 'Link': {
        entry.resume();
        const target = normalizeEntryPath(entry.linkpath ?? '');
        if (!target.ok || target.path === '')
          throw new Refused(
            path,
            `it is a hard link to "${entry.linkpath ?? ''}": ${target.ok ? 'the root' : target.why}`,
          );
        const found = this.lookup(target.path);
        if (found.node?.kind !== 'file')
          throw new Refused(
            path,
            `it is a hard link to "${target.path}", which is not a file extracted before it`,
          );
        if (target.path === path) return;
        await this.removeChild(parent, name, path);
        await this.sink.link(path, target.path);
        parent.children!.set(name, {
          kind: 'file',
          layer,
          size: found.node.size ?? 0,
          ...(found.node.data && { data: found.node.data }),
        });
        this.files++;
        this.onFile?.(path, found.node.size ?? 0);
        return;
      }
      default:
        entry.resume();
        throw new Refused(
          path,
          `it is a ${entry.type === 'CharacterDevice' || entry.type === 'BlockDevice' ? 'device file' : entry.type === 'FIFO' ? 'FIFO' : `"${entry.type}" entry`}, which images of catalogs and bundles never need`,
        );
    }
  }

  /** The folder at `dir`, made when missing, refused when something else is there. */
  private async folder(dir: string, layer: number): Promise<Node> {
    const parent = await this.parentOf(dir, layer);
    const name = dir.slice(dir.lastIndexOf('/') + 1);
    const existing = parent.children!.get(name);
    if (existing?.kind === 'dir') return existing;
    if (existing) throw new Refused(dir, `it is a ${existing.kind} where an opaque whiteout needs a folder`);
    this.count(dir);
    await this.sink.mkdir(dir);
    const made: Node = { kind: 'dir', layer, children: new Map() };
    parent.children!.set(name, made);
    return made;
  }

  /** Everything extracted, for memory extraction. */
  collect(): ImageFiles {
    const out: ImageFiles = { files: new Map(), symlinks: new Map(), dirs: [] };
    const walk = (node: Node, prefix: string) => {
      for (const [name, child] of node.children ?? []) {
        const path = prefix === '' ? name : `${prefix}/${name}`;
        if (child.kind === 'dir') {
          out.dirs.push(path);
          walk(child, path);
        } else if (child.kind === 'file') out.files.set(path, child.data ?? Buffer.alloc(0));
        else out.symlinks.set(path, child.target!);
      }
    };
    walk(this.root, '');
    return out;
  }
}

/** Headers, padding and end blocks: a tar is larger than its files by at most this much per entry. */
const EntryOverhead = 3 * 512;

async function applyLayer(x: Extraction, layer: LayerSource, index: number, image: string): Promise<void> {
  const where = { image, digest: layer.digest };
  const refuse = (entry: string | undefined, message: string) =>
    new LayerEntryError(
      `${image}: layer ${layer.digest}${entry !== undefined ? `: entry "${entry}"` : ''}: ${message}; nothing was extracted`,
      where,
      entry,
    );
  if (layerCompression(layer.mediaType) === undefined)
    throw refuse(undefined, `its media type "${layer.mediaType.slice(0, 200)}" is not a tar layer`);
  const { Parser } = await import('tar');
  // Gzip and zstd are told by their first bytes as well as by the media type, as Docker reads
  // layers; a stream compressed twice is refused, since only one inflation is counted.
  const source = await layer.open();
  let failure: Error | undefined;
  let chain = Promise.resolve();
  const parser = new Parser({ strict: true, brotli: false, zstd: false } as ConstructorParameters<
    typeof Parser
  >[0]);
  const fail = (err: Error) => {
    failure ??= err;
    source.destroy(err);
  };
  parser.on('entry', (entry: ReadEntry) => {
    // Entries are handled one after another, in order: the parser emits the next only once
    // this one's data is read, and waits (backpressure) while it is not.
    chain = chain.then(async () => {
      if (failure) {
        entry.resume();
        return;
      }
      try {
        await x.entry(entry, index);
      } catch (err) {
        entry.resume();
        fail(err instanceof Refused ? refuse(err.entry, err.message) : (err as Error));
      }
    });
  });
  parser.on('warn', (_code: string, message: string | Error) => {
    fail(
      refuse(
        undefined,
        `it is not a valid tar archive: ${message instanceof Error ? message.message : message}`,
      ),
    );
  });
  let inflated = 0;
  let first = true;
  const limit = () => x.limits.maxTotalBytes + (x.limits.maxEntries + 2) * EntryOverhead;
  const guard = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      if (first && chunk.length >= 4) {
        first = false;
        if ((chunk[0] === 0x1f && chunk[1] === 0x8b) || chunk.readUInt32BE(0) === 0x28b52ffd) {
          done(refuse(undefined, 'it is compressed twice'));
          return;
        }
      }
      inflated += chunk.length;
      if (inflated > limit()) {
        done(
          refuse(undefined, `it inflates past the limit of ${x.limits.maxTotalBytes} bytes for the image`),
        );
        return;
      }
      done(null, chunk);
    },
  });
  const head = await peek(source);
  const compression =
    head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b
      ? 'gzip'
      : head.length >= 4 && head.readUInt32BE(0) === 0x28b52ffd
        ? 'zstd'
        : 'none';
  try {
    if (compression === 'gzip') await pipeline(source, createGunzip(), guard, parser);
    else if (compression === 'zstd') await pipeline(source, createZstdDecompress(), guard, parser);
    else await pipeline(source, guard, parser);
    await chain;
  } catch (err) {
    await chain.catch(() => undefined);
    if (failure) throw failure;
    if (err instanceof LayerEntryError || err instanceof OciError) throw err;
    if (
      (err as NodeJS.ErrnoException).code?.startsWith('Z_') ||
      (err as NodeJS.ErrnoException).code?.startsWith('ERR_ZSTD')
    )
      throw refuse(undefined, `it is not a valid ${compression} stream: ${(err as Error).message}`);
    if ((err as NodeJS.ErrnoException).code?.startsWith('TAR_'))
      throw refuse(undefined, `it is not a valid tar archive: ${(err as Error).message}`);
    throw refuse(undefined, `it cannot be read: ${(err as Error).message}`);
  }
  if (failure) throw failure;
}

/** The first bytes of `stream`, put back so that the stream still starts with them. */
async function peek(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const onReadable = () => {
      const chunk = stream.read() as Buffer | null;
      cleanup();
      if (chunk) stream.unshift(chunk);
      resolve(chunk ?? Buffer.alloc(0));
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.alloc(0));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

/**
 * Applies `layers` in order into `dest`, a folder that must not exist yet (its parent must).
 * On any failure, `dest` is removed whole and the error names the image, the layer and the entry.
 */
export async function extractLayers(
  layers: LayerSource[],
  dest: string,
  opts: ExtractOptions,
): Promise<ExtractSummary> {
  try {
    await mkdir(dest, 0o755);
  } catch (err) {
    throw new OciError(
      `${opts.image}: cannot extract into ${dest}: ${(err as NodeJS.ErrnoException).code === 'EEXIST' ? 'it exists already; extraction needs a fresh folder' : (err as Error).message}`,
      { image: opts.image },
    );
  }
  const x = new Extraction(diskSink(dest), opts.limits ?? DefaultExtractLimits, opts.only, opts.onFile);
  try {
    for (const [i, layer] of layers.entries()) await applyLayer(x, layer, i, opts.image);
  } catch (err) {
    await rm(dest, { recursive: true, force: true });
    throw err;
  }
  return { files: x.files, bytes: x.bytes };
}

/** Applies `layers` in order into memory, with the same checks and limits. */
export async function readLayers(layers: LayerSource[], opts: ExtractOptions): Promise<ImageFiles> {
  const x = new Extraction(memorySink, opts.limits ?? DefaultExtractLimits, opts.only);
  for (const [i, layer] of layers.entries()) await applyLayer(x, layer, i, opts.image);
  return x.collect();
}
