/**
 * crane v0.22.1 (github.com/google/go-containerregistry), an image tool that is not Bosun: the
 * tests build bundle and catalog images with it alone and prove Bosun reads them unchanged.
 * Built from its Go module by tools/crane (go.mod and go.sum only: the released command itself
 * is built) and cached like the other Go tools; tests skip, saying why, when it cannot be built.
 */
import { resolve } from 'node:path';
import { type GoProgram, goProgram } from './go-tool.js';

export { run } from './go-tool.js';

export const CraneVersion = 'v0.22.1';

export function craneBinary(opts: { build?: boolean } = {}): Promise<GoProgram> {
  return goProgram(resolve(import.meta.dirname, '../../tools/crane'), {
    name: 'crane',
    kind: 'tools',
    pkg: 'github.com/google/go-containerregistry/cmd/crane',
    build: opts.build,
    log: (l) => process.stderr.write(`[crane] ${l}\n`),
    expected: 'about a minute on two cores',
  });
}
