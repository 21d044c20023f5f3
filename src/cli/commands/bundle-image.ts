/**
 * `bosun bundle build`, `push` and `pull`: registry+v1 bundles as images (bundle/image.ts).
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BundleAnnotation } from '../../apis/bundle.js';
import { buildBundleImage, pullBundleImage } from '../../bundle/image.js';
import { isCSV } from '../../bundle/manifest.js';
import { readBundle, readBundleFiles } from '../../bundle/read.js';
import { validateBundle } from '../../bundle/validate.js';
import { ImageKind } from '../../olm/image-kind.js';
import type { FileMap } from '../../util/tar-write.js';
import { UsageError } from '../../util/errors.js';
import type { Problem } from '../../util/result.js';
import type { Command } from '../command.js';
import {
  argPath,
  countSummary,
  displayPath,
  emitReport,
  outputMode,
  outputOption,
} from './catalog/report.js';
import {
  buildTargetOptions,
  buildTargets,
  checkedBuildInput,
  deliver,
  deliveredSummary,
  layoutPushCommand,
} from './image-io.js';
import { imageArgument, platformOf, platformOption, registryClient, registryOptions } from './images.js';

const buildCommand: Command = {
  name: 'build',
  summary: 'Build a bundle image from a bundle directory and push it or write it to an OCI layout',
  usage: '<bundle-dir> (-t <ref> | --oci-layout <dir>[:tag])',
  description:
    "Validates the bundle, then builds the image operator-sdk's bundle Dockerfile makes: manifests/ and\n" +
    'metadata/ at the image root, labelled with every annotation of metadata/annotations.yaml\n' +
    '(operators.operatorframework.io.bundle.mediatype.v1, .package.v1, .channels.v1, ...). The image is\n' +
    'reproducible: one layer whose bytes depend only on the files (the tar `bosun bundle pack` writes),\n' +
    'no timestamps, so the same bundle always has the same digest. With -t it is pushed (credentials\n' +
    'from ~/.docker/config.json); with --oci-layout it is written into that folder. An invalid bundle\n' +
    'is not built.',
  args: { min: 1, max: 1 },
  options: { ...buildTargetOptions, ...platformOption, ...registryOptions, ...outputOption },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const targets = buildTargets(ctx, values, 'bundle build');
    const platform = platformOf(values);
    const dir = argPath(ctx, positionals[0]!);
    if (!(await lstat(dir).catch(() => undefined))?.isDirectory())
      throw new UsageError(`bundle build: ${positionals[0]} is not a bundle directory`);
    const input = await checkedBuildInput({
      read: () => readBundle(dir),
      validate: (bundle) => validateBundle(bundle),
      files: () => readBundleFiles(dir),
    });
    const base = {
      packages: input.content ? 1 : 0,
      bundles: input.content ? 1 : 0,
      warnings: input.warnings,
    };
    if (!input.ok)
      return emitReport(
        ctx,
        mode,
        { ok: false, ...base, errors: input.errors },
        `not built: ${displayPath(ctx, dir)} is not a valid bundle${countSummary(input)}`,
      );
    const image = buildBundleImage(input.files, input.content.annotations, platform);
    const delivered = await deliver(ctx, values, image, targets);
    const digest = image.manifest.descriptor.digest;
    const pkg = input.content.annotations[BundleAnnotation.Package] ?? '';
    const report = { ok: true, ...base, errors: [], package: pkg, digest, ...delivered };
    return emitReport(
      ctx,
      mode,
      report,
      `built bundle ${displayPath(ctx, dir)} (package ${pkg}) as ${digest}: ${deliveredSummary(delivered)}${countSummary(report)}`,
    );
  },
};

const pullCommand: Command = {
  name: 'pull',
  summary: 'Pull a bundle image into a new bundle directory',
  usage: '<ref> <dir>',
  description:
    'Pulls the bundle image <ref> (by the digest its tag names, every layer verified) and writes its\n' +
    'manifests/ and metadata/ into <dir>, a folder that must not exist yet, as the image holds them. The\n' +
    'image must be a bundle image (the label operators.operatorframework.io.bundle.package.v1, as opm\n' +
    'tells them) built by any tool. Its content is read and validated as `bosun bundle validate` reads a\n' +
    'folder; an invalid bundle is not written. Images of other platforms: --platform.',
  args: { min: 2, max: 2 },
  options: { ...platformOption, ...registryOptions, ...outputOption },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const ref = imageArgument(positionals[0]!, '<ref>');
    const dest = argPath(ctx, positionals[1]!);
    if (await lstat(dest).catch(() => undefined))
      throw new UsageError(`bundle pull: ${positionals[1]} exists already; bundle pull writes a new folder`);
    const client = await registryClient(ctx, values);
    let pulled: Awaited<ReturnType<typeof pullBundleImage>>;
    try {
      pulled = await pullBundleImage(client, ref, { platform: platformOf(values) });
    } finally {
      await client.close();
    }
    const fail = (errors: Problem[], warnings: Problem[]) =>
      emitReport(
        ctx,
        mode,
        { ok: false, packages: 0, bundles: 0, errors, warnings, image: pulled.pinned },
        `not pulled: ${pulled.pinned} does not hold a valid bundle${countSummary({ errors, warnings })}`,
      );
    if (!pulled.read.ok) return fail(pulled.read.errors, []);
    const { bundle, files } = pulled.read.value;
    const v = validateBundle(bundle);
    if (v.errors.length) return fail(v.errors, v.warnings);
    await writeNewFolder(dest, files);
    const pkg = bundle.annotations[BundleAnnotation.Package] ?? '';
    const csv = bundle.manifests.find((m) => isCSV(m.object))?.object;
    const name = (csv?.metadata as { name?: string } | undefined)?.name ?? '';
    const report = {
      ok: true,
      packages: 1,
      bundles: 1,
      errors: [],
      warnings: v.warnings,
      image: pulled.pinned,
      package: pkg,
      bundle: name,
      dir: displayPath(ctx, dest),
    };
    return emitReport(
      ctx,
      mode,
      report,
      `pulled ${pulled.pinned} (${name}, package ${pkg}) into ${displayPath(ctx, dest)}${countSummary(report)}`,
    );
  },
};

/**
 * Writes `files` as a new folder `dest`, all or nothing: into a temporary sibling first, renamed
 * into place only once every file is written. A `dest` that appeared meanwhile is not replaced.
 */
export async function writeNewFolder(dest: string, files: FileMap): Promise<void> {
  const temp = join(dirname(dest), `.${randomBytes(6).toString('hex')}.partial`);
  await mkdir(temp);
  try {
    for (const [rel, data] of files) {
      await mkdir(dirname(join(temp, rel)), { recursive: true });
      await writeFile(join(temp, rel), data, { flag: 'wx', mode: 0o644 });
    }
    if (await lstat(dest).catch(() => undefined))
      throw new UsageError(`${dest} appeared while it was being written; nothing was replaced`);
    await rename(temp, dest);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    throw err;
  }
}

export const bundleImageCommands: Command[] = [
  buildCommand,
  layoutPushCommand(ImageKind.Bundle, 'bundle'),
  pullCommand,
];
