/**
 * How the manager reaches an image registry for a CatalogSource: with the credentials of the
 * pull Secrets its `spec.secrets` names (Secrets of type `kubernetes.io/dockerconfigjson` or
 * `kubernetes.io/dockercfg` in the CatalogSource's namespace, as OLM hands them to its catalog
 * pod), over the transport the manager was started with (extra CA certificates, registries an
 * admin marked insecure; loopback registries are plain HTTP already, src/oci/transport.ts).
 *
 * Reading a Secret is Kubernetes I/O, the controllers' side: this is given a PullSecretReader
 * (src/controllers/catalogsource-secrets.ts makes one of a KubeClient). A client is made per
 * fetch and closed after it, so credentials never outlive the Secret they came from and one
 * CatalogSource's credentials are never offered for another's images.
 */
import {
  type CredentialStore,
  credentialsFromSecret,
  emptyCredentials,
  mergeCredentials,
} from '../../oci/auth.js';
import { RegistryClient } from '../../oci/client.js';
import type { TransportOptions } from '../../oci/transport.js';

/** A Secret as the API server returns it, as far as credentials are read from it. */
export interface PullSecret {
  metadata?: { name?: string; namespace?: string };
  type?: string;
  data?: Record<string, string>;
}

export type PullSecretRead =
  { ok: true; secret: PullSecret } | { ok: false; notFound: boolean; message: string };

/** Reads one Secret; an error the API server did not answer with is thrown. */
export type PullSecretReader = (namespace: string, name: string) => Promise<PullSecretRead>;

export interface SecretOptions {
  /** How messages name the i-th Secret (default `spec.secrets[i]`). */
  field?: (index: number) => string;
  /**
   * A Secret that does not exist is no credentials rather than an error: the manager's global
   * pull Secret, which catalogd too pulls without until it is there.
   */
  missingIsAnonymous?: boolean;
}

export type OpenedClient = { ok: true; client: RegistryClient } | { ok: false; message: string };

export interface RegistryAccess {
  /**
   * A client carrying the credentials of the pull Secrets `secrets` names in `namespace` (the
   * caller closes it), or why there is none: a Secret that is missing, unreadable, of another
   * type or malformed, named with the field that names it (`spec.secrets[0]` unless `opts` says).
   */
  clientFor(namespace: string, secrets: readonly string[], opts?: SecretOptions): Promise<OpenedClient>;
}

export function registryAccess(deps: {
  readSecret: PullSecretReader;
  transport?: TransportOptions;
  /** Makes the client (tests count or stand in for it). */
  newClient?: (opts: TransportOptions & { credentials: CredentialStore }) => RegistryClient;
}): RegistryAccess {
  const newClient = deps.newClient ?? ((opts) => new RegistryClient(opts));
  return {
    async clientFor(namespace, secrets, opts = {}) {
      const fieldOf = opts.field ?? ((i) => `spec.secrets[${i}]`);
      const stores: CredentialStore[] = [];
      for (const [i, name] of secrets.entries()) {
        const field = fieldOf(i);
        const got = await deps.readSecret(namespace, name);
        if (!got.ok && got.notFound && opts.missingIsAnonymous) continue;
        if (!got.ok) {
          // A Secret the user named but Bosun cannot read is an error, not an anonymous pull:
          // the pull would fail for an unrelated-looking reason (401) or, worse, succeed from a
          // mirror the user did not mean.
          const why = got.notFound ? 'does not exist' : got.message;
          return { ok: false, message: `${field}: Secret ${namespace}/${name} ${why}` };
        }
        try {
          stores.push(credentialsFromSecret(got.secret));
        } catch (err) {
          return { ok: false, message: `${field}: ${(err as Error).message}` };
        }
      }
      const credentials = stores.length ? mergeCredentials(...stores) : emptyCredentials;
      return { ok: true, client: newClient({ ...deps.transport, credentials }) };
    },
  };
}
