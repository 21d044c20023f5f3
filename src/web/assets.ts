/**
 * The page's files (client/): HTML, CSS and ES modules the browser loads as they are, with no
 * bundler. Where they come from depends on how Bosun runs:
 *
 * - compiled (`npm start`, an installed package): dist/web/client/, where the build put the
 *   TypeScript modules tsc compiled and copied the other files (copy-client.ts);
 * - from the sources (the tests, `tsx`): src/web/client/, where a `.js` asked for that exists
 *   only as `.ts` is compiled on first request with TypeScript's transpileModule (types are
 *   erased, nothing else changes: the same modules tsc emits) and kept while its file is
 *   unchanged. TypeScript is a development dependency, present wherever the sources run.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const ContentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

/** Names the page may ask for: one flat folder, no dots but the extension's, nothing hidden. */
const AssetName = /^[a-z][a-z0-9-]*\.(html|css|js|svg|js\.map)$/;

export const clientDir = fileURLToPath(new URL('./client/', import.meta.url));

export interface AssetStore {
  get(name: string): Promise<Asset | undefined>;
}

export function clientAssets(dir = clientDir): AssetStore {
  const cache = new Map<string, { mtimeMs: number; asset: Asset }>();

  const load = async (name: string): Promise<Asset | undefined> => {
    const ext = name.endsWith('.js.map') ? '.map' : name.slice(name.lastIndexOf('.'));
    const direct = await found(dir + name);
    const source = direct ?? (ext === '.js' ? await found(dir + name.replace(/\.js$/, '.ts')) : undefined);
    if (!source) return undefined;
    const hit = cache.get(name);
    if (hit && hit.mtimeMs === source.mtimeMs) return hit.asset;
    const raw = await readFile(source.path);
    const body = source.path.endsWith('.ts') ? Buffer.from(await transpile(raw.toString('utf8'), name)) : raw;
    const asset = {
      body,
      contentType: ContentTypes[ext] ?? 'application/octet-stream',
      etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`,
    };
    cache.set(name, { mtimeMs: source.mtimeMs, asset });
    return asset;
  };

  return {
    get: (name) => (AssetName.test(name) ? load(name) : Promise.resolve(undefined)),
  };
}

async function found(path: string): Promise<{ path: string; mtimeMs: number } | undefined> {
  try {
    const s = await stat(path);
    return s.isFile() ? { path, mtimeMs: s.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

async function transpile(source: string, name: string): Promise<string> {
  let ts: typeof import('typescript');
  try {
    ts = (await import('typescript')).default;
  } catch (err) {
    throw new Error(
      `the web catalog runs from its TypeScript sources, and compiling ${name} needs the typescript package: run npm ci (or npm run build and run the compiled dist/)`,
      { cause: err },
    );
  }
  return ts.transpileModule(source, {
    fileName: name.replace(/\.js$/, '.ts'),
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      verbatimModuleSyntax: true,
      sourceMap: false,
    },
  }).outputText;
}
