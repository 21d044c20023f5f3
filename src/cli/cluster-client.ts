/**
 * The cluster a command talks to: the kubeconfig of `--kubeconfig` (or KUBECONFIG, ~/.kube/config,
 * in-cluster), a client for the command's run, and the API server's refusals said as user errors.
 */
import { KubeClient } from '../kube/client.js';
import { loadKubeConfig } from '../kube/config.js';
import { formatApiError, parseApiError } from '../kube/errors.js';
import { UserError } from '../util/errors.js';
import { type CommandContext, str, type Values } from './command.js';

export async function withClusterClient<T>(
  values: Values,
  ctx: CommandContext,
  run: (client: KubeClient) => Promise<T>,
): Promise<T> {
  const { access } = loadKubeConfig({ path: str(values, 'kubeconfig'), env: ctx.env });
  const client = new KubeClient(access);
  try {
    return await run(client);
  } catch (err) {
    const api = parseApiError(err);
    if (api) throw new UserError(`the API server refused: ${formatApiError(api)}`);
    throw err;
  } finally {
    client.close();
  }
}
