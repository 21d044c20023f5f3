/**
 * The `kubectl operator` plugin v0.6.0 (github.com/operator-framework/kubectl-operator), built
 * from its Go module by tools/kubectl-operator (go.mod and go.sum only: the released command
 * itself is built) and cached like the other Go tools. The compatibility test runs it against
 * Bosun and skips, saying why, when it cannot be built here.
 */
import { resolve } from 'node:path';
import { type GoProgram, goProgram } from './go-tool.js';

export const KubectlOperatorVersion = 'v0.6.0';

export function kubectlOperatorBinary(opts: { build?: boolean } = {}): Promise<GoProgram> {
  return goProgram(resolve(import.meta.dirname, '../../tools/kubectl-operator'), {
    name: 'kubectl-operator',
    kind: 'tools',
    pkg: 'github.com/operator-framework/kubectl-operator',
    build: opts.build,
    log: (l) => process.stderr.write(`[kubectl-operator] ${l}\n`),
    expected: 'about 3 minutes on two cores',
  });
}
