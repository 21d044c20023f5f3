/**
 * The grpc fetcher (`sourceType: grpc` with `spec.address`) over a stand-in registry client: each
 * kind of registry failure is the status reason OLM gives it; what a registry serves is kept as
 * any fetched catalog (spooled, its manifests left in the file, the same content given back
 * unparsed), and read again by the catalog loader, so what the client hands over is held to the
 * same rules as a file. The real client against `opm serve` and hostile servers is covered by
 * test/integration/catalog/registry-grpc.test.ts and the CatalogSource integration tests.
 */
import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BundleDoc, DeclarativeConfig } from '../../../../src/apis/fbc.js';
import { emptyConfig } from '../../../../src/apis/fbc.js';
import type { CatalogSource } from '../../../../src/apis/operators.js';
import { FetchFailureReason, type FetchOutcome } from '../../../../src/catalog/content/fetcher.js';
import { grpcFetcher, type RegistryReader } from '../../../../src/catalog/content/grpc.js';
import { CatalogSpool } from '../../../../src/catalog/content/spool.js';
import type { CatalogContent } from '../../../../src/catalog/content/store.js';
import { RegistryFailureKind } from '../../../../src/catalog/grpc/fetch.js';
import { payloadOf, withPayloads } from '../../../../src/catalog/payloads.js';
import { tempDir } from '../../../support/temp-dir.js';
import { sampleBundleDoc } from '../../install/support.js';

const address = 'registry.olm.svc:50051';
const source: CatalogSource = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { namespace: 'olm', name: 'registry' },
  spec: { sourceType: 'grpc', address },
};
const never = new AbortController().signal;

/** The sample operator as a registry serves it: its manifests inline. */
function served(bundle: BundleDoc = sampleBundleDoc()): DeclarativeConfig {
  const config = emptyConfig();
  config.packages.push({ schema: 'olm.package', name: bundle.package, defaultChannel: 'stable' });
  config.channels.push({
    schema: 'olm.channel',
    package: bundle.package,
    name: 'stable',
    entries: [{ name: bundle.name }],
  });
  config.bundles.push(bundle);
  return config;
}

/** A registry client that answers `config` and records what it was asked. */
function registry(config: () => DeclarativeConfig, asked: { address: string; signal: AbortSignal }[] = []) {
  const read: RegistryReader = async (addr, opts) => {
    asked.push({ address: addr, signal: opts.signal });
    return {
      ok: true,
      value: { config: config(), warnings: [], received: { bytes: 0, messages: 0, calls: 0 } },
    };
  };
  return read;
}

function content(outcome: FetchOutcome): CatalogContent {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.content;
}

let spool: CatalogSpool;
beforeEach(async () => {
  spool = await CatalogSpool.open(await tempDir('bosun-grpc-fetcher-'));
});
afterEach(async () => {
  await spool.close();
});
const spooled = async () => (await readdir(spool.dir)).filter((f) => f !== 'owner');

describe('grpcFetcher', () => {
  it.each(Object.values(RegistryFailureKind))(
    'reports a registry failure of kind %s with OLM’s reason',
    async (kind) => {
      const message = `registry ${address}: what went wrong`;
      const read: RegistryReader = async () => ({
        ok: false,
        errors: { kind, address, message, problems: [] },
      });
      const reason =
        kind === RegistryFailureKind.Address
          ? FetchFailureReason.SpecInvalidError
          : kind === RegistryFailureKind.InvalidCatalog
            ? FetchFailureReason.InvalidCatalog
            : FetchFailureReason.RegistryServerError;
      expect(await grpcFetcher({ spool, read }).fetch(source, undefined, never)).toEqual({
        ok: false,
        reason,
        message,
        address,
      });
      expect(await spooled()).toEqual([]);
    },
  );

  it('asks the registry at spec.address with the fetch’s signal, and keeps its manifests in the spool', async () => {
    const asked: { address: string; signal: AbortSignal }[] = [];
    const stop = new AbortController();
    const outcome = await grpcFetcher({ spool, read: registry(served, asked) }).fetch(
      source,
      undefined,
      stop.signal,
    );
    expect(asked).toEqual([{ address, signal: stop.signal }]);
    expect(outcome).toMatchObject({ ok: true, address });
    const { config, payloadFile } = content(outcome);
    expect(await spooled()).toEqual([payloadFile!.split('/').pop()]);
    const bundle = config.bundles[0]!;
    expect(bundle.properties.some((p) => payloadOf(p.value)?.storedIn === payloadFile)).toBe(true);
    expect((await withPayloads(bundle)).properties).toEqual(sampleBundleDoc().properties);
  });

  it('gives back the content it holds when the registry serves the same catalog again', async () => {
    const fetcher = grpcFetcher({ spool, read: registry(served) });
    const held = content(await fetcher.fetch(source, undefined, never));
    // New objects, the same catalog: the same digest, nothing parsed, the copy removed.
    expect(content(await fetcher.fetch(source, held, never))).toBe(held);
    expect(await spooled()).toHaveLength(1);
    const changed = sampleBundleDoc();
    changed.properties = changed.properties.slice(0, -1);
    const next = content(
      await grpcFetcher({ spool, read: registry(() => served(changed)) }).fetch(source, held, never),
    );
    expect(next.digest).not.toBe(held.digest);
  });

  // The client checks what a server says; the loader checks it again, as any catalog text. A
  // bundle object's data that is not a string (the shape of a stored-payload handle, or any
  // other) never becomes something Bosun reads a file for.
  it.each<[string, unknown]>([
    [
      'a stored-payload handle',
      { storedIn: '/etc/passwd', offset: 0, length: 64, identity: { ino: 1, size: 1, mtimeMs: 0 } },
    ],
    ['a number', 7],
    ['a list', ['a', 'b']],
    ['null', null],
  ])('refuses a catalog whose bundle object data is %s, keeping no file', async (_, data) => {
    const bundle = sampleBundleDoc();
    bundle.properties = [...bundle.properties, { type: 'olm.bundle.object', value: { data } }];
    const outcome = await grpcFetcher({ spool, read: registry(() => served(bundle)) }).fetch(
      source,
      undefined,
      never,
    );
    expect(outcome).toMatchObject({ ok: false, reason: FetchFailureReason.InvalidCatalog, address });
    if (!outcome.ok) {
      expect(outcome.message).toMatch(
        /^registry registry\.olm\.svc:50051 is not a valid file-based catalog: /,
      );
      expect(outcome.message).toContain(`properties[${bundle.properties.length - 1}].value.data`);
      expect(outcome.message).not.toContain('root:');
    }
    expect(await spooled()).toEqual([]);
  });
});
