/**
 * OLM v0's own resolver as a test oracle: the olm-oracle program (OLM v0.46.0's resolver used as
 * a Go library; see its README) kept beside the clone at ../shared/olm-oracle and named by
 * BOSUN_OLM_ORACLE_DIR. It is not part of Bosun: test/support/go-tool.ts builds it from there
 * and caches it like the tools under tools/. A cold build takes 10 to 20 minutes on two cores.
 */
import { goProgram } from '../../support/go-tool.js';

export { run } from '../../support/go-tool.js';

export const ORACLE_DIR_ENV = 'BOSUN_OLM_ORACLE_DIR';

export type OracleBinary = { ok: true; path: string; dir: string } | { ok: false; why: string };

/**
 * The oracle binary: from the cache, else built (with progress lines on `log`), else why not.
 * With `build: false` only a cached binary is used.
 */
export async function oracleBinary(
  opts: { build?: boolean; log?: (line: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<OracleBinary> {
  const dir = (opts.env ?? process.env)[ORACLE_DIR_ENV];
  if (!dir) {
    return {
      ok: false,
      why: `set ${ORACLE_DIR_ENV} to the olm-oracle folder (../shared/olm-oracle beside the clone)`,
    };
  }
  const built = await goProgram(dir, {
    name: 'olm-oracle',
    kind: 'olm-oracle',
    build: opts.build,
    log: opts.log ?? ((l: string) => process.stderr.write(`[olm oracle] ${l}\n`)),
    expected: '10 to 20 minutes on two cores',
  });
  return built.ok ? { ...built, dir } : built;
}
