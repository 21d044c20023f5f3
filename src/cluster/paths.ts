import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The control plane `bosun cluster up` and `bosun start` use unless told another name. */
export const defaultClusterName = 'bosun';

/** Where built binaries are kept between runs: `$XDG_CACHE_HOME/bosun` or `~/.cache/bosun`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'bosun');
}

/** Where running control planes keep their data, certificates, logs and kubeconfig. */
export function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'bosun', 'clusters');
}

/** The Go build recipes (go.mod + go.sum) shipped with Bosun; src/cluster and dist/cluster both sit two levels down. */
export const recipeRoot: string = fileURLToPath(new URL('../../tools/controlplane', import.meta.url));
