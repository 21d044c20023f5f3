/**
 * Serialising catalog documents deterministically, in the shapes `opm` writes: YAML documents
 * each introduced by `---` with keys sorted, or JSON documents indented by four spaces with the
 * top-level fields in opm's order. Per package the order is the package, its channels by name,
 * its bundles by name, its deprecations, then other documents by schema.
 */
import type { DeclarativeConfig } from '../apis/fbc.js';
import { toYaml } from '../bundle/yaml.js';
import { isGoBase64 } from '../bundle/manifest.js';
import { isBase64Alphabet } from '../util/base64.js';
import { isRecord } from '../util/record.js';
import { payloadOf, withPayloadsAll } from './payloads.js';

export const CatalogFormat = {
  YAML: 'yaml',
  JSON: 'json',
} as const;
export type CatalogFormat = (typeof CatalogFormat)[keyof typeof CatalogFormat];

export const catalogFileName = (format: CatalogFormat): string => `catalog.${format}`;

/** Documents that belong to no package (an `olm.*` extension without `package`) go here, as opm does. */
export const GlobalPackageDir = '__global';

type Doc = Record<string, unknown>;

const byName = (a: { name?: unknown }, b: { name?: unknown }) => {
  const x = String(a.name ?? '');
  const y = String(b.name ?? '');
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Documents grouped by package (sorted by package name), each group in write order. */
export function documentsByPackage(cfg: DeclarativeConfig): Map<string, Doc[]> {
  const groups = new Map<string, { pkg: Doc[]; ch: Doc[]; b: Doc[]; dep: Doc[]; other: Doc[] }>();
  const group = (name: string) => {
    let g = groups.get(name);
    if (!g) {
      g = { pkg: [], ch: [], b: [], dep: [], other: [] };
      groups.set(name, g);
    }
    return g;
  };
  for (const p of cfg.packages) group(String(p.name ?? '')).pkg.push(p as unknown as Doc);
  for (const c of cfg.channels) group(String(c.package ?? '')).ch.push(c as unknown as Doc);
  for (const b of cfg.bundles) group(String(b.package ?? '')).b.push(b as unknown as Doc);
  for (const d of cfg.deprecations) group(String(d.package ?? '')).dep.push(d as unknown as Doc);
  for (const o of cfg.others) group(typeof o.package === 'string' ? o.package : '').other.push(o as Doc);
  const out = new Map<string, Doc[]>();
  for (const name of [...groups.keys()].sort()) {
    const g = groups.get(name)!;
    const others = [...g.other].sort((a, b) =>
      String(a.schema) < String(b.schema) ? -1 : String(a.schema) > String(b.schema) ? 1 : 0,
    );
    out.set(name || GlobalPackageDir, [
      ...g.pkg,
      ...g.ch.sort(byName),
      ...g.b.sort(byName),
      ...g.dep,
      ...others,
    ]);
  }
  return out;
}

/**
 * Encodes documents whose bundle objects hold their text (see readPayloads); a StoredPayload
 * still in one is a bug of the caller.
 */
export function encodeDocuments(docs: Doc[], format: CatalogFormat): string {
  for (const d of docs) assertNoStoredPayloads(d);
  const written = docs.map(withGoIcon);
  if (format === CatalogFormat.YAML) return written.map((d) => `---\n${yamlWithPayloads(d)}`).join('');
  return written.map((d) => `${JSON.stringify(orderTopLevel(d), null, 4)}\n`).join('');
}

/**
 * A package icon's data is bytes to opm: it decodes the base64 and writes it again, without the
 * line breaks many CSVs wrap it with. Written the same way here, so a rewritten catalog is opm's.
 */
function withGoIcon(doc: Doc): Doc {
  const icon = doc.schema === 'olm.package' && isRecord(doc.icon) ? doc.icon : undefined;
  const data = icon?.base64data;
  if (typeof data !== 'string' || !isGoBase64(data)) return doc;
  const canonical = Buffer.from(data, 'base64').toString('base64');
  return canonical === data ? doc : { ...doc, icon: { ...icon, base64data: canonical } };
}

/** Base64 that YAML would read as a number must not be handled as plain text. */
const NOT_A_NUMBER = /[A-DF-Za-df-z+/]/;

/**
 * js-yaml examines every character of a string it writes, and inline manifests are most of a
 * catalog's bytes. Their base64 needs no quoting, so it is swapped for a short token, the rest is
 * dumped, and the token is swapped back: the text is exactly what dumping it all would give.
 */
function yamlWithPayloads(doc: Doc): string {
  if (doc.schema !== 'olm.bundle' || !Array.isArray(doc.properties)) return toYaml(doc);
  const payloads: string[] = [];
  const nonce = Math.random().toString(36).slice(2, 10);
  const token = (i: number) => `bosunpayload${nonce}n${i}x`;
  const properties = doc.properties.map((p: unknown) => {
    const prop = p as { type?: unknown; value?: { data?: unknown } };
    const data = prop?.type === 'olm.bundle.object' ? prop.value?.data : undefined;
    if (typeof data !== 'string' || data.length < 256 || !isBase64Alphabet(data) || !NOT_A_NUMBER.test(data))
      return p;
    payloads.push(data);
    return { ...prop, value: { ...prop.value, data: token(payloads.length - 1) } };
  });
  if (payloads.length === 0) return toYaml(doc);
  let swapped = 0;
  const out = toYaml({ ...doc, properties }).replace(
    new RegExp(`bosunpayload${nonce}n(\\d+)x`, 'g'),
    (m, i: string) => {
      swapped++;
      return payloads[Number(i)] ?? m;
    },
  );
  // Each token must have come back exactly once (it was written plain); otherwise take the slow road.
  return swapped === payloads.length ? out : toYaml(doc);
}

/** Encodes a whole catalog, reading its stored bundle objects (one package at a time). */
export async function encodeConfig(cfg: DeclarativeConfig, format: CatalogFormat): Promise<string> {
  const out: string[] = [];
  await writeConfig(cfg, format, (text) => void out.push(text));
  return out.join('');
}

/**
 * Encodes a whole catalog package by package into `write`, so that only one package's text and
 * manifests are held at a time (a rendered corpus is over 100 MB of text).
 */
export async function writeConfig(
  cfg: DeclarativeConfig,
  format: CatalogFormat,
  write: (text: string) => void | Promise<void>,
): Promise<void> {
  for (const docs of documentsByPackage(cfg).values())
    await write(encodeDocuments(await withPayloadsAll(docs), format));
}

/** Writes to a stream, waiting whenever its buffer is full. */
export function streamWriter(stream: NodeJS.WritableStream): (text: string) => Promise<void> {
  return (text) =>
    stream.write(text) ? Promise.resolve() : new Promise<void>((done) => stream.once('drain', () => done()));
}

function assertNoStoredPayloads(doc: Doc): void {
  if (doc.schema !== 'olm.bundle' || !Array.isArray(doc.properties)) return;
  for (const p of doc.properties as { value?: unknown }[]) {
    if (payloadOf(p?.value) !== undefined) {
      throw new Error(`bundle ${String(doc.name)}: a stored bundle object must be read before it is encoded`);
    }
  }
}

/** opm's struct field order for the top level of each schema; unknown keys follow, sorted. */
const FIELD_ORDER: Record<string, string[]> = {
  'olm.package': ['schema', 'name', 'defaultChannel', 'icon', 'description', 'properties'],
  'olm.channel': ['schema', 'name', 'package', 'entries', 'properties'],
  'olm.bundle': ['schema', 'name', 'package', 'image', 'properties', 'relatedImages'],
  'olm.deprecations': ['schema', 'package', 'entries'],
};
const ENTRY_ORDER = ['name', 'replaces', 'skips', 'skipRange'];
const RELATED_IMAGE_ORDER = ['name', 'image'];

function orderTopLevel(doc: Doc): Doc {
  const order = FIELD_ORDER[String(doc.schema)];
  if (!order) return doc;
  const out = reorder(doc, order);
  if (doc.schema === 'olm.channel' && Array.isArray(out.entries)) {
    out.entries = out.entries.map((e) => (e && typeof e === 'object' ? reorder(e as Doc, ENTRY_ORDER) : e));
  }
  if (doc.schema === 'olm.bundle' && Array.isArray(out.relatedImages)) {
    out.relatedImages = out.relatedImages.map((r) => (isRecord(r) ? reorder(r, RELATED_IMAGE_ORDER) : r));
  }
  return out;
}

function reorder(obj: Doc, order: string[]): Doc {
  const out: Doc = {};
  for (const k of order) if (obj[k] !== undefined) out[k] = obj[k];
  for (const k of Object.keys(obj).sort()) if (!(k in out) && obj[k] !== undefined) out[k] = obj[k];
  return out;
}
