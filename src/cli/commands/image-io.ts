/**
 * Where a built image goes (`build -t <ref>` to a registry, `--oci-layout <dir>[:tag]` to a
 * folder) and how an image built before goes from a layout to a registry (`push`): the part of
 * the bundle and catalog image commands that does not depend on what the image holds.
 */
import { type ImageKind, imageKindOf, wrongKind } from '../../olm/image-kind.js';
import { type BuiltImage, pushImage, writeImageToLayout } from '../../oci/build.js';
import { OciError } from '../../oci/errors.js';
import { parseImageConfig } from '../../oci/image-config.js';
import { type ImageLayout, pushFromLayout } from '../../oci/layout.js';
import { MaxManifestBytes, parseManifest, type Descriptor } from '../../oci/manifest.js';
import { formatReference } from '../../oci/reference.js';
import { UsageError } from '../../util/errors.js';
import type { Problem, Result } from '../../util/result.js';
import type { FileMap } from '../../util/tar-write.js';
import { type Command, type CommandContext, type OptionSpec, str, type Values } from '../command.js';
import { countSummary, displayPath, emitReport, outputMode, outputOption } from './catalog/report.js';
import {
  imageArgument,
  layoutArgument,
  layoutImage,
  layoutToRead,
  layoutToWrite,
  registryClient,
  registryOptions,
} from './images.js';

export const buildTargetOptions: Record<'tag' | 'oci-layout', OptionSpec> = {
  tag: {
    type: 'string',
    short: 't',
    valueName: 'REF',
    description: 'Push the image to this registry reference (registry/repository[:tag])',
  },
  'oci-layout': {
    type: 'string',
    valueName: 'DIR[:TAG]',
    description: 'Write the image into this OCI image layout folder, under TAG (default latest)',
  },
};

export interface Delivered {
  /** `registry/repository:tag@digest`, when pushed. */
  pushed: string | null;
  /** `dir:tag`, when written to a layout. */
  layout: string | null;
}

/** The targets a build command was given; at least one is required, checked before any work. */
export function buildTargets(ctx: CommandContext, values: Values, name: string) {
  const tag = str(values, 'tag');
  const layout = str(values, 'oci-layout');
  if (tag === undefined && layout === undefined)
    throw new UsageError(
      `${name}: give -t <ref> to push the image, --oci-layout <dir>[:tag] to write it, or both`,
    );
  return {
    ref: tag === undefined ? undefined : imageArgument(tag, '-t'),
    layout: layout === undefined ? undefined : layoutArgument(ctx, layout),
  };
}

/** What a build command builds from: the content as read, and its files, or every problem found. */
export type BuildInput<T> =
  | { ok: true; content: T; files: FileMap; warnings: Problem[] }
  | { ok: false; content?: T; errors: Problem[]; warnings: Problem[] };

/**
 * The checks every build command makes before it builds: read the content, validate it, then
 * read its files for the image. Files are read only for valid content, so an invalid bundle or
 * catalog reports its validation errors, never a later step's.
 */
export async function checkedBuildInput<T>(steps: {
  read: () => Promise<Result<T>>;
  validate: (content: T) => { errors: Problem[]; warnings: Problem[] };
  files: () => Promise<Result<FileMap>>;
}): Promise<BuildInput<T>> {
  const read = await steps.read();
  if (!read.ok) return { ok: false, errors: read.errors, warnings: [] };
  const { errors, warnings } = steps.validate(read.value);
  if (errors.length) return { ok: false, content: read.value, errors, warnings };
  const files = await steps.files();
  if (!files.ok) return { ok: false, content: read.value, errors: files.errors, warnings };
  return { ok: true, content: read.value, files: files.value, warnings };
}

