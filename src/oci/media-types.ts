/**
 * The media types of image manifests, indexes, configs and layers, OCI's and Docker's (v2
 * schema 2). Docker's schema 1 is refused by name: registries stopped serving it, and its
 * signatures are not digests of content.
 */
export const MediaType = {
  OciManifest: 'application/vnd.oci.image.manifest.v1+json',
  OciIndex: 'application/vnd.oci.image.index.v1+json',
  OciConfig: 'application/vnd.oci.image.config.v1+json',
  OciLayer: 'application/vnd.oci.image.layer.v1.tar',
  OciLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  OciLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  OciEmpty: 'application/vnd.oci.empty.v1+json',
  DockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  DockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  DockerConfig: 'application/vnd.docker.container.image.v1+json',
  DockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  DockerSchema1: 'application/vnd.docker.distribution.manifest.v1+json',
  DockerSchema1Signed: 'application/vnd.docker.distribution.manifest.v1+prettyjws',
} as const;
export type MediaType = (typeof MediaType)[keyof typeof MediaType];

export const imageManifestTypes: readonly string[] = [MediaType.OciManifest, MediaType.DockerManifest];
export const indexTypes: readonly string[] = [MediaType.OciIndex, MediaType.DockerManifestList];

/** The Accept header of a manifest request: every kind this client reads. */
export const manifestAccept = [...imageManifestTypes, ...indexTypes].join(', ');

/** How a layer of this media type is compressed, as far as its type says; `undefined` when it does not say. */
export function layerCompression(mediaType: string): 'gzip' | 'zstd' | 'none' | undefined {
  // Docker's type says gzip; OCI's say it in a suffix. Foreign and non-distributable variants
  // (`...foreign.diff.tar.gzip`, `...nondistributable...+gzip`) follow the same suffixes.
  if (mediaType.endsWith('+gzip') || mediaType.endsWith('.tar.gzip')) return 'gzip';
  if (mediaType.endsWith('+zstd')) return 'zstd';
  if (mediaType.endsWith('.tar') || mediaType.endsWith('diff.tar')) return 'none';
  return undefined;
}
