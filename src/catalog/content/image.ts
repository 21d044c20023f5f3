/**
 * A catalog image: `sourceType: grpc` with `spec.image`, the CatalogSource almost every OLM user
 * has. OLM v0 runs the image as a registry pod; Bosun pulls it in-process, as OLM v1's catalogd
 * does, and no Pod or Job is ever made for it.
 *
 * Each fetch resolves the reference to a digest first (one manifest request for a tag; none for
 * a reference pinned by digest). The store's content is keyed by that digest, so a poll that
 * finds the same digest pulls and parses nothing. A new digest is pulled (src/catalog/image.ts:
 * only the folder the `operators.operatorframework.io.index.configs.v1` label names, every layer
 * verified against its digest as it streams and extracted within the catalog limits and the
 * extraction's checks) straight into a fresh folder of the spool's, which becomes the content's:
 * each catalog file is parsed where it is, as soon as it is whole on disk, while the pull goes
 * on, and its bundle objects' text stays there until installed. The folder goes with the content,
 * or at once when the image turns out unusable. Credentials come from the CatalogSource's pull
 * Secrets (registry-access.ts). An OLM v1 ClusterCatalog's image is read by the same fetch
 * (fetchCatalogImage, given what both kinds name: the reference, the pull Secrets, the spool
 * folder's owner), with the manager's global pull Secret.
 *
 * What goes wrong is a value: the registry's side (unreachable, unknown tag or digest, refused
 * credentials, content that fails its digest) is RegistryServerError; an index with no image for
 * the platform read (linux/amd64) is ImagePlatformMissing, naming the platforms it has; the
 * image's side (not a file-based catalog image, an unsafe or oversized layer, FBC that does not
 * validate) is InvalidCatalog. Each message names the image and the cause, and the
 * controller keeps the last good content.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogSource } from '../../apis/operators.js';
import { CatalogImageLabel, ImageKind, imageKindOf, wrongKind } from '../../olm/image-kind.js';
import type { RegistryClient } from '../../oci/client.js';
import { DigestMismatchError, LayerEntryError, OciError, PlatformMissingError } from '../../oci/errors.js';
import { inspectImage } from '../../oci/image-config.js';
import { DefaultPlatform, type Platform } from '../../oci/manifest.js';
import { formatReference, type ImageReference, parseReference, withDigest } from '../../oci/reference.js';
import { formatProblem, type Problem } from '../../util/result.js';
import { escapeControls } from '../../util/terminal.js';
import { configsFolder, pullCatalogImage } from '../image.js';
import {
  isCatalogFileName,
  listCatalogFiles,
  type ParsedPart,
  partAdder,
  partParser,
  type Settled,
  settle,
  WORKER_THRESHOLD_BYTES,
} from '../load.js';
import { emptyConfig } from '../../apis/fbc.js';
import type { PartOfFile } from '../load-worker.js';
import { type CatalogFetcher, FetchFailureReason, type FetchOutcome } from './fetcher.js';
import { checkCatalog } from './parse.js';
import type { RegistryAccess, SecretOptions } from './registry-access.js';
import type { CatalogSpool } from './spool.js';
import type { CatalogContent, CatalogRef } from './store.js';

export function imageFetcher(deps: ImageFetcherDeps): CatalogFetcher {
  return {
    async fetch(source, previous, signal) {
      const got = await fetchCatalogImage(deps, imageRequestOf(source), previous?.digest, signal);
      if (!got.ok) return got;
      const { address, image } = got;
      // The same digest: the content the store holds stands, read again from nothing.
      const content = got.unchanged ? previous! : got.content;
      return { ok: true, content, address, image };
    },
  };
}

export interface ImageFetcherDeps {
  spool: Pick<CatalogSpool, 'folderFor' | 'remove'>;
  access: RegistryAccess;
  /** The platform whose image is read from a multi-platform catalog image (linux/amd64). */
  platform?: Platform;
}

/**
 * What a fetch of a catalog image needs, whichever kind names the image: a CatalogSource
 * (`spec.image`, its namespace's pull Secrets) or an OLM v1 ClusterCatalog
 * (`spec.source.image.ref`, the manager's global pull Secret). How often it is polled stays with
 * the controller of each kind.
 */
