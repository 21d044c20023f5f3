/**
 * The Kubernetes side of a CatalogSource's pull Secrets (`spec.secrets`): reading one for the
 * registry access of src/catalog/content (registry-access.ts), which turns it into credentials.
 * Only the Secrets a CatalogSource names are read, in its own namespace, when its image (or a
 * bundle image of its catalog) is pulled; nothing watches or caches Secrets.
 */
import type { ResourceType } from '../apis/meta.js';
import type { PullSecret, PullSecretReader } from '../catalog/content/registry-access.js';
import { type KubeClient, objectPath } from '../kube/client.js';
import { formatApiError, isNotFound, parseApiError } from '../kube/errors.js';

const SecretResource: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
};

/** Reads Secrets with `client`: an answer of the API server is a value, anything else is thrown. */
export function pullSecretReader(client: KubeClient): PullSecretReader {
  return async (namespace, name) => {
    try {
      const path = objectPath(SecretResource, name, namespace);
      return { ok: true, secret: await client.request<PullSecret>({ path }) };
    } catch (err) {
      const apiError = parseApiError(err);
      if (!apiError) throw err;
      return { ok: false, notFound: isNotFound(err), message: formatApiError(apiError) };
    }
  };
}
