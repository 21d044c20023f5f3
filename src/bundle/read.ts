/**
 * Reading registry+v1 bundles from a directory or an archive into a `Bundle` (not yet validated:
 * see validate.ts). Reading fails only when the input cannot be understood at all (unreadable
 * file, YAML syntax error, no annotations, no manifests); every such problem is collected before
 * failing.
 */
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Bundle, BundleAnnotation, type BundleManifest, type KubeManifest } from '../apis/bundle.js';
import type { Property } from '../apis/fbc.js';
import { readFileNoFollow } from '../util/confined-fs.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { readArchiveFile } from './archive.js';
import type { FileMap } from '../util/tar-write.js';
import { bundleTooLarge, fileTooLarge, type ReadLimits, readLimits } from './limits.js';
import { checkClusterServiceVersion } from './csv-schema.js';
import { describe } from './manifest.js';
import { labelOf } from './render.js';
import { isObject, parseYamlOne, parseYamlStream } from './yaml.js';

export { bundleToDoc, type RenderOptions } from './render.js';

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

/**
 * Reads a bundle directory or a `.tar`/`.tar.gz` archive of one. The path itself may be a link
 * (the user named it); nothing below it is read through one (see listDir).
 */
export async function readBundle(path: string): Promise<Result<Bundle>> {
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(path);
  } catch (err) {
    return fail([{ file: path, message: `cannot read bundle: ${(err as Error).message}` }]);
  }
  if (st.isDirectory()) return readBundleDir(path);
  if (st.isFile()) return readBundleArchive(path);
  return fail([{ file: path, message: 'a bundle is a directory or a .tar/.tar.gz archive' }]);
}

export async function readBundleDir(dir: string, opts: ReadOptions = {}): Promise<Result<Bundle>> {
  const files = await readBundleFiles(dir);
  if (!files.ok) return files;
  return bundleFromFiles(files.value, dir, false, opts);
}

/**
 * The files of a bundle directory: those directly in `manifests/` and `metadata/`. Their sizes are
 * checked before any is read.
 */
