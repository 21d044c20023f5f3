/**
 * File-based catalog images, as opm's generated Dockerfile makes them (`ADD catalog /configs`,
 * label `operators.operatorframework.io.index.configs.v1=/configs`) and OLM v1's catalogd and
 * `opm render` read them: the FBC is the folder the configs label names.
 *
 * Built from the files the catalog loader reads (every catalog file below the folder, honouring
 * `.indexignore`), byte for byte, under `/configs/`. No opm binary is put in: Bosun reads a
 * catalog in-process, so the image is the catalog and nothing else (and so OLM v0, which runs a
 * catalog image as an `opm serve` pod, cannot run it).
 *
 * Read from a registry by digest: only the configs folder is extracted, into a fresh folder,
 * within the catalog size limits (limits.ts) and the extraction's checks (oci/extract.ts), and
 * loaded with the catalog loader, as a folder on disk is.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeclarativeConfig } from '../apis/fbc.js';
import type { FileMap } from '../util/tar-write.js';
import { pinnedReference } from '../bundle/image.js';
import {
  CatalogImageLabel,
  DefaultConfigsDir,
  ImageKind,
  imageKindOf,
  labelText,
  wrongKind,
} from '../olm/image-kind.js';
import { type BuiltImage, buildImage } from '../oci/build.js';
import type { RegistryClient, ResolvedImage } from '../oci/client.js';
import { OciError } from '../oci/errors.js';
import { DefaultExtractLimits, type ExtractLimits, extractLayers } from '../oci/extract.js';
import { type InspectedImage, inspectImage } from '../oci/image-config.js';
import { normalizeEntryPath } from '../oci/layer-paths.js';
import type { Platform } from '../oci/manifest.js';
import { registryLayers } from '../oci/pull.js';
import { formatReference, type ImageReference } from '../oci/reference.js';
import { readFileNoFollow } from '../util/confined-fs.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { CatalogLimits, catalogFileLimitRaise, maxCatalogFileBytes } from './limits.js';
import { listCatalogFiles, loadCatalog } from './load.js';

/**
 * The catalog files under `dir` that the loader reads, by path relative to it, read without
 * following links (the loader refuses links it would read; so does this).
 */
export async function readCatalogFiles(dir: string): Promise<Result<FileMap>> {
  const problems: Problem[] = [];
  const rels = await listCatalogFiles(dir, problems);
  if (problems.length) return fail(problems);
  const files: FileMap = new Map();
  for (const rel of rels) {
    try {
      files.set(rel, await readFileNoFollow(join(dir, rel)));
    } catch (err) {
      problems.push({ file: join(dir, rel), message: `cannot read: ${(err as Error).message}` });
    }
  }
  return problems.length ? fail(problems) : ok(files);
}

/** The image of a catalog's files (relative to the catalog root) under `/configs/`, with the configs label. */
export function buildCatalogImage(files: FileMap, platform?: Platform): BuiltImage {
  const root = DefaultConfigsDir.slice(1);
  return buildImage({
    files: new Map([...files].map(([rel, data]) => [`${root}/${rel}`, data])),
    labels: { [CatalogImageLabel.Configs]: DefaultConfigsDir },
    createdBy: 'bosun catalog build',
    ...(platform && { platform }),
  });
}

/** What a catalog image may hold: the catalog limits, per file and in all. */
export function catalogExtractLimits(env: NodeJS.ProcessEnv = process.env): ExtractLimits {
  return {
    maxFileBytes: maxCatalogFileBytes(env),
    maxFileBytesRaise: catalogFileLimitRaise,
    maxTotalBytes: CatalogLimits.maxCatalogBytes,
    maxEntries: DefaultExtractLimits.maxEntries,
  };
}

export interface PulledCatalog {
  image: ResolvedImage;
  /** `registry/repository@sha256:...`. */
  pinned: string;
  labels: Record<string, string>;
  /** The folder holding the image's FBC, below the folder it was extracted into. */
  configs: string;
  /** That folder's path in the image, from its root (`configs`; '' for the root itself). */
  folder: string;
}

/**
 * Extracts the FBC of the catalog image `ref` names into `dest` (a folder that must not exist
 * yet; its parent must). An image that is not a file-based catalog image is refused, naming what
 * it is; so is a configs label that leads out of the image root, and an image without the folder
 * its label names. On failure `dest` is gone.
 */
