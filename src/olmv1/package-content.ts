/**
 * One package's file-based catalog documents as OLM v1's resolver sees them. operator-controller
 * v1.2.0 caches a ClusterCatalog's content one file per document (`<package>/<schema>/<name>.json`,
 * catalogmetadata/cache) and loads a package's folder with opm's `declcfg.LoadFS`, so:
 * a document named like an earlier one of the same schema replaces it, a package keeps one
 * `olm.deprecations` (the last), and bundles come in file-name order, which breaks ties between
 * equal versions. (v1 loads the files concurrently, so its order there is not fixed; Bosun's is.)
 * `readServedPackage` reads those documents from a served ClusterCatalog through its index.
 */
import { open } from 'node:fs/promises';
import type { BundleDoc, ChannelDoc, DeprecationsDoc } from '../apis/fbc.js';
import { Schema } from '../apis/fbc.js';
import { type MetaIndex, selectSections } from '../catalog/content/jsonl.js';

export interface PackageContent {
  /** Whether the catalog holds any document of the package (v1's `isFBCEmpty`, negated). */
  found: boolean;
  channels: ChannelDoc[];
  /** In name order. */
  bundles: BundleDoc[];
  deprecation?: DeprecationsDoc;
}

type Doc = { schema?: unknown; name?: unknown; package?: unknown };

/** The package's content from its documents (in catalog file order). */
export function packageContent(docs: readonly unknown[]): PackageContent {
  const bySchema = new Map<string, Map<string, unknown>>();
  for (const doc of docs) {
    if (typeof doc !== 'object' || doc === null) continue;
    const { schema, name } = doc as Doc;
    if (typeof schema !== 'string') continue;
    // The cache names a document without a name after its schema.
    const key = typeof name === 'string' && name !== '' ? name : schema;
    const files = bySchema.get(schema) ?? new Map<string, unknown>();
    files.set(key, doc);
    bySchema.set(schema, files);
  }
  const ofSchema = <T>(schema: string): T[] =>
    [...(bySchema.get(schema) ?? new Map<string, unknown>()).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, doc]) => doc as T);
  return {
    found: bySchema.size > 0,
    channels: ofSchema<ChannelDoc>(Schema.Channel),
    bundles: ofSchema<BundleDoc>(Schema.Bundle),
    deprecation: ofSchema<DeprecationsDoc>(Schema.Deprecations)[0],
  };
}

/**
 * The documents of package `pkg` in a served catalog's JSON Lines file, in file order: those
 * whose `package` is `pkg`, and its `olm.package` (named `pkg`).
 */
export async function readServedPackage(
  served: { file: string; index: MetaIndex },
  pkg: string,
): Promise<unknown[]> {
  const sections = [
    ...new Set([
      ...selectSections(served.index, { package: pkg }),
      ...selectSections(served.index, { schema: Schema.Package, name: pkg }),
    ]),
  ].sort((a, b) => a.offset - b.offset);
  if (sections.length === 0) return [];
  await using file = await open(served.file, 'r');
  const docs: unknown[] = [];
  for (const s of sections) {
    const buf = Buffer.alloc(s.length);
    const { bytesRead } = await file.read(buf, 0, s.length, s.offset);
    if (bytesRead !== s.length)
      throw new Error(
        `${served.file}: the document at byte ${s.offset} is cut short (the catalog changed while read)`,
      );
    docs.push(JSON.parse(buf.toString('utf8')));
  }
  return docs;
}
