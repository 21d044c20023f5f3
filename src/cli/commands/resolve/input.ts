/**
 * Reads what `bosun resolve` and `bosun explain` resolve: FBC catalog directories, Subscription
 * YAML files and a list of installed CSVs, into the same `ResolutionInput` the manager builds
 * from the cluster. Every problem names the file and the field.
 */
import { readFile } from 'node:fs/promises';
import { basename, resolve as resolvePath } from 'node:path';
import { type DeclarativeConfig, type PackageProperty, PropertyType } from '../../../apis/fbc.js';
import { loadCatalog } from '../../../catalog/load.js';
import { validateCatalog } from '../../../catalog/validate.js';
import type {
  Catalog,
  InstalledOperator,
  ResolutionInput,
  SubscriptionInput,
} from '../../../resolver/index.js';
import { type ParsedDoc, parseYamlStream } from '../../../bundle/yaml.js';
import { UsageError, UserError } from '../../../util/errors.js';
import { isRecord } from '../../../util/record.js';
import { formatProblem } from '../../../util/result.js';

export interface InputFlags {
  catalogs: string[];
  priorities: string[];
  subscriptions: string[];
  installed?: string;
}

interface CatalogArg {
  name: string;
  namespace?: string;
  dir: string;
}

/** `[[NAMESPACE/]NAME=]DIR`; the name defaults to the folder's name. */
export function parseCatalogArg(arg: string, cwd: string): CatalogArg {
  const eq = arg.indexOf('=');
  const dir = resolvePath(cwd, eq === -1 ? arg : arg.slice(eq + 1));
  const label = eq === -1 ? basename(dir) : arg.slice(0, eq);
  const slash = label.indexOf('/');
  const name = slash === -1 ? label : label.slice(slash + 1);
  const namespace = slash === -1 ? undefined : label.slice(0, slash);
  if (!name || (namespace !== undefined && !namespace)) {
    throw new UsageError(`--catalog ${arg}: expected [[NAMESPACE/]NAME=]DIR`);
  }
  return { name, ...(namespace ? { namespace } : {}), dir };
}

