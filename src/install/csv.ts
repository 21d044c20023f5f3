/**
 * Refuses a CSV whose install strategy OLM's install would fail (the kernel's `refused` problems,
 * src/olm/install-strategy.ts), before anything is planned. OLM finds these only when the CSV is
 * already on the cluster (phase Failed, InvalidInstallStrategy, or a Deployment the API server
 * refuses); finding them while decoding the bundle lets an InstallPlan fail before it creates
 * anything. Validator findings that OLM installs anyway are left to `bosun bundle validate`.
 */
import type { ClusterServiceVersion, StrategyDetailsDeployment } from '../apis/operators.js';
import { readInstallStrategy } from '../olm/install-strategy.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';

/** The CSV's deployment strategy, or the problems OLM's install would fail it over. */
export function installStrategyOf(
  csv: ClusterServiceVersion,
  object: string,
): Result<StrategyDetailsDeployment> {
  const { strategy, problems } = readInstallStrategy(csv);
  if (strategy) return ok(strategy);
  return fail(
    problems
      .filter((p) => p.severity === 'refused')
      .map((p): Problem => ({ object, field: p.field, message: p.message })),
  );
}

export function validateInstallStrategy(csv: ClusterServiceVersion, object: string): Problem[] {
  const read = installStrategyOf(csv, object);
  return read.ok ? [] : read.errors;
}