export async function pullCatalogImage(
  client: RegistryClient,
  ref: ImageReference,
  dest: string,
  opts: {
    platform?: Platform;
    limits?: ExtractLimits;
    resolved?: InspectedImage;
    /** Told of each file as it is extracted (see ExtractOptions.onFile). */
    onFile?: (path: string, size: number) => void;
  } = {},
): Promise<PulledCatalog> {
  const { image, config } = opts.resolved ?? (await inspectImage(client, ref, opts.platform));
  const name = formatReference(image.ref);
  const where = { registry: ref.registry, repository: ref.repository, image: name };
  const kind = imageKindOf(config.labels);
  if (kind === ImageKind.SqliteCatalog)
    throw new OciError(
      `${name}: is a sqlite catalog image (label ${CatalogImageLabel.Database}), a format OLM deprecated; Bosun reads file-based catalogs: convert it with \`opm migrate ${formatReference(ref)} <dir>\``,
      where,
    );
  if (kind !== ImageKind.Catalog)
    throw new OciError(`${name}: ${wrongKind(ImageKind.Catalog, config.labels)}`, where);
  const label = config.labels[CatalogImageLabel.Configs]!;
  const folder = configsFolder(label);
  if (!folder.ok)
    throw new OciError(
      `${name}: label ${CatalogImageLabel.Configs}="${labelText(label, 200)}" does not name a folder inside the image: ${folder.why}`,
      where,
    );
  const limits = opts.limits ?? catalogExtractLimits();
  await extractLayers(registryLayers(client, image, limits), dest, {
    image: name,
    limits,
    ...(folder.path !== '' && { only: [folder.path] }),
    ...(opts.onFile && { onFile: opts.onFile }),
  });
  const configs = join(dest, folder.path);
  if (!(await stat(configs).catch(() => undefined))?.isDirectory()) {
    await rm(dest, { recursive: true, force: true });
    throw new OciError(
      `${name}: has no folder ${labelText(label, 200)}, which its label ${CatalogImageLabel.Configs} names`,
      where,
    );
  }
  return { image, pinned: pinnedReference(image), labels: config.labels, configs, folder: folder.path };
}

/**
 * The folder a configs label names, as a path from the image root. The label is a path inside the
 * image, absolute as opm writes it (`/configs`) or relative to the root; opm joins it to the folder
 * it unpacked into, where `..` would climb out, so a label with `..` is refused instead.
 */
export function configsFolder(label: string): ReturnType<typeof normalizeEntryPath> {
  return normalizeEntryPath(label.replace(/^\/+/, ''));
}

export interface OpenedCatalog extends PulledCatalog, AsyncDisposable {
  /** The loaded catalog; bundle objects' manifests are read from the extracted files while open. */
  loaded: Result<DeclarativeConfig>;
}

/**
 * Pulls a catalog image into a temporary folder and loads it; the folder goes when the result is
 * disposed (`await using`), so use the catalog before then.
 */
export async function openCatalogImage(
  client: RegistryClient,
  ref: ImageReference,
  opts: { platform?: Platform; limits?: ExtractLimits; resolved?: InspectedImage } = {},
): Promise<OpenedCatalog> {
  const temp = await mkdtemp(join(tmpdir(), 'bosun-catalog-image-'));
  const dispose = () => rm(temp, { recursive: true, force: true });
  try {
    const pulled = await pullCatalogImage(client, ref, join(temp, 'image'), opts);
    const loaded = await loadCatalog(pulled.configs);
    return {
      ...pulled,
      loaded: loaded.ok ? loaded : fail(imageProblems(loaded.errors, pulled)),
      [Symbol.asyncDispose]: dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/**
 * Problems that name files of the temporary folder, named as files of the image instead:
 * `quay.io/org/catalog@sha256:...:/configs/etcd/catalog.json`.
 */
export function imageProblems(
  problems: Problem[],
  pulled: Pick<PulledCatalog, 'configs' | 'pinned' | 'folder'>,
): Problem[] {
  return problems.map((p) =>
    p.file?.startsWith(pulled.configs)
      ? { ...p, file: `${pulled.pinned}:${join('/', pulled.folder, p.file.slice(pulled.configs.length))}` }
      : p,
  );
}
