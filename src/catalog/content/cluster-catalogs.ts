/**
 * The content of OLM v1's ClusterCatalogs: the port the ClusterCatalog controller is given. A
 * ClusterCatalog's image is read by the same fetch as a CatalogSource's (image.ts's
 * fetchCatalogImage: resolved to a digest, pulled only when that changed, every layer verified,
 * extracted within the limits, parsed and validated), with the manager's global pull Secret if
 * it has one (catalogd pulls every ClusterCatalog with its one global pull secret too, and
 * without credentials while that Secret does not exist; one that exists but cannot be read or is
 * malformed is an error naming it). New
 * content is then written as catalogd serves it (jsonl.ts) and the extracted files are let go:
 * what is served is that one file and its index (served.ts).
 */
import { type ImageFetcherDeps, type ImageFetchOutcome, fetchCatalogImage } from './image.js';
import { writeCatalogJsonl } from './jsonl.js';
import type { ServedCatalog, ServedCatalogs } from './served.js';
import type { CatalogSpool } from './spool.js';
import type { CatalogContent, CatalogRef, CatalogStore } from './store.js';

/** A pull Secret by namespace and name (catalogd's `--global-pull-secret`). */
export interface SecretRef {
  namespace: string;
  name: string;
}

export interface ClusterCatalogContent {
  served: ServedCatalogs;
  /**
   * The served catalogs' bundles, for installs (a ClusterExtension's InstallPlan finds its bundle
   * here, by the ref `{ namespace: '', name }`): the content each was served from, with its
   * bundles' inline manifests left in the spooled file that `prepare` keeps.
   */
  bundles: Pick<CatalogStore, 'get' | 'set' | 'delete'>;
  /** Reads the image `image` of ClusterCatalog `name`, unless it still has `previousDigest`. */
  fetch(
    name: string,
    image: string,
    previousDigest: string | undefined,
    signal: AbortSignal,
  ): Promise<ImageFetchOutcome>;
  /**
   * Makes fetched content servable: its catalog files written as JSON Lines with their index,
   * and the extracted folder removed (whether that worked or not). The content's spooled
   * manifests (`payloadFile`) are kept for `bundles`, unless this fails.
   */
  prepare(
    name: string,
    content: CatalogContent,
    files: readonly string[],
  ): Promise<Pick<ServedCatalog, 'file' | 'size' | 'index' | 'digest'>>;
  /** Where `name`'s catalogd API is served (`status.urls.base`), or undefined when the manager serves no HTTP. */
  baseUrl(name: string): string | undefined;
}

export function clusterCatalogContent(deps: {
  spool: Pick<CatalogSpool, 'folderFor' | 'fileFor' | 'remove'>;
  access: ImageFetcherDeps['access'];
  served: ServedCatalogs;
  bundles: Pick<CatalogStore, 'get' | 'set' | 'delete'>;
  globalPullSecret?: SecretRef;
  baseUrl: (name: string) => string | undefined;
}): ClusterCatalogContent {
  const secret = deps.globalPullSecret;
  const refOf = (name: string): CatalogRef => ({ namespace: '', name });
  return {
    served: deps.served,
    bundles: deps.bundles,
    fetch: (name, image, previousDigest, signal) =>
      fetchCatalogImage(
        { spool: deps.spool, access: deps.access },
        {
          image,
          field: 'spec.source.image.ref',
          secrets: secret
            ? {
                namespace: secret.namespace,
                names: [secret.name],
                field: () => 'the global pull secret',
                missingIsAnonymous: true,
              }
            : { namespace: '', names: [] },
          catalog: refOf(name),
        },
        previousDigest,
        signal,
      ),
    async prepare(name, content, files) {
      const file = deps.spool.fileFor(refOf(name), '.jsonl');
      try {
        const written = await writeCatalogJsonl(files, file);
        return { file, size: written.size, index: written.index, digest: content.digest };
      } catch (err) {
        await deps.spool.remove(file);
        if (content.payloadFile) await deps.spool.remove(content.payloadFile);
        throw err;
      }
    },
    baseUrl: deps.baseUrl,
  };
}
