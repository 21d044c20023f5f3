/**
 * What `bosun catalog render` (and `diff`) accept, told apart by looking at the path:
 * a bundle directory (`manifests/` + `metadata/`), a bundle archive, a package-manifest package
 * (`*.package.yaml`), a directory of packages (like community-operators), a catalog directory,
 * or a single catalog file.
 */
import { type Dirent, readdirSync, type Stats, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { type DeclarativeConfig, emptyConfig } from '../../../apis/fbc.js';
import { compressionOf } from '../../../bundle/archive.js';
import { isPackageFile } from '../../../bundle/package-manifest.js';
import { readBundle } from '../../../bundle/read.js';
import { bundleToDoc, type RenderOptions } from '../../../bundle/render.js';
import { validateBundle } from '../../../bundle/validate.js';
import { importOperatorsDir, importPackageDir, mergeInto } from '../../../catalog/import.js';
import { addDocuments, loadCatalog } from '../../../catalog/load.js';
import type { Problem } from '../../../util/result.js';

export const InputKind = {
  BundleDir: 'bundle directory',
  BundleArchive: 'bundle archive',
  PackageManifest: 'package-manifest package',
  OperatorsDir: 'directory of packages',
  CatalogDir: 'catalog directory',
  CatalogFile: 'catalog file',
} as const;
export type InputKind = (typeof InputKind)[keyof typeof InputKind];

export async function detectInput(path: string): Promise<InputKind | { error: string }> {
  // Synchronous: a catalog directory has a folder per package, and one event-loop round trip per
  // look (as many as four per package) added up to 150 ms on the corpus catalog.
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return { error: 'no such file or directory' };
  }
  if (st.isFile()) return (await looksLikeArchive(path)) ? InputKind.BundleArchive : InputKind.CatalogFile;
  if (!st.isDirectory()) return { error: 'not a file or directory' };
  const entries = readdirSync(path, { withFileTypes: true });
  const names = entries.map((e) => e.name);
  if (names.includes('manifests') && names.includes('metadata')) return InputKind.BundleDir;
  if (names.some((n) => isPackageFile(join(path, n)))) return InputKind.PackageManifest;
  for (const e of entries) {
    const child = join(path, e.name);
    if (!isDirectory(child, e)) continue;
    const grand = entriesOf(child);
    if (grand.some((g) => isPackageFile(join(child, g.name)))) return InputKind.OperatorsDir;
    for (const g of grand) {
      const dir = join(child, g.name);
      if (!isDirectory(dir, g)) continue;
      const inner = entriesOf(dir).map((x) => x.name);
      if (inner.includes('manifests') && inner.includes('metadata')) return InputKind.OperatorsDir;
    }
  }
  return InputKind.CatalogDir;
}

/** A folder's entries; none when it cannot be read (as if it were empty). */
function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** A directory, or a link to one. */
function isDirectory(path: string, entry: Dirent): boolean {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** gzip or zstd magic, or a tar header's "ustar" at offset 257. */
async function looksLikeArchive(path: string): Promise<boolean> {
  await using fh = await open(path, 'r');
  const buf = Buffer.alloc(263);
  const { bytesRead } = await fh.read(buf, 0, 263, 0);
  return (
    compressionOf(buf.subarray(0, bytesRead)) !== 'none' ||
    buf.subarray(257, 262).toString('latin1') === 'ustar'
  );
}

export interface RenderedInput {
  config: DeclarativeConfig;
  errors: Problem[];
  warnings: Problem[];
}

/** Renders any accepted input to FBC. Bundles are validated first: an invalid bundle renders nothing. */
export async function renderInput(
  path: string,
  opts: RenderOptions & { workers?: number } = {},
  known?: InputKind,
): Promise<RenderedInput> {
  const kind = known ?? (await detectInput(path));
  const config = emptyConfig();
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  if (typeof kind === 'object') return { config, errors: [{ file: path, message: kind.error }], warnings };
  switch (kind) {
    case InputKind.BundleDir:
    case InputKind.BundleArchive: {
      const read = await readBundle(path);
      if (!read.ok) return { config, errors: read.errors, warnings };
      const v = validateBundle(read.value);
      warnings.push(...v.warnings);
      if (v.errors.length) return { config, errors: v.errors, warnings };
      const doc = bundleToDoc(read.value, opts);
      if (!doc.ok) return { config, errors: doc.errors, warnings };
      config.bundles.push(doc.value);
      return { config, errors, warnings };
    }
    case InputKind.PackageManifest: {
      const { cfg, result } = await importPackageDir(path);
      return { config: cfg, errors: result.errors, warnings: result.warnings };
    }
    case InputKind.OperatorsDir: {
      const r = await importOperatorsDir(path, opts.workers ? { workers: opts.workers } : {});
      return { config: r.config, errors: r.errors, warnings: r.warnings };
    }
    case InputKind.CatalogDir: {
      const loaded = await loadCatalog(path);
      return loaded.ok
        ? { config: loaded.value, errors, warnings }
        : { config, errors: loaded.errors, warnings };
    }
    case InputKind.CatalogFile: {
      const { readFile } = await import('node:fs/promises');
      addDocuments(config, await readFile(path), path, errors);
      return { config, errors, warnings };
    }
  }
}

/** Renders several inputs into one config, collecting every input's problems. */
export async function renderInputs(
  paths: string[],
  opts: RenderOptions & { workers?: number } = {},
): Promise<RenderedInput> {
  const out: RenderedInput = { config: emptyConfig(), errors: [], warnings: [] };
  for (const p of paths) {
    const r = await renderInput(p, opts);
    mergeInto(out.config, r.config);
    out.errors.push(...r.errors);
    out.warnings.push(...r.warnings);
  }
  return out;
}
