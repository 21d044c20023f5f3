/**
 * Server-side apply under one field manager (`bosun`) with forced ownership. The labels and
 * ownerReferences every object Bosun creates carries are src/install/ownership.ts's.
 *
 * Why not `KubernetesObjectApi.patch(obj, ..., PatchStrategy.ServerSideApply)`: for every kind
 * client-node has a model for, it first re-serialises the object through that model, which
 * drops what the model does not know. For a CustomResourceDefinition that silently loses
 * `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-int-or-string` (the model spells them
 * with underscores), and for a Deployment any field newer than the client. So the apply patch is
 * sent as the JSON it is, through KubeClient, to the resource discovery names for its kind.
 */
import type { KubeObject, ObjectMeta } from '../apis/meta.js';
import type { Impersonation, KubeClient } from './client.js';
import { isNotFound } from './errors.js';

export const FieldManager = 'bosun';

/** The content type of a server-side apply patch. */
export const ApplyPatchContentType = 'application/apply-patch+yaml';

/** Metadata the API server sets; sent back in an apply it would make the apply conditional or fail. */
const serverSetMetadata: (keyof ObjectMeta)[] = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
];

/**
 * The body of an apply patch: `obj` without server-set metadata, and with only the part the
 * endpoint applies (everything but status for the object, only status for its subresource).
 */
export function applyPatchBody<T extends KubeObject>(
  obj: T,
  keep: 'spec' | 'status',
): Record<string, unknown> {
  const { metadata, ...rest } = obj as T & { status?: unknown };
  const meta: Record<string, unknown> = { ...metadata };
  for (const field of serverSetMetadata) delete meta[field];
  const body: Record<string, unknown> = { ...rest, metadata: meta };
  // Sending only the applied part keeps the field manager from claiming fields it did not set.
  if (keep === 'spec') delete body.status;
  else
    for (const k of Object.keys(body))
      if (!['apiVersion', 'kind', 'metadata', 'status'].includes(k)) delete body[k];
  return body;
}

interface APIResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/**
 * Which resource serves a kind, and whether it is namespaced: the API server's discovery document
 * of the group/version, cached, and asked again when a kind is missing from it (a CRD installed
 * since), as kubectl's discovery cache does.
 */
export class Discovery {
  private readonly cache = new Map<string, APIResource[]>();

  constructor(private readonly client: KubeClient) {}

  async lookup(apiVersion: string, kind: string): Promise<APIResource | undefined> {
    const find = (list: APIResource[] | undefined) =>
      list?.find((r) => r.kind === kind && !r.name.includes('/'));
    const cached = find(this.cache.get(apiVersion));
    if (cached) return cached;
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let list: APIResource[];
    try {
      list = (await this.client.request<{ resources?: APIResource[] }>({ path })).resources ?? [];
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    this.cache.set(apiVersion, list);
    return find(list);
  }
}

export class Applier {
  private readonly discovery: Discovery;

  constructor(
    private readonly client: KubeClient,
    private readonly fieldManager: string = FieldManager,
    discovery?: Discovery,
  ) {
    this.discovery = discovery ?? new Discovery(client);
  }

  /**
   * An Applier whose writes are made as `as.user` (KubeClient.impersonating), under the same
   * field manager. Discovery stays this Applier's: which resource serves a kind is the same for
   * every user, and the cache is kept.
   */
  impersonating(as: Impersonation): Applier {
    return new Applier(this.client.impersonating(as), this.fieldManager, this.discovery);
  }

  /** The resource that serves a kind (its plural name) and whether it is namespaced, or undefined. */
  async resourceFor(
    apiVersion: string,
    kind: string,
  ): Promise<{ name: string; namespaced: boolean } | undefined> {
    const found = await this.discovery.lookup(apiVersion, kind);
    return found && { name: found.name, namespaced: found.namespaced };
  }

  /**
   * Creates or updates `obj` (everything but its status) so that the fields it sets are owned by
   * Bosun, taking them over from any other manager. Returns the object as stored.
   */
  async apply<T extends KubeObject>(obj: T): Promise<T> {
    return this.patch(obj, '', applyPatchBody(obj, 'spec'));
  }

  /** What `apply` would store, without storing it (server-side dry run). */
  async dryRun<T extends KubeObject>(obj: T): Promise<T> {
    return this.patch(obj, '', applyPatchBody(obj, 'spec'), { dryRun: 'All' });
  }

  /** Applies `obj.status` through the status subresource. Returns the object as stored. */
  async applyStatus<T extends KubeObject>(obj: T): Promise<T> {
    return this.patch(obj, '/status', applyPatchBody(obj, 'status'));
  }

  /** The URL path of `obj`, found through API discovery (cached per group/version). */
  async pathOf(obj: KubeObject): Promise<string> {
    const { apiVersion, kind } = obj;
    const name = obj.metadata?.name;
    if (!apiVersion || !kind || !name) {
      throw new Error(
        `cannot address an object without apiVersion, kind and metadata.name: ${describe(obj)}`,
      );
    }
    const resource = await this.discovery.lookup(apiVersion, kind);
    if (!resource) throw new Error(`the API server does not serve ${kind} in ${apiVersion}`);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let ns = '';
    if (resource.namespaced) {
      const namespace = obj.metadata?.namespace;
      if (!namespace)
        throw new Error(`${describe(obj)}: ${kind} is namespaced but metadata.namespace is empty`);
      ns = `/namespaces/${encodeURIComponent(namespace)}`;
    }
    return `${base}${ns}/${resource.name}/${encodeURIComponent(name)}`;
  }

  private async patch<T extends KubeObject>(
    obj: T,
    subresource: string,
    body: unknown,
    extra: Record<string, string> = {},
  ): Promise<T> {
    const path = (await this.pathOf(obj)) + subresource;
    return this.client.request<T>({
      method: 'PATCH',
      path,
      query: { fieldManager: this.fieldManager, force: true, ...extra },
      body,
      contentType: ApplyPatchContentType,
    });
  }
}

function describe(obj: KubeObject): string {
  const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : '';
  return `${obj.kind ?? '?'} ${ns}${obj.metadata?.name ?? '?'}`;
}
