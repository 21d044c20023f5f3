/**
 * What the image commands share (bundle and catalog build, push, pull, render, publish):
 * the registry flags, the client they make (credentials from the user's Docker config, a CA
 * file, registries marked insecure), image arguments told apart from paths, and OCI layout
 * arguments (`<dir>[:tag]`).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RegistryClient } from '../../oci/client.js';
import { dockerConfigPath, loadDockerConfig } from '../../oci/docker-config.js';
import { ImageLayout, RefNameAnnotation } from '../../oci/layout.js';
import { DefaultPlatform, parsePlatform, type Platform } from '../../oci/manifest.js';
import { type ImageReference, parseReference } from '../../oci/reference.js';
import { parseImageReference } from '../../olm/image-reference.js';
import { UsageError } from '../../util/errors.js';
import { type CommandContext, type OptionSpec, str, strs, type Values } from '../command.js';
import { argPath } from './catalog/report.js';

export const registryOptions: Record<'insecure' | 'ca-file', OptionSpec> = {
  insecure: {
    type: 'string',
    multiple: true,
    valueName: 'HOST[:PORT]',
    description:
      "Reach this registry over plain HTTP when it does not speak TLS (this machine's addresses always may); TLS certificates are checked all the same",
  },
  'ca-file': {
    type: 'string',
    valueName: 'FILE',
    description: 'Trust the PEM CA certificates in FILE for registries, beside the system roots',
  },
};

export const platformOption: Record<'platform', OptionSpec> = {
  platform: {
    type: 'string',
    valueName: 'OS/ARCH',
    description: 'The platform of the image (default linux/amd64)',
  },
};

export function platformOf(values: Values): Platform {
  const text = str(values, 'platform');
  return text === undefined ? DefaultPlatform : parsePlatform(text);
}

/**
 * A registry client for the command: credentials from `$DOCKER_CONFIG/config.json` (else
 * `~/.docker/config.json`, where `docker login`, `podman login` and `crane auth login` keep
 * them), the CA file, and the registries marked insecure.
 */
export async function registryClient(ctx: CommandContext, values: Values): Promise<RegistryClient> {
  const caFile = str(values, 'ca-file');
  let ca: string | undefined;
  if (caFile !== undefined) {
    const path = argPath(ctx, caFile);
    try {
      ca = await readFile(path, 'utf8');
    } catch (err) {
      throw new UsageError(`--ca-file: cannot read ${caFile}: ${(err as Error).message}`);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----'))
      throw new UsageError(`--ca-file: ${caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  const credentials = await loadDockerConfig(dockerConfigPath(ctx.env));
  return new RegistryClient({
    credentials,
    insecure: strs(values, 'insecure'),
    ...(ca !== undefined && { ca }),
  });
}

/** Parses an image reference argument; `what` names it in the message (`-t`, `<ref>`). */
export function imageArgument(text: string, what: string): ImageReference {
  const parsed = parseImageReference(text);
  if (!parsed.ok) throw new UsageError(`${what}: "${text}" is not an image reference: ${parsed.error}`);
  return parseReference(text);
}

/**
 * Whether an argument that may be a path or an image names an image: it is not a file or folder
 * here, and it names its registry (`quay.io/org/catalog:v1`, `localhost:5000/x`,
 * `docker.io/library/busybox`), as a reference to pull must. A path mistyped
 * (`catalogs/bosun-sampels`) is then reported as a missing path, not looked up on Docker Hub.
 */
export function namesImage(ctx: CommandContext, text: string): boolean {
  if (existsSync(argPath(ctx, text))) return false;
  const parsed = parseImageReference(text);
  if (!parsed.ok) return false;
  const first = text.split('/')[0]!;
  return text.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
}

/**
 * `<dir>[:tag]` or `<dir>@sha256:<hex>`: the folder, and the tag or digest that picks the image
 * (`latest` when none is given; `given` says whether one was).
 */
export function layoutArgument(
  ctx: CommandContext,
  text: string,
): { dir: string; tag: string; given: boolean } {
  const at = /@(sha256:[0-9a-f]{64})$/.exec(text);
  if (at) return { dir: argPath(ctx, text.slice(0, at.index)), tag: at[1]!, given: true };
  const colon = text.lastIndexOf(':');
  // A colon before the last slash belongs to the path, not to a tag.
  const hasTag = colon > text.lastIndexOf('/') && colon > 0;
  const dir = hasTag ? text.slice(0, colon) : text;
  const tag = hasTag ? text.slice(colon + 1) : 'latest';
  if (!/^[\w][\w.-]{0,127}$/.test(tag))
    throw new UsageError(`--oci-layout: "${tag}" is not a tag (letters, digits, _, . and -, at most 128)`);
  return { dir: argPath(ctx, dir), tag, given: hasTag };
}

/**
 * The image of a layout to read: the one `source` names; without a tag, `latest`, or else the
 * layout's only image (crane and skopeo write layouts whose images have no tag).
 */
export async function layoutImage(
  layout: ImageLayout,
  source: { dir: string; tag: string; given: boolean },
): Promise<string> {
  if (source.given) return source.tag;
  const manifests = (await layout.index()).manifests;
  if (manifests.some((m) => m.annotations?.[RefNameAnnotation] === source.tag)) return source.tag;
  if (manifests.length === 1) return manifests[0]!.digest;
  const names = manifests.map((m) => m.annotations?.[RefNameAnnotation] ?? m.digest);
  throw new UsageError(
    `${source.dir}: the layout holds ${manifests.length} images and none is tagged latest; name one as <dir>:<tag> or <dir>@<digest> (${names.slice(0, 10).join(', ')})`,
  );
}

/**
 * The OCI layout in `dir` to write into: made when the folder is missing or empty, opened when it
 * is a layout already; any other folder is refused, so that a layout never lands among other
 * files (a bundle's or a catalog's own folder, given by mistake).
 */
export async function layoutToWrite(dir: string): Promise<ImageLayout> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  if (entries.length > 0 && !entries.includes('oci-layout'))
    throw new UsageError(
      `--oci-layout: ${dir} is a folder that is not an OCI image layout (it has no oci-layout file); name a new or empty folder, or a layout`,
    );
  return ImageLayout.open(dir);
}

/** The OCI layout in `dir` to read: it must be one. */
export async function layoutToRead(dir: string): Promise<ImageLayout> {
  if (!existsSync(join(dir, 'oci-layout')))
    throw new UsageError(`${dir} is not an OCI image layout (it has no oci-layout file)`);
  return ImageLayout.open(dir);
}
