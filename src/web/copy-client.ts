/**
 * A build step (`npm run build`, after tsc): copies the page's files that tsc does not emit (the
 * HTML, the CSS, the JavaScript written as JavaScript) from src/web/client/ to dist/web/client/,
 * beside the modules tsc compiled there, so the compiled Bosun serves the whole page.
 */
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../../src/web/client/', import.meta.url));
const to = fileURLToPath(new URL('./client/', import.meta.url));

// Run from the sources (tsx) the two folders are one: there is nothing to copy.
if (from !== to) {
  const files = (await readdir(from)).filter((f) => /\.(html|css|js|svg)$/.test(f));
  await mkdir(to, { recursive: true });
  for (const f of files) await copyFile(from + f, to + f);
}
