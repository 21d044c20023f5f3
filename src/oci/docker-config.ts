/**
 * The bosun command's credentials: the user's Docker config (`$DOCKER_CONFIG/config.json`, else
 * `~/.docker/config.json`), where `docker login`, `podman login --authfile` and `crane auth
 * login` keep them. A missing file means no credentials; an unreadable or malformed one is an
 * error naming it.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readFileNoFollow } from '../util/confined-fs.js';
import { type CredentialStore, credentialsFromDockerConfig, emptyCredentials } from './auth.js';
import { OciError } from './errors.js';

/** A config file is a few KiB; one larger than this is not one. */
const MaxConfigBytes = 1024 * 1024;

export function dockerConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DOCKER_CONFIG || join(homedir(), '.docker'), 'config.json');
}

export async function loadDockerConfig(path: string = dockerConfigPath()): Promise<CredentialStore> {
  let data: Buffer;
  try {
    data = await readFileNoFollow(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyCredentials;
    throw new OciError(`${path}: cannot read the Docker config: ${(err as Error).message}`);
  }
  if (data.length > MaxConfigBytes)
    throw new OciError(
      `${path}: is ${data.length} bytes, more than a Docker config may be (${MaxConfigBytes})`,
    );
  return credentialsFromDockerConfig(data.toString('utf8'), path);
}
