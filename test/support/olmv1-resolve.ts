/**
 * operator-controller v1.2.0's ClusterExtension resolver as a test oracle: tools/olmv1-resolve is
 * one main package of Bosun's that runs the released module's own CatalogResolver (with its
 * catalog cache and client) on scenarios given as JSON lines. It imports the module's internal
 * packages, so it is built inside a work copy of the module (go-tool.ts `inside`), cached like
 * the other Go tools. Tests call `olmv1Resolver()` in their setup and skip, saying why, when it
 * cannot be built here.
 */
import { resolve } from 'node:path';
import { type GoProgram, goProgram } from './go-tool.js';

export function olmv1Resolver(opts: { build?: boolean } = {}): Promise<GoProgram> {
  return goProgram(resolve(import.meta.dirname, '../../tools/olmv1-resolve'), {
    name: 'olmv1-resolve',
    kind: 'tools',
    inside: {
      module: 'github.com/operator-framework/operator-controller',
      version: 'v1.2.0',
      dir: 'cmd/bosun-olmv1-resolve',
    },
    build: opts.build,
    log: (l) => process.stderr.write(`[olmv1-resolve] ${l}\n`),
    expected: 'about 5 minutes on two cores with its modules downloaded',
  });
}
