/**
 * Image references for pulling and pushing: the grammar is opm's and distribution's
 * (src/olm/image-reference.ts, differential-tested against distribution/reference), completed as
 * Docker completes a familiar name: `busybox` is `docker.io/library/busybox:latest`. What is
 * added here is where to send requests: Docker Hub's API lives at `registry-1.docker.io`.
 */
import { parseImageReference } from '../olm/image-reference.js';
import { OciError } from './errors.js';

export interface ImageReference {
  /** The registry as named (with its port): `quay.io`, `docker.io`, `127.0.0.1:5000`. */
  registry: string;
  /** The repository inside it: `org/op`, `library/busybox`. */
  repository: string;
  tag?: string;
  digest?: string;
}

export const DockerHub = 'docker.io';
const dockerHubApi = 'registry-1.docker.io';

/** Parses a reference, defaulting the tag to `latest` when it has neither tag nor digest. */
export function parseReference(ref: string): ImageReference {
  const parsed = parseImageReference(ref);
  if (!parsed.ok) throw new OciError(`image reference "${ref}": ${parsed.error}`, { image: ref });
  const { domain, path, tag, digest } = parsed.value;
  return {
    registry: domain,
    repository: path,
    ...(tag !== undefined ? { tag } : digest === undefined ? { tag: 'latest' } : {}),
    ...(digest !== undefined && { digest }),
  };
}

/** The full form: `registry/repository[:tag][@digest]`. */
export function formatReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag !== undefined ? `:${ref.tag}` : ''}${ref.digest !== undefined ? `@${ref.digest}` : ''}`;
}

/** What a manifest is fetched by: the digest when there is one (it pins the content), else the tag. */
export function manifestReference(ref: ImageReference): string {
  return ref.digest ?? ref.tag ?? 'latest';
}

/** The host (and port) to send API requests to for `registry`. */
export function apiHost(registry: string): string {
  return registry === DockerHub ? dockerHubApi : registry;
}

/** The same image pinned to `digest`: the tag stays for messages, the digest decides. */
export function withDigest(ref: ImageReference, digest: string): ImageReference {
  return { ...ref, digest };
}