export async function readBundleFiles(
  dir: string,
  limits: ReadLimits = readLimits(),
): Promise<Result<FileMap>> {
  const found: Found[] = [];
  const problems: Problem[] = [];
  for (const sub of ['manifests', 'metadata']) await listDir(dir, sub, found, problems);
  problems.push(...sizeProblems(dir, found, limits));
  if (problems.length) return fail(problems);
  const files: FileMap = new Map();
  // Listed as files, not links: one put there since is not followed (ELOOP).
  await Promise.all(found.map(async (f) => files.set(f.rel, await readFileNoFollow(join(dir, f.rel)))));
  return ok(new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

interface Found {
  rel: string;
  size: number;
}

/** The files of a bundle folder past the limits, by their sizes, before any is read. */
export function sizeProblems(dir: string, found: readonly Found[], limits: ReadLimits): Problem[] {
  const problems: Problem[] = [];
  let total = 0;
  for (const f of found) {
    total += f.size;
    if (f.size > limits.maxFileBytes)
      problems.push({ file: join(dir, f.rel), message: fileTooLarge(f.size, limits) });
  }
  if (total > limits.maxTotalBytes)
    problems.push({ file: dir, message: bundleTooLarge('its files go', limits) });
  return problems;
}

/**
 * Lists the regular files directly under `dir/sub` as `sub/<name>` with their sizes. Refuses
 * symbolic links, `sub` itself being one included: a bundle is what its folder holds, and a link
 * (to `/etc`, to a sibling file, dangling) would have a bundle read, validated and published
 * from files outside it, or the same file twice; an archive of it could not hold the link anyway.
 */
async function listDir(dir: string, sub: string, found: Found[], problems: Problem[]): Promise<void> {
  const link = await lstat(join(dir, sub)).then(
    (st) => st.isSymbolicLink(),
    () => false,
  );
  if (link) {
    const target = await readlink(join(dir, sub)).catch(() => '?');
    problems.push({
      file: join(dir, sub),
      message: `is a symbolic link (to ${target}); a bundle's ${sub}/ must be a folder inside it: put the folder itself there`,
    });
    return;
  }
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(join(dir, sub), { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // reported by bundleFromFiles
    problems.push({ file: join(dir, sub), message: `cannot read directory: ${(err as Error).message}` });
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  await Promise.all(
    entries.map(async (e) => {
      const rel = `${sub}/${e.name}`;
      if (e.isSymbolicLink()) {
        const target = await readlink(join(dir, rel)).catch(() => '?');
        problems.push({
          file: join(dir, rel),
          message: `is a symbolic link (to ${target}); symlinks are not allowed in a bundle; copy the file instead`,
        });
      } else if (e.isFile()) {
        found.push({ rel, size: (await lstat(join(dir, rel))).size });
      }
    }),
  );
}

export async function readBundleArchive(path: string): Promise<Result<Bundle>> {
  const read = await readArchiveFile(path);
  if (!read.ok) return fail(read.errors);
  const files = stripSingleRoot(read.files);
  return bundleFromFiles(files, path, true);
}

/** Archives made with `tar czf b.tgz mybundle/` hold `mybundle/manifests/...`: look inside the one root. */
function stripSingleRoot(files: FileMap): FileMap {
  const paths = [...files.keys()];
  if (paths.some((p) => p.startsWith('manifests/') || p.startsWith('metadata/'))) return files;
  const roots = new Set(paths.map((p) => p.split('/')[0]));
  if (roots.size !== 1) return files;
  const root = `${[...roots][0]}/`;
  return new Map([...files].map(([p, b]) => [p.slice(root.length), b]));
}

export interface ReadOptions {
  /** Read as OLM read published operators (see ReadSink); Bosun's own commands read strictly. */
  lenient?: boolean;
}

/** Builds a bundle from its files, keyed by path relative to the bundle root. */
export function bundleFromFiles(
  files: FileMap,
  source: string,
  archive: boolean,
  opts: ReadOptions = {},
): Result<Bundle> {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const label = (rel: string) => labelOf({ source, archive }, rel);
  const text = (rel: string) => files.get(rel)?.toString('utf8');

  const annotationsFile = ['metadata/annotations.yaml', 'metadata/annotations.yml'].find((f) => files.has(f));
  let annotations: Record<string, string> = {};
  if (!annotationsFile) {
    problems.push({
      file: label('metadata/annotations.yaml'),
      message: 'missing: a registry+v1 bundle names its package and channels in metadata/annotations.yaml',
    });
  } else {
    annotations = readAnnotations(text(annotationsFile)!, label(annotationsFile), problems, warnings);
  }

  const manifestsDir = trimDir(annotations[BundleAnnotation.Manifests] ?? 'manifests/');
  const manifests: BundleManifest[] = [];
  for (const [rel, data] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!rel.startsWith(`${manifestsDir}/`) || rel.slice(manifestsDir.length + 1).includes('/')) continue;
    if (!MANIFEST_EXT.test(rel)) continue;
    manifests.push(
      ...parseManifestFile(data.toString('utf8'), rel, label(rel), {
        errors: problems,
        warnings,
        lenient: opts.lenient,
      }),
    );
  }
  if (manifests.length === 0 && !problems.some((p) => p.file?.startsWith(label(manifestsDir)))) {
    problems.push({
      file: label(`${manifestsDir}/`),
      message: 'no manifests found: a bundle needs at least its ClusterServiceVersion',
    });
  }

  const metadataFiles: Bundle['metadataFiles'] = {};
  if (annotationsFile) metadataFiles.annotations = label(annotationsFile);
  const dependencies = readPropertyList(files, 'dependencies', label, problems, metadataFiles);
  const properties = readPropertyList(files, 'properties', label, problems, metadataFiles);

  if (problems.length) return fail(problems);
  const bundle: Bundle = { source, archive, annotations, manifests, dependencies, properties, metadataFiles };
  if (warnings.length) bundle.warnings = warnings;
  return ok(bundle);
}

function trimDir(dir: string): string {
  return dir.replace(/^\.?\//, '').replace(/\/+$/, '');
}

function readAnnotations(
  src: string,
  file: string,
  problems: Problem[],
  warnings: Problem[],
): Record<string, string> {
  const parsed = parseYamlOne(src, file);
  if (!parsed.ok) {
    problems.push(parsed.problem);
    return {};
  }
  const root = parsed.value;
  if (!isObject(root) || !isObject(root.annotations)) {
    problems.push({
      file,
      field: 'annotations',
      message: 'expected a map of annotations under the key "annotations"',
    });
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(root.annotations)) {
    if (typeof v === 'string') out[k] = v;
    else if (v === null) {
      // Kubernetes reads a null string as empty; so does opm.
      out[k] = '';
      warnings.push({ file, field: `annotations.${k}`, message: 'has no value; read as an empty string' });
    } else
      problems.push({ file, field: `annotations.${k}`, message: `must be a string, found ${typeName(v)}` });
  }
  return out;
}

/**
 * Where reading reports problems. With `lenient`, reading is as OLM was with published operators:
 * repeated keys keep their last value and documents that are not Kubernetes objects are skipped,
 * each reported as a warning instead of failing the bundle.
 */
export interface ReadSink {
  errors: Problem[];
  warnings: Problem[];
  lenient?: boolean;
}

/**
 * Parses one manifest file into its object. opm's bundle parser and OLM's unpacker decode one
 * object per file, the first document; so does Bosun, in every command, and says which documents
 * it left out (a published CRD file sometimes holds several CRDs, of which the CSV owns one).
 */
export function parseManifestFile(src: string, rel: string, file: string, sink: ReadSink): BundleManifest[] {
  const lenient = sink.lenient ? sink.warnings : undefined;
  const parsed = parseYamlStream(src, file, lenient ? { onDuplicateKey: (p) => lenient.push(p) } : {});
  if (!parsed.ok) {
    sink.errors.push(parsed.problem);
    return [];
  }
  // Go's YAML reader skips empty documents (a leading or trailing `---`).
  const [doc, ...rest] = parsed.docs.filter((d) => d.value !== null && d.value !== undefined);
  if (!doc) return [];
  if (rest.length > 0) {
    const left = rest.map((d) =>
      isObject(d.value) ? describe(d.value as KubeManifest) : `document ${d.index + 1}`,
    );
    sink.warnings.push({
      file,
      message: `holds ${rest.length + 1} documents; only the first is read, as opm and OLM read a manifest file, so ${left.join(', ')} ${rest.length > 1 ? 'are' : 'is'} left out (put each object in its own file)`,
    });
  }
  const skipped = (p: Problem) =>
    lenient ? lenient.push({ ...p, message: `${p.message}; the file was skipped` }) : sink.errors.push(p);
  if (!isObject(doc.value)) {
    skipped({ file, message: `expected a Kubernetes object, found ${typeName(doc.value)}` });
    return [];
  }
  const obj = doc.value as KubeManifest;
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
    skipped({
      file,
      field: typeof obj.apiVersion !== 'string' ? 'apiVersion' : 'kind',
      message: 'a Kubernetes object needs apiVersion and kind',
    });
    return [];
  }
  if (obj.kind === 'ClusterServiceVersion') {
    // Decoded once here, as OLM decodes it into its Go types: what those cannot hold fails reading.
    sink.errors.push(...checkClusterServiceVersion(obj, file, describe(obj)).errors);
  }
  return [{ file: rel, doc: doc.index, object: obj, size: Buffer.byteLength(src) }];
}

function readPropertyList(
  files: FileMap,
  key: 'dependencies' | 'properties',
  label: (rel: string) => string,
  problems: Problem[],
  metadataFiles: Bundle['metadataFiles'],
): Property[] {
  const rel = [`metadata/${key}.yaml`, `metadata/${key}.yml`].find((f) => files.has(f));
  if (!rel) return [];
  const file = label(rel);
  metadataFiles[key] = file;
  const parsed = parseYamlOne(files.get(rel)!.toString('utf8'), file);
  if (!parsed.ok) {
    problems.push(parsed.problem);
    return [];
  }
  const list = isObject(parsed.value) ? parsed.value[key] : undefined;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    problems.push({ file, field: key, message: `expected a list of {type, value}, found ${typeName(list)}` });
    return [];
  }
  const out: Property[] = [];
  list.forEach((item, i) => {
    if (!isObject(item) || typeof item.type !== 'string' || item.type === '' || !('value' in item)) {
      problems.push({
        file,
        field: `${key}[${i}]`,
        message: 'each entry needs a "type" (string) and a "value"',
      });
      return;
    }
    out.push({ type: item.type, value: item.value });
  });
  return out;
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  return `a ${typeof v}`;
}