export interface ImageFetchRequest {
  /** The image reference as the object names it. */
  image: string;
  /** The field that names it, for messages (`spec.image`, `spec.source.image.ref`). */
  field: string;
  /** The pull Secrets to read, where they are, and how they are read (registry-access.ts). */
  secrets: { namespace: string; names: readonly string[] } & SecretOptions;
  /** Whose spool folder the image is extracted into. */
  catalog: CatalogRef;
}

/** A CatalogSource's image fetch, read as it always was. */
function imageRequestOf(source: CatalogSource): ImageFetchRequest {
  const namespace = source.metadata.namespace ?? '';
  return {
    image: source.spec.image ?? '',
    field: 'spec.image',
    secrets: { namespace, names: source.spec.secrets ?? [] },
    catalog: { namespace, name: source.metadata.name ?? '' },
  };
}

/**
 * An image fetch's outcome: new content, with the catalog files it was read from (paths in the
 * content's spool folder, in the order read); the same digest as before (nothing pulled or
 * parsed); or a failure.
 */
export type ImageFetchOutcome =
  | { ok: true; unchanged: false; content: CatalogContent; files: string[]; address: string; image: string }
  | { ok: true; unchanged: true; address: string; image: string }
  | Failure;

/**
 * Reads the catalog image `req` names, unless it still has `previousDigest`: the one seam the
 * CatalogSource fetcher above and the ClusterCatalog controller both go through.
 */
export async function fetchCatalogImage(
  deps: ImageFetcherDeps,
  req: ImageFetchRequest,
  previousDigest: string | undefined,
  signal: AbortSignal,
): Promise<ImageFetchOutcome> {
  const address = req.image;
  let ref: ImageReference;
  try {
    ref = parseReference(address);
  } catch (err) {
    return {
      ok: false,
      reason: FetchFailureReason.SpecInvalidError,
      message: `${req.field}: ${(err as Error).message}`,
      address,
    };
  }
  const { namespace, names, ...secretOptions } = req.secrets;
  const opened = await deps.access.clientFor(namespace, names, secretOptions);
  if (!opened.ok)
    return {
      ok: false,
      reason: FetchFailureReason.RegistryServerError,
      message: `image ${address}: ${opened.message}`,
      address,
    };
  const { client } = opened;
  try {
    return await pullAndParse(deps, client, ref, req, previousDigest, signal);
  } catch (err) {
    if (!(err instanceof OciError)) throw err;
    return { ok: false, reason: reasonOf(err), message: messageOf(err, address), address };
  } finally {
    await client.close();
  }
}

type Deps = ImageFetcherDeps;
type Failure = Extract<FetchOutcome, { ok: false }>;

