/**
 * The legacy package-manifest layout, as OperatorHub's community-operators used it before bundles:
 *
 *     <pkg>/<pkg>.package.yaml      packageName, channels [{name, currentCSV}], defaultChannel
 *     <pkg>/<version>/*.yaml        the CSV and CRDs (and other manifests) of one version, flat
 *
 * Each version folder reads as a bundle without annotations; the package file supplies what
 * annotations would: the package, its channels and their heads.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { closeSync, openSync, readSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Bundle, BundleManifest } from '../apis/bundle.js';
import type { Problem } from '../util/result.js';
import { readLimits } from './limits.js';
import { parseManifestFile, sizeProblems } from './read.js';
import { isObject, parseYamlOne } from './yaml.js';

export interface PackageManifest {
  file: string;
  packageName: string;
  defaultChannel?: string;
  channels: { name: string; currentCSV: string; index: number }[];
}

export interface LegacyPackage {
  dir: string;
  manifest?: PackageManifest;
  /** One bundle per version folder that holds manifests. */
  bundles: Bundle[];
  problems: Problem[];
}

const YAML_FILE = /\.(ya?ml|json)$/i;

/** True when `dir` holds a package-manifest package file (see isPackageFile). */
export async function isPackageManifestDir(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).some((name) => isPackageFile(join(dir, name)));
  } catch {
    return false;
  }
}

/** `<package>.package.yaml`, the name of the file that makes a folder a package-manifest package. */
export function isPackageFileName(name: string): boolean {
  return /package\.ya?ml$/i.test(name);
}

/** A top-level `schema` key, YAML or JSON: what every file-based catalog document has. */
const CATALOG_DOCUMENT = /^schema\s*:|"schema"\s*:/m;
/** Enough of a file to see its first documents' keys. */
const SNIFF_BYTES = 64 * 1024;

/**
 * Whether `path` is a package-manifest package file: named `*package.yaml` and holding no
 * catalog document. A file-based catalog may name its file `package.yaml` too, and opm reads it
 * as a catalog, so the name alone does not decide.
 */
export function isPackageFile(path: string): boolean {
  if (!isPackageFileName(basename(path))) return false;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(SNIFF_BYTES);
    const read = readSync(fd, head, 0, SNIFF_BYTES, 0);
    return !CATALOG_DOCUMENT.test(head.toString('utf8', 0, read));
  } catch {
    // A folder or an unreadable file named like one is no package file.
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export async function readPackageManifestDir(dir: string): Promise<LegacyPackage> {
  const problems: Problem[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const packageFiles = entries.filter((e) => e.isFile() && isPackageFileName(e.name));
  let manifest: PackageManifest | undefined;
  if (packageFiles.length === 0) {
    problems.push({
      file: dir,
      message: 'no <package>.package.yaml: a package-manifest directory names its channels there',
    });
  } else if (packageFiles.length > 1) {
    problems.push({
      file: dir,
      message: `more than one package file: ${packageFiles.map((f) => f.name).join(', ')}`,
    });
  } else {
    const file = join(dir, packageFiles[0]!.name);
    manifest = parsePackageManifest(await readFile(file, 'utf8'), file, problems);
  }
  const bundles: Bundle[] = [];
  await Promise.all(
    entries
      .filter((e) => e.isDirectory())
      .map(async (e) => {
        const b = await readVersionFolder(join(dir, e.name), problems);
        if (b) bundles.push(b);
      }),
  );
  bundles.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  return { dir, ...(manifest ? { manifest } : {}), bundles, problems };
}

export function parsePackageManifest(
  text: string,
  file: string,
  problems: Problem[],
): PackageManifest | undefined {
  const parsed = parseYamlOne(text, file);
  if (!parsed.ok) {
    problems.push(parsed.problem);
    return undefined;
  }
  const v = parsed.value;
  if (!isObject(v)) {
    problems.push({ file, message: 'expected a map with packageName, channels and defaultChannel' });
    return undefined;
  }
  const before = problems.length;
  if (typeof v.packageName !== 'string' || v.packageName === '')
    problems.push({ file, field: 'packageName', message: 'is required' });
  if (v.defaultChannel !== undefined && typeof v.defaultChannel !== 'string') {
    problems.push({ file, field: 'defaultChannel', message: 'must be a channel name' });
  }
  const channels: PackageManifest['channels'] = [];
  if (!Array.isArray(v.channels) || v.channels.length === 0) {
    problems.push({ file, field: 'channels', message: 'is required: a list of {name, currentCSV}' });
  } else {
    v.channels.forEach((c, index) => {
      if (!isObject(c) || typeof c.name !== 'string' || c.name === '') {
        problems.push({ file, field: `channels[${index}].name`, message: 'is required' });
      } else if (typeof c.currentCSV !== 'string' || c.currentCSV === '') {
        problems.push({
          file,
          field: `channels[${index}].currentCSV`,
          message: 'is required: the CSV at the head of the channel',
        });
      } else channels.push({ name: c.name, currentCSV: c.currentCSV, index });
    });
  }
  if (problems.length > before) return undefined;
  return {
    file,
    packageName: v.packageName as string,
    ...(typeof v.defaultChannel === 'string' ? { defaultChannel: v.defaultChannel } : {}),
    channels,
  };
}

/** A version folder as a bundle: every YAML/JSON file directly in it is a manifest. */
async function readVersionFolder(dir: string, problems: Problem[]): Promise<Bundle | undefined> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && YAML_FILE.test(e.name))
    .map((e) => e.name)
    .sort();
  if (names.length === 0) return undefined;
  const sized = await Promise.all(
    names.map(async (rel) => ({ rel, size: (await stat(join(dir, rel))).size })),
  );
  const tooLarge = sizeProblems(dir, sized, readLimits());
  if (tooLarge.length > 0) {
    problems.push(...tooLarge);
    return undefined;
  }
  const texts = await Promise.all(names.map((n) => readFile(join(dir, n), 'utf8')));
  const manifests: BundleManifest[] = [];
  const warnings: Problem[] = [];
  names.forEach((name, i) => {
    manifests.push(
      ...parseManifestFile(texts[i]!, name, join(dir, name), { errors: problems, warnings, lenient: true }),
    );
  });
  return {
    source: dir,
    annotations: {},
    manifests,
    dependencies: [],
    properties: [],
    metadataFiles: {},
    ...(warnings.length ? { warnings } : {}),
  };
}
