/**
 * How the manager reaches image registries (catalog images, bundle images), as a cluster admin
 * sets it in the manager's environment, since it is the manager's trust to extend and not any
 * CatalogSource author's:
 * - `BOSUN_REGISTRY_CA_FILES`: PEM files of CA certificates trusted beside the system's roots (a
 *   private registry's CA), separated by commas;
 * - `BOSUN_INSECURE_REGISTRIES`: registries (`host` or `host:port`, separated by commas) that may
 *   be reached over plain HTTP, after HTTPS is tried. A loopback registry (127.0.0.1, ::1,
 *   localhost) is that already.
 * - `BOSUN_BUNDLE_IMAGE_CACHE_MIB`: the bound of the on-disk cache of unpacked bundle images.
 * - `BOSUN_GLOBAL_PULL_SECRET`: `namespace/name` of the pull Secret OLM v1 ClusterCatalogs' images
 *   are pulled with (catalogd's `--global-pull-secret`; `bosun operator run --global-pull-secret`).
 * A setting that does not parse stops the manager at start, naming the variable and the value.
 */
import { readFile } from 'node:fs/promises';
import type { TransportOptions } from '../oci/transport.js';
import { UserError } from '../util/errors.js';

export const RegistryEnv = {
  CaFiles: 'BOSUN_REGISTRY_CA_FILES',
  Insecure: 'BOSUN_INSECURE_REGISTRIES',
  BundleCacheMiB: 'BOSUN_BUNDLE_IMAGE_CACHE_MIB',
  GlobalPullSecret: 'BOSUN_GLOBAL_PULL_SECRET',
} as const;

/**
 * Unpacked bundle images kept on disk. A bundle's manifests are rarely over a MiB (the largest of
 * the 2021 corpus is a few), so this keeps hundreds, more than one manager installs at a time.
 */
export const DefaultBundleCacheMiB = 256;

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A registry name as references carry it: a host, optionally with a port; no scheme, path or credentials. */
const RegistryName = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$/;

/** The transport options the environment sets. */
export async function registryTransport(env: NodeJS.ProcessEnv = process.env): Promise<TransportOptions> {
  const insecure = list(env[RegistryEnv.Insecure]);
  for (const name of insecure)
    if (!RegistryName.test(name))
      throw new UserError(
        `${RegistryEnv.Insecure}: "${name}" is not a registry name (host or host:port, without a scheme or path)`,
      );
  const ca: string[] = [];
  for (const file of list(env[RegistryEnv.CaFiles])) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new UserError(`${RegistryEnv.CaFiles}: cannot read ${file}: ${(err as Error).message}`);
    }
    if (!text.includes('-----BEGIN CERTIFICATE-----'))
      throw new UserError(
        `${RegistryEnv.CaFiles}: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
      );
    ca.push(text);
  }
  return { ...(ca.length ? { ca } : {}), ...(insecure.length ? { insecure } : {}) };
}

/** The bundle image cache's bound in bytes. */
export function bundleCacheBytes(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[RegistryEnv.BundleCacheMiB];
  if (text === undefined || text === '') return DefaultBundleCacheMiB * 1024 * 1024;
  const mib = Number(text);
  if (!Number.isSafeInteger(mib) || mib < 1)
    throw new UserError(`${RegistryEnv.BundleCacheMiB}: "${text}" is not a whole number of MiB, 1 or more`);
  return mib * 1024 * 1024;
}

/** A pull Secret by namespace and name. */
export interface SecretRef {
  namespace: string;
  name: string;
}

/**
 * The global pull Secret BOSUN_GLOBAL_PULL_SECRET names (`namespace/name`), if any; a value that
 * is not one is an error naming `what` (the variable, or the flag that gave it).
 */
export function globalPullSecretOf(
  env: NodeJS.ProcessEnv,
  what: string = RegistryEnv.GlobalPullSecret,
): SecretRef | undefined {
  const text = env[RegistryEnv.GlobalPullSecret]?.trim();
  if (!text) return undefined;
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(text);
  if (!m || text.length > 63 + 1 + 253)
    throw new UserError(`${what}: "${text}" is not a Secret's namespace/name (e.g. olm/pull-secret)`);
  return { namespace: m[1]!, name: m[3]! };
}
