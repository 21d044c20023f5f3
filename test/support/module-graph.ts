/**
 * The modules a source file loads when it runs: its static imports and re-exports, followed
 * through our TypeScript sources, without the type-only ones (erased when compiled) and without
 * dynamic `import()` (loaded only when the code runs there). Packages are named as imported
 * (`ajv`, `@grpc/grpc-js`); our modules by their absolute path.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

export async function modulesLoadedBy(entry: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(
      /^(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'|^import\s+'([^']+)'/gms,
    )) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('node:')) continue;
      if (!spec.startsWith('.')) seen.add(spec);
      else await visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
    }
  };
  await visit(entry);
  return seen;
}

/** Whether `modules` holds the package `name` or one of its files (`ajv`, `ajv/dist/2020`). */
export const hasPackage = (modules: Set<string>, name: string): boolean =>
  [...modules].some((m) => m === name || m.startsWith(`${name}/`));
