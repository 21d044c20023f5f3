/**
 * A catalog read from a registry server: `sourceType: grpc` with `spec.address`, the `host:port`
 * of an `opm serve` (src/catalog/grpc reads it over operator-registry's gRPC API, within its
 * limits and deadlines, and checks what it says).
 *
 * What the server said is then kept as any fetched catalog is: written to the spool as JSON
 * documents and read back from there, so the bundles' manifests stay on disk until a bundle is
 * installed, the digest is that of the documents, and a poll that finds the same catalog parses
 * nothing. A CatalogSource that also names an image is read from the image (OLM's choice).
 */
import type { DeclarativeConfig } from '../../apis/fbc.js';
import type { CatalogSource } from '../../apis/operators.js';
import type { fetchRegistryCatalog, RegistryFailureKind } from '../grpc/fetch.js';
import { type CatalogFetcher, FetchFailureReason, type FetchOutcome } from './fetcher.js';
import { parseSpooled } from './parse.js';
import type { CatalogSpool, Spooled } from './spool.js';
import type { CatalogContent } from './store.js';

/** The registry client: fetchRegistryCatalog, or a stand-in in tests. */
export type RegistryReader = (
  address: string,
  opts: { signal: AbortSignal },
) => ReturnType<typeof fetchRegistryCatalog>;

export function grpcFetcher(deps: {
  spool: Pick<CatalogSpool, 'writeStream' | 'remove'>;
  read?: RegistryReader;
}): CatalogFetcher {
  const read = deps.read ?? readRegistry;
  return {
    fetch: (source, previous, signal) => fetchGrpc(deps.spool, read, source, previous, signal),
  };
}

/**
 * The gRPC client (@grpc/grpc-js and protobufjs, 3 MiB of the manager's memory once loaded) is
 * loaded when a registry server is first read: most managers never read one.
 */
const readRegistry: RegistryReader = async (address, opts) =>
  (await import('../grpc/fetch.js')).fetchRegistryCatalog(address, opts);

async function fetchGrpc(
  spool: Pick<CatalogSpool, 'writeStream' | 'remove'>,
  read: RegistryReader,
  source: CatalogSource,
  previous: CatalogContent | undefined,
  signal: AbortSignal,
): Promise<FetchOutcome> {
  const address = source.spec.address ?? '';
  const answer = await read(address, { signal });
  if (!answer.ok) {
    const { kind, message } = answer.errors;
    return { ok: false, reason: reasonOf(kind), message, address };
  }
  // The address is host:port now (the client refuses anything else), so it names the source as is.
  const where = `registry ${address}`;
  const ref = { namespace: source.metadata.namespace ?? '', name: source.metadata.name ?? '' };
  let spooled: Spooled;
  try {
    spooled = await spool.writeStream(ref, where, documents(answer.value.config));
  } catch (err) {
    // Only what the limit of a catalog file refuses: the client's budget is the same limit, but
    // its count is of the bytes on the wire.
    return {
      ok: false,
      reason: FetchFailureReason.RegistryServerError,
      message: `${where}: ${(err as Error).message}`,
      address,
    };
  }
  const parsed = await parseSpooled(spool, spooled, previous, where);
  if (!parsed.ok)
    return { ok: false, reason: FetchFailureReason.InvalidCatalog, message: parsed.message, address };
  return { ok: true, content: parsed.content, address };
}

/** A registry's failure as the CatalogSource's status says it: OLM's reasons where one fits. */
function reasonOf(kind: RegistryFailureKind): FetchFailureReason {
  switch (kind) {
    // By value: the kinds' object is in the module loaded only to read a registry.
    case 'Address':
      return FetchFailureReason.SpecInvalidError;
    case 'InvalidCatalog':
      return FetchFailureReason.InvalidCatalog;
    default:
      return FetchFailureReason.RegistryServerError;
  }
}

/** The catalog as JSON documents, one a line, in the order the client gives them (its own, stable). */
async function* documents(config: DeclarativeConfig): AsyncIterable<Uint8Array> {
  const { packages, channels, bundles, deprecations, others } = config;
  for (const docs of [packages, channels, bundles, deprecations, others] as readonly unknown[][])
    for (const doc of docs) yield Buffer.from(`${JSON.stringify(doc)}\n`);
}