/** `NAME=N`, N an integer (CatalogSource `spec.priority`). */
export function parsePriorities(args: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const arg of args) {
    const m = /^([^=]+)=(-?\d+)$/.exec(arg);
    if (!m) throw new UsageError(`--priority ${arg}: expected NAME=N with N an integer`);
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

export async function readInput(flags: InputFlags, cwd: string): Promise<ResolutionInput> {
  if (flags.catalogs.length === 0) throw new UsageError('give at least one --catalog [NAME=]DIR');
  if (flags.subscriptions.length === 0) throw new UsageError('give at least one --subscription FILE');
  const catalogArgs = flags.catalogs.map((c) => parseCatalogArg(c, cwd));
  const priorities = parsePriorities(flags.priorities);
  for (const name of priorities.keys()) {
    if (!catalogArgs.some((c) => c.name === name))
      throw new UsageError(`--priority ${name}: no --catalog is named ${name}`);
  }

  const subs = (
    await Promise.all(flags.subscriptions.map((f) => readSubscriptions(resolvePath(cwd, f))))
  ).flat();
  const namespace = sharedNamespace(subs);

  const catalogs: Catalog[] = [];
  for (const c of catalogArgs) {
    const loaded = await loadCatalog(c.dir);
    // The manager refuses a catalog that does not validate, and so does opm's loader; resolving
    // one offline would answer for a catalog no cluster can serve.
    const errors = loaded.ok ? validateCatalog(loaded.value).errors : loaded.errors;
    if (!loaded.ok || errors.length > 0) {
      const shown = errors.slice(0, 20).map(formatProblem);
      const more = errors.length > 20 ? `\n  ... and ${errors.length - 20} more` : '';
      throw new UserError(`catalog ${c.name} (${c.dir}) does not load:\n  ${shown.join('\n  ')}${more}`);
    }
    catalogs.push({
      name: c.name,
      namespace: c.namespace ?? referencedNamespace(subs, c.name) ?? namespace,
      priority: priorities.get(c.name) ?? 0,
      config: loaded.value,
    });
  }

  const subscriptions: SubscriptionInput[] = subs.map(({ sub }) => ({
    ...sub,
    namespace: sub.namespace || namespace,
    sourceNamespace:
      sub.sourceNamespace || catalogs.find((c) => c.name === sub.source)?.namespace || namespace,
  }));
  const installed = flags.installed ? await readInstalled(resolvePath(cwd, flags.installed), catalogs) : [];
  return { namespace, catalogs, installed, subscriptions };
}

interface ReadSubscription {
  file: string;
  sub: SubscriptionInput;
}

/** The documents of a YAML (or JSON) file, read with the codec every catalog and manifest is read with. */
async function readDocuments(file: string): Promise<ParsedDoc[]> {
  const parsed = parseYamlStream(await readText(file), file);
  if (!parsed.ok) throw new UserError(formatProblem(parsed.problem));
  return parsed.docs;
}

/** Every Subscription document in a YAML file; any other kind of document is an error. */
async function readSubscriptions(file: string): Promise<ReadSubscription[]> {
  const docs = await readDocuments(file);
  const out: ReadSubscription[] = [];
  for (const doc of docs) {
    const where = docs.length > 1 || doc.index > 0 ? `${file} (document ${doc.index + 1})` : file;
    if (!isRecord(doc.value)) throw new UserError(`${where}: expected a Subscription object`);
    const obj = doc.value;
    if (obj.kind !== 'Subscription') {
      throw new UserError(`${where}: kind: is ${JSON.stringify(obj.kind)}, expected Subscription`);
    }
    const meta = (obj.metadata ?? {}) as Record<string, unknown>;
    const spec = (obj.spec ?? {}) as Record<string, unknown>;
    const field = (o: Record<string, unknown>, k: string, path: string, required: boolean): string => {
      const v = o[k];
      if (v === undefined || v === null || v === '') {
        if (required) throw new UserError(`${where}: ${path}: is missing`);
        return '';
      }
      if (typeof v !== 'string') throw new UserError(`${where}: ${path}: must be a string`);
      return v;
    };
    const startingCSV = field(spec, 'startingCSV', 'spec.startingCSV', false);
    out.push({
      file: where,
      sub: {
        name: field(meta, 'name', 'metadata.name', true),
        namespace: field(meta, 'namespace', 'metadata.namespace', false),
        package: field(spec, 'name', 'spec.name', true),
        channel: field(spec, 'channel', 'spec.channel', false),
        source: field(spec, 'source', 'spec.source', true),
        sourceNamespace: field(spec, 'sourceNamespace', 'spec.sourceNamespace', false),
        ...(startingCSV ? { startingCSV } : {}),
      },
    });
  }
  if (out.length === 0) throw new UserError(`${file}: has no Subscription`);
  return out;
}

/** The one namespace the Subscriptions are in (`default` when none says). */
function sharedNamespace(subs: ReadSubscription[]): string {
  const named = subs.filter((s) => s.sub.namespace);
  const first = named[0];
  const other = named.find((s) => s.sub.namespace !== first?.sub.namespace);
  if (first && other) {
    throw new UserError(
      `Subscriptions resolve together in one namespace, but ${first.file} is in ${first.sub.namespace} and ${other.file} in ${other.sub.namespace} (metadata.namespace)`,
    );
  }
  return first?.sub.namespace ?? 'default';
}

/** The namespace Subscriptions give for a catalog of this name, when they give one. */
function referencedNamespace(subs: ReadSubscription[], name: string): string | undefined {
  return subs
    .filter((s) => s.sub.source === name && s.sub.sourceNamespace)
    .map((s) => s.sub.sourceNamespace)
    .sort()[0];
}

/**
 * The installed CSVs: a YAML list of `{name, catalog}`, each looked up in that catalog for its
 * package, version and properties.
 */
async function readInstalled(file: string, catalogs: Catalog[]): Promise<InstalledOperator[]> {
  const list = (await readDocuments(file))[0]?.value;
  if (list === null || list === undefined) return [];
  if (!Array.isArray(list)) throw new UserError(`${file}: expected a list of {name, catalog}`);
  return list.map((item, i) => {
    const at = `${file}: [${i}]`;
    const o = (item ?? {}) as Record<string, unknown>;
    if (typeof o.name !== 'string' || !o.name) throw new UserError(`${at}.name: is missing`);
    if (typeof o.catalog !== 'string' || !o.catalog) throw new UserError(`${at}.catalog: is missing`);
    const cat = catalogs.find((c) => c.name === o.catalog);
    if (!cat) {
      throw new UserError(
        `${at}.catalog: ${o.catalog} is not one of the --catalog names (${catalogs.map((c) => c.name).join(', ')})`,
      );
    }
    return installedFrom(cat, o.name, `${at}.name`);
  });
}

function installedFrom(cat: Catalog, name: string, at: string): InstalledOperator {
  const bundle = findBundle(cat.config, name);
  if (!bundle) throw new UserError(`${at}: ${name} is not a bundle of catalog ${cat.name}`);
  const pkgProperty = bundle.properties.find((p) => p.type === PropertyType.Package);
  const pkg = pkgProperty?.value as PackageProperty | undefined;
  return {
    name,
    package: bundle.package,
    version: pkg?.version ?? '',
    catalog: { name: cat.name, namespace: cat.namespace },
    properties: bundle.properties.filter((p) => p.type !== PropertyType.BundleObject),
  };
}

const findBundle = (cfg: DeclarativeConfig, name: string) => cfg.bundles.find((b) => b.name === name);

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read: ${(err as Error).message}`, 1, { cause: err });
  }
}
