/**
 * Registry authentication, the pure part: the `WWW-Authenticate` challenges a registry answers
 * 401 with (RFC 7235; Docker's token flow puts `realm`, `service` and `scope` there), the scopes
 * a request needs, and credentials read from Docker's config format, which both a
 * `kubernetes.io/dockerconfigjson` Secret and `~/.docker/config.json` use.
 *
 * Credential helpers (`credsStore`, `credHelpers`) are not run: they are programs on the user's
 * machine, and the manager has none. A config that names one for a registry is reported, so the
 * user knows why no credentials were found.
 */
import { OciError } from './errors.js';
import { DockerHub } from './reference.js';

export interface Challenge {
  /** Lower-case: `basic`, `bearer`. */
  scheme: string;
  params: Record<string, string>;
}

/**
 * Every challenge in a `WWW-Authenticate` value. Parameter names are case-insensitive (kept
 * lower-case); values may be tokens or quoted strings with `\` escapes. What does not parse is
 * skipped rather than guessed at.
 */
export function parseChallenges(header: string): Challenge[] {
  const out: Challenge[] = [];
  let i = 0;
  const n = header.length;
  const skipSpace = () => {
    while (i < n && (header[i] === ' ' || header[i] === '\t')) i++;
  };
  const token = () => {
    const start = i;
    while (i < n && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  const quoted = () => {
    let value = '';
    i++; // the opening quote
    while (i < n && header[i] !== '"') {
      if (header[i] === '\\' && i + 1 < n) i++;
      value += header[i];
      i++;
    }
    i++; // the closing quote
    return value;
  };
  let current: Challenge | undefined;
  while (i < n) {
    skipSpace();
    if (header[i] === ',') {
      i++;
      continue;
    }
    const word = token();
    if (word === '') {
      i++; // a character no grammar allows here: step over it
      continue;
    }
    skipSpace();
    if (header[i] === '=') {
      // A parameter; one before any scheme belongs to no challenge and is read past. (A
      // token68 value such as `Basic abc==` is not a parameter, and registries do not send it.)
      i++;
      skipSpace();
      const value = header[i] === '"' ? quoted() : token();
      if (current) current.params[word.toLowerCase()] = value;
    } else {
      current = { scheme: word.toLowerCase(), params: {} };
      out.push(current);
    }
  }
  return out;
}

/** The scope a token must grant for `actions` on `repository` (Docker's token scope grammar). */
export function repositoryScope(repository: string, actions: readonly ('pull' | 'push')[]): string {
  return `repository:${repository}:${[...actions].sort().join(',')}`;
}

// ---- credentials ----

export interface Credential {
  username: string;
  password: string;
}

/** Where a set of credentials came from, for messages: `Secret ns/name`, `~/.docker/config.json`. */
export interface CredentialEntry {
  /** The registry host (with port), lower-case; `docker.io` for Docker Hub under any of its names. */
  host: string;
  /** A repository prefix the entry is limited to (kubelet's `registry/namespace` keys); '' for all. */
  path: string;
  credential: Credential;
  source: string;
}

export interface CredentialStore {
  entries: CredentialEntry[];
  /** Registries whose credentials a credential helper holds, which Bosun does not run. */
  helpers: { host: string; helper: string; source: string }[];
}

export const emptyCredentials: CredentialStore = { entries: [], helpers: [] };

/** The credential for `registry/repository`: the entry with the longest matching path, the first of equals. */
export function credentialFor(
  store: CredentialStore,
  registry: string,
  repository: string,
): CredentialEntry | undefined {
  const host = normalizeHost(registry);
  let best: CredentialEntry | undefined;
  for (const e of store.entries) {
    if (e.host !== host) continue;
    if (e.path !== '' && repository !== e.path && !repository.startsWith(`${e.path}/`)) continue;
    if (!best || e.path.length > best.path.length) best = e;
  }
  return best;
}

export function mergeCredentials(...stores: CredentialStore[]): CredentialStore {
  return { entries: stores.flatMap((s) => s.entries), helpers: stores.flatMap((s) => s.helpers) };
}

const dockerHubNames = new Set([
  'docker.io',
  'index.docker.io',
  'registry-1.docker.io',
  'registry.hub.docker.com',
]);

function normalizeHost(host: string): string {
  const h = host.toLowerCase();
  return dockerHubNames.has(h) ? DockerHub : h;
}

/**
 * The registry and repository prefix an `auths` key names. Keys come in every form Docker and
 * kubelet ever wrote: `quay.io`, `https://quay.io`, `https://index.docker.io/v1/`,
 * `localhost:5000/v2/`, `registry.example.com/team`.
 */
export function parseAuthKey(key: string): { host: string; path: string } | undefined {
  const rest = key.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = rest.indexOf('/');
  const host = slash === -1 ? rest : rest.slice(0, slash);
  if (!/^(?:[a-z0-9.-]+|\[[0-9a-f:]+\])(?::[0-9]+)?$/i.test(host)) return undefined;
  let path = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
  // The API version Docker appends to registry URLs is not a repository.
  if (path === 'v1' || path === 'v2') path = '';
  return { host: normalizeHost(host), path };
}

/**
 * Credentials from a Docker config document: `{"auths": {...}}` (config.json and
 * `.dockerconfigjson`) or, with `legacy`, the bare map of the old `.dockercfg`. Each entry's
 * `auth` (base64 of `user:password`) or its `username` and `password`. A malformed document or
 * entry is an error naming `source` and the key.
 */
export function credentialsFromDockerConfig(text: string, source: string, legacy = false): CredentialStore {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new OciError(`${source}: not a JSON Docker config: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new OciError(`${source}: a Docker config is a JSON object`);
  const d = doc as Record<string, unknown>;
  const auths = legacy ? d : (d.auths ?? {});
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths))
    throw new OciError(`${source}: auths: is not an object of registries`);
  const entries: CredentialEntry[] = [];
  for (const [key, value] of Object.entries(auths)) {
    const field = `auths["${key.slice(0, 200)}"]`;
    const at = parseAuthKey(key);
    if (!at) throw new OciError(`${source}: ${field}: is not a registry address`);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new OciError(`${source}: ${field}: is not an object`);
    const credential = credentialOf(value as Record<string, unknown>, `${source}: ${field}`);
    // An entry with neither (Docker writes `{}` for registries a helper serves) gives no credential.
    if (credential) entries.push({ ...at, credential, source });
  }
  const helpers: CredentialStore['helpers'] = [];
  if (!legacy) {
    if (typeof d.credHelpers === 'object' && d.credHelpers !== null)
      for (const [key, helper] of Object.entries(d.credHelpers)) {
        const at = parseAuthKey(key);
        if (at && typeof helper === 'string') helpers.push({ host: at.host, helper, source });
      }
    if (typeof d.credsStore === 'string' && d.credsStore !== '')
      helpers.push({ host: '*', helper: d.credsStore, source });
  }
  return { entries, helpers };
}

function credentialOf(v: Record<string, unknown>, where: string): Credential | undefined {
  if (v.auth !== undefined && v.auth !== '') {
    if (typeof v.auth !== 'string') throw new OciError(`${where}.auth: is not a string`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v.auth)) throw new OciError(`${where}.auth: is not base64`);
    const decoded = Buffer.from(v.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) throw new OciError(`${where}.auth: is not the base64 of "username:password"`);
    return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (v.username !== undefined || v.password !== undefined) {
    if (typeof v.username !== 'string' || typeof v.password !== 'string')
      throw new OciError(`${where}: username and password must both be strings`);
    return { username: v.username, password: v.password };
  }
  return undefined;
}

/** The types of Secret that hold Docker configs, and the key each keeps it under. */
export const DockerConfigSecret = {
  'kubernetes.io/dockerconfigjson': '.dockerconfigjson',
  'kubernetes.io/dockercfg': '.dockercfg',
} as const;

/**
 * Credentials from a pull Secret as the API server returns it (`data` values base64), as a
 * CatalogSource's `spec.secrets` names them. A Secret of another type, or without its key, is an
 * error naming it.
 */
export function credentialsFromSecret(secret: {
  metadata?: { name?: string; namespace?: string };
  type?: string;
  data?: Record<string, string>;
}): CredentialStore {
  const name = `Secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  const key = DockerConfigSecret[secret.type as keyof typeof DockerConfigSecret] as string | undefined;
  if (key === undefined)
    throw new OciError(
      `${name}: type: is "${secret.type ?? ''}"; registry credentials must be in a Secret of type kubernetes.io/dockerconfigjson`,
    );
  const value = secret.data?.[key];
  if (typeof value !== 'string') throw new OciError(`${name}: data.${key}: is missing`);
  return credentialsFromDockerConfig(
    Buffer.from(value, 'base64').toString('utf8'),
    `${name} data.${key}`,
    key === '.dockercfg',
  );
}
