/**
 * opm v1.73.0 as a test oracle: tools/opm builds operator-registry's own command tree from its Go
 * module (plus `semver-dirs`, opm's semver template over bundle directories), cached like the
 * other Go tools. Differential tests call `opmBinary()` in their setup and skip, saying why,
 * when it cannot be built here.
 */
import { resolve } from 'node:path';
import { type GoProgram, goProgram } from './go-tool.js';

export { run } from './go-tool.js';

/** The tags opm's own Makefile builds with: no gpgme, sqlite's JSON functions. */
const OPM_TAGS = ['json1', 'containers_image_openpgp'];

export function opmBinary(opts: { build?: boolean } = {}): Promise<GoProgram> {
  return goProgram(resolve(import.meta.dirname, '../../tools/opm'), {
    name: 'opm',
    kind: 'tools',
    tags: OPM_TAGS,
    build: opts.build,
    log: (l) => process.stderr.write(`[opm] ${l}\n`),
    expected: 'about 10 minutes on two cores',
  });
}
