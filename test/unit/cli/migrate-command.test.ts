/**
 * `bosun migrate subscription`'s command line, checked before any cluster is read: the namespace
 * and the Subscription are required, `--timeout` must be a duration of a second or more, and the
 * command is listed in `bosun --help` and `bosun migrate --help`. Each is a usage error (exit 2).
 */
import { describe, expect, it } from 'vitest';
import { runBosun } from './run-bosun.js';

// A kubeconfig that names no reachable cluster: a check that reached the cluster would fail otherwise.
const env = { KUBECONFIG: '/nonexistent/kubeconfig' };

describe('bosun migrate subscription’s command line', () => {
  it('is listed with what it does', async () => {
    const root = await runBosun(['--help'], { env });
    expect(root.stdout).toMatch(
      /^ {2}migrate +Move operators from OLM v0 Subscriptions to OLM v1 ClusterExtensions$/m,
    );
    const group = await runBosun(['migrate', '--help'], { env });
    expect(group.stdout).toMatch(
      /^ {2}subscription +Move an operator from its Subscription to a ClusterExtension, without reinstalling it$/m,
    );
  });

  it.each([
    [['migrate', 'subscription', 'widgets'], '-n <namespace> is required'],
    [['migrate', 'subscription', '-n', 'operators'], 'expected -n <namespace> <subscription>'],
    [['migrate', 'subscription', '-n', 'operators', 'a', 'b'], 'unexpected argument "b"'],
    [
      ['migrate', 'subscription', '-n', 'operators', 'a', '--timeout', 'soon'],
      '--timeout: "soon" is not a duration',
    ],
    [
      ['migrate', 'subscription', '-n', 'operators', 'a', '--timeout', '500ms'],
      '--timeout: "500ms" is not a duration of a second or more',
    ],
    [['migrate', 'subscription', '-n', 'operators', 'a', '--approve'], "Unknown option '--approve'"],
  ])('%j is a usage error: %s', async (args, message) => {
    const r = await runBosun(args, { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });
});