/** The named steps of one fetch: resolve → same digest? → inspect → pull → spool → parse. */
async function pullAndParse(
  deps: Deps,
  client: RegistryClient,
  ref: ImageReference,
  req: ImageFetchRequest,
  previousDigest: string | undefined,
  signal: AbortSignal,
): Promise<ImageFetchOutcome> {
  const address = req.image;
  // The digest the reference names now: the index's for a multi-platform image, so the store's
  // digest (and the status) names what the tag points at, whatever the platform.
  const digest = ref.digest ?? (await client.resolve(ref)).digest;
  const pinned = formatReference(withDigest({ registry: ref.registry, repository: ref.repository }, digest));
  if (previousDigest === digest) return { ok: true, unchanged: true, address, image: pinned };
  signal.throwIfAborted();

  // Pinned from here on: a tag moved meanwhile cannot mix two images in one fetch.
  const at = withDigest(ref, digest);
  const inspected = await inspectImage(client, at, deps.platform ?? DefaultPlatform);
  const kind = imageKindOf(inspected.config.labels);
  if (kind === ImageKind.SqliteCatalog)
    return invalid(
      address,
      `image ${pinned}: is a sqlite catalog image (label ${CatalogImageLabel.Database}), a format OLM deprecated; Bosun reads file-based catalogs: convert it with \`opm migrate\` and \`opm generate dockerfile\``,
    );
  if (kind !== ImageKind.Catalog)
    return invalid(address, `image ${pinned}: ${wrongKind(ImageKind.Catalog, inspected.config.labels)}`);
  signal.throwIfAborted();

  // The image's files are extracted straight into the spool and parsed where they are: the
  // folder is the content's, kept while the store holds it (its bundle objects' text is read
  // from those files when installed), and removed with it or when it turns out unusable.
  const dest = deps.spool.folderFor(req.catalog);
  const label = inspected.config.labels[CatalogImageLabel.Configs] ?? '';
  const folder = configsFolder(label);
  // Problems name a file as it is in the image: `reg/repo@sha256:...:/configs/etcd/catalog.json`.
  const part = (path: string, length: number): PartOfFile => ({
    name: `${pinned}:/${path}`,
    file: join(dest, path),
    base: 0,
    length,
  });
  // Each catalog file is parsed as soon as it is extracted, while the pull goes on (in a load
  // worker where the image is large): the pull and the parse then take the two cores together.
  // A path extracted again (a later layer, or a later entry of the same one) replaces its parse;
  // only the parses of what the listing finds at the end are used, in the listing's order.
  const compressed = inspected.image.manifest.layers.reduce((n, l) => n + l.size, 0);
  const parser = partParser({ inThread: compressed < WORKER_THRESHOLD_BYTES / 4 });
  const parses = new Map<string, Promise<Settled<ParsedPart>>>();
  const config = emptyConfig();
  const problems: Problem[] = [];
  const adder = partAdder(config, problems);
  const inConfigs = (path: string) => !folder.ok || folder.path === '' || path.startsWith(`${folder.path}/`);
  let kept = false;
  try {
    const pulled = await pullCatalogImage(client, at, dest, {
      resolved: inspected,
      ...(deps.platform && { platform: deps.platform }),
      onFile: (path, size) => {
        if (inConfigs(path) && isCatalogFileName(path))
          parses.set(path, settle(parser.parse(part(path, size)).then((p) => adder.keep(p))));
      },
    });
    const rels = (await listCatalogFiles(pulled.configs, problems)).sort();
    if (problems.length)
      return invalid(address, `image ${pinned}: ${problems.slice(0, 5).map(formatProblem).join('; ')}`);
    const files: string[] = [];
    for (const rel of rels) {
      const path = pulled.folder === '' ? rel : `${pulled.folder}/${rel}`;
      const p = part(path, -1);
      files.push(p.file);
      const got = await (parses.get(path) ??
        // Not told as extracted (which every file is): read now, its size as it is on disk.
        settle(lstat(p.file).then((st) => parser.parse({ ...p, length: st.size }))));
      if (!got.ok) {
        adder.failed([p], got.error);
        break;
      }
      adder.add(got.value, p);
    }
    // The store's digest is the image's: what a poll compares before it pulls anything.
    const checked = checkCatalog(config, problems, digest, `image ${pinned} (${label})`);
    if (!checked.ok) return invalid(address, checked.message);
    kept = true;
    return {
      ok: true,
      unchanged: false,
      content: { config, digest, payloadFile: dest },
      files,
      address,
      image: pinned,
    };
  } finally {
    await parser.close();
    if (!kept) await deps.spool.remove(dest);
  }
}

/** The image's labels, entry names and FBC are its author's text: escaped, so a status or an Event shown in a terminal cannot drive it. */
function invalid(address: string, message: string): Failure {
  return { ok: false, reason: FetchFailureReason.InvalidCatalog, message: escapeControls(message), address };
}

/**
 * The image's fault or the registry's. A layer entry refused by extraction (a path with `..`, a
 * link out, a device, a file or image over the limits) or an image that is not a catalog image is
 * the image's; content that fails its digest is the registry's (it served other bytes than it
 * named), as is everything that happens on the wire.
 */
function reasonOf(err: OciError): FetchFailureReason {
  // Neither side's fault: the image is built for other platforms only.
  if (err instanceof PlatformMissingError) return FetchFailureReason.ImagePlatformMissing;
  if (err instanceof DigestMismatchError) return FetchFailureReason.RegistryServerError;
  if (err instanceof LayerEntryError) return FetchFailureReason.InvalidCatalog;
  // pullCatalogImage's own refusals of what the image says (its configs label, the folder it names).
  if (/does not name a folder|has no folder/.test(err.message)) return FetchFailureReason.InvalidCatalog;
  return FetchFailureReason.RegistryServerError;
}

/** The error's message, led by the image as the CatalogSource names it unless it names it already. */
function messageOf(err: OciError, address: string): string {
  const message = escapeControls(err.message);
  return message.includes(address) ? `image ${message}` : `image ${address}: ${message}`;
}