/** Pushes and writes a built image where `targets` say. */
export async function deliver(
  ctx: CommandContext,
  values: Values,
  image: BuiltImage,
  targets: ReturnType<typeof buildTargets>,
): Promise<Delivered> {
  const out: Delivered = { pushed: null, layout: null };
  if (targets.layout) {
    await writeImageToLayout(await layoutToWrite(targets.layout.dir), image, targets.layout.tag);
    out.layout = `${displayPath(ctx, targets.layout.dir)}:${targets.layout.tag}`;
  }
  if (targets.ref) {
    const client = await registryClient(ctx, values);
    try {
      const digest = await pushImage(client, targets.ref, image);
      out.pushed = `${formatReference(targets.ref)}@${digest}`;
    } finally {
      await client.close();
    }
  }
  return out;
}

export const deliveredSummary = (d: Delivered): string =>
  [d.pushed && `pushed ${d.pushed}`, d.layout && `written to ${d.layout}`].filter(Boolean).join(', ');

/** Blobs of a layout image are read whole before they are pushed; a catalog layer stays far below. */
const MaxLayoutBlobBytes = 1024 * 1024 * 1024;

/** The labels of every image `top` names in the layout (itself, or each of an index's). */
async function layoutLabels(layout: ImageLayout, top: Descriptor): Promise<Record<string, string>[]> {
  const bytes = await layout.readBlob(top, MaxManifestBytes);
  const manifest = parseManifest(bytes, top.mediaType, { image: layout.dir, digest: top.digest });
  if (manifest.kind === 'index') {
    const all: Record<string, string>[] = [];
    for (const child of manifest.manifests) all.push(...(await layoutLabels(layout, child)));
    return all;
  }
  const config = await layout.readBlob(manifest.config, MaxManifestBytes);
  return [parseImageConfig(config, { image: layout.dir, digest: manifest.config.digest }).labels];
}

/** `bosun bundle push` and `bosun catalog push`: an image of a layout to a registry, checked to be of `kind`. */
export function layoutPushCommand(kind: Exclude<ImageKind, 'unknown'>, noun: 'bundle' | 'catalog'): Command {
  return {
    name: 'push',
    summary: `Push a ${noun} image from an OCI image layout to a registry`,
    usage: '<layout-dir>[:tag|@digest] <ref>',
    description:
      `Copies the ${noun} image tagged <tag> (default: latest, or the layout's only image) or of the\n` +
      `digest given as <layout-dir>@sha256:..., in an OCI image layout folder (\`bosun ${noun} build\n` +
      `--oci-layout\` writes one, so does \`crane pull --format oci\`), to the registry reference <ref>:\n` +
      'the same manifest, config and layers, so the same digest. Blobs the registry has are not sent\n' +
      `again. An image that is not a ${noun} image (its labels say so) is refused. To build and push in\n` +
      `one step, use \`bosun ${noun} build <dir> -t <ref>\`.`,
    args: { min: 2, max: 2 },
    options: { ...registryOptions, ...outputOption },
    run: async ({ values, positionals, ctx }) => {
      const mode = outputMode(values);
      const source = layoutArgument(ctx, positionals[0]!);
      const ref = imageArgument(positionals[1]!, '<ref>');
      const layout = await layoutToRead(source.dir);
      const selector = await layoutImage(layout, source);
      const top = await layout.find(selector);
      const shown = `${displayPath(ctx, source.dir)}${selector.startsWith('sha256:') ? '@' : ':'}${selector}`;
      for (const labels of await layoutLabels(layout, top))
        if (imageKindOf(labels) !== kind) throw new OciError(`${shown}: ${wrongKind(kind, labels)}`);
      const client = await registryClient(ctx, values);
      try {
        const digest = await pushFromLayout(client, layout, selector, ref, {
          maxBlobBytes: MaxLayoutBlobBytes,
        });
        const pushed = `${formatReference(ref)}@${digest}`;
        const report = { ok: true, packages: 0, bundles: 0, errors: [], warnings: [], pushed, digest };
        return emitReport(ctx, mode, report, `pushed ${shown} as ${pushed}${countSummary(report)}`);
      } finally {
        await client.close();
      }
    },
  };
}
