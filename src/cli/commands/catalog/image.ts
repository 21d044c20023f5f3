/**
 * `bosun catalog build`, `push` and `pull`: file-based catalogs as images (catalog/image.ts).
 */
import { randomBytes } from 'node:crypto';
import { lstat, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  buildCatalogImage,
  imageProblems,
  pullCatalogImage,
  readCatalogFiles,
} from '../../../catalog/image.js';
import { loadCatalog } from '../../../catalog/load.js';
import { validateCatalog } from '../../../catalog/validate.js';
import { ImageKind } from '../../../olm/image-kind.js';
import { UsageError } from '../../../util/errors.js';
import type { Command } from '../../command.js';
import {
  buildTargetOptions,
  buildTargets,
  checkedBuildInput,
  deliver,
  deliveredSummary,
  layoutPushCommand,
} from '../image-io.js';
import { imageArgument, platformOf, platformOption, registryClient, registryOptions } from '../images.js';
import { detectInput, InputKind } from './inputs.js';
import {
  argPath,
  countSummary,
  displayPath,
  emitReport,
  outputMode,
  outputOption,
  plural,
} from './report.js';

const buildCommand: Command = {
  name: 'build',
  summary: 'Build a catalog image from a catalog directory and push it or write it to an OCI layout',
  usage: '<catalog-dir> (-t <ref> | --oci-layout <dir>[:tag])',
  description:
    "Validates the catalog, then builds the image opm's generated Dockerfile makes of it, without opm:\n" +
    'its files under /configs/, labelled operators.operatorframework.io.index.configs.v1=/configs.\n' +
    'The files are the ones the catalog is loaded from (every YAML and JSON file below the folder,\n' +
    'honouring .indexignore), byte for byte. There is no opm binary in the image: Bosun reads catalog\n' +
    'images in-process, as OLM v1 does, so the image holds the catalog and nothing else; OLM v0, which\n' +
    'runs a catalog image as an `opm serve` pod, cannot run it. The image is reproducible (one layer,\n' +
    'no timestamps): the same catalog always has the same digest. With -t it is pushed (credentials\n' +
    'from ~/.docker/config.json); with --oci-layout it is written into that folder. An invalid catalog\n' +
    'is not built.',
  args: { min: 1, max: 1 },
  options: { ...buildTargetOptions, ...platformOption, ...registryOptions, ...outputOption },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const targets = buildTargets(ctx, values, 'catalog build');
    const platform = platformOf(values);
    const dir = argPath(ctx, positionals[0]!);
    const kind = await detectInput(dir);
    if (kind !== InputKind.CatalogDir)
      throw new UsageError(
        `catalog build: ${positionals[0]} is ${typeof kind === 'object' ? `not readable: ${kind.error}` : `a ${kind}, not a catalog directory`}`,
      );
    const input = await checkedBuildInput({
      read: () => loadCatalog(dir),
      validate: validateCatalog,
      files: () => readCatalogFiles(dir),
    });
    const base = {
      packages: input.content?.packages.length ?? 0,
      bundles: input.content?.bundles.length ?? 0,
      warnings: input.warnings,
    };
    if (!input.ok)
      return emitReport(
        ctx,
        mode,
        { ok: false, ...base, errors: input.errors },
        `not built: ${displayPath(ctx, dir)} is not a valid catalog${countSummary(input)}`,
      );
    const image = buildCatalogImage(input.files, platform);
    const delivered = await deliver(ctx, values, image, targets);
    const digest = image.manifest.descriptor.digest;
    const report = { ok: true, ...base, errors: [], digest, ...delivered };
    return emitReport(
      ctx,
      mode,
      report,
      `built catalog ${displayPath(ctx, dir)} (${plural(base.packages, 'package')}, ${plural(base.bundles, 'bundle')}) as ${digest}: ${deliveredSummary(delivered)}${countSummary(report)}`,
    );
  },
};

const pullCommand: Command = {
  name: 'pull',
  summary: 'Pull a catalog image into a new catalog directory',
  usage: '<ref> <dir>',
  description:
    'Pulls the file-based catalog image <ref> (by the digest its tag names, every layer verified) and\n' +
    'writes the folder its label operators.operatorframework.io.index.configs.v1 names (/configs in\n' +
    'images opm and Bosun build) into <dir>, a folder that must not exist yet. Nothing else of the image\n' +
    'is extracted. The catalog is loaded and validated as `bosun catalog validate` does; an invalid\n' +
    'catalog is not written. Images of other platforms: --platform.',
  args: { min: 2, max: 2 },
  options: { ...platformOption, ...registryOptions, ...outputOption },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const ref = imageArgument(positionals[0]!, '<ref>');
    const dest = argPath(ctx, positionals[1]!);
    if (await lstat(dest).catch(() => undefined))
      throw new UsageError(
        `catalog pull: ${positionals[1]} exists already; catalog pull writes a new folder`,
      );
    // Extracted beside the destination, so that the finished folder is renamed into place.
    const temp = join(dirname(dest), `.${randomBytes(6).toString('hex')}.partial`);
    const client = await registryClient(ctx, values);
    try {
      const pulled = await pullCatalogImage(client, ref, temp, { platform: platformOf(values) });
      const loaded = await loadCatalog(pulled.configs);
      const v = loaded.ok ? validateCatalog(loaded.value) : { errors: loaded.errors, warnings: [] };
      const errors = imageProblems(v.errors, pulled);
      const warnings = imageProblems(v.warnings, pulled);
      const report = {
        ok: errors.length === 0,
        packages: loaded.ok ? loaded.value.packages.length : 0,
        bundles: loaded.ok ? loaded.value.bundles.length : 0,
        errors,
        warnings,
        image: pulled.pinned,
        dir: errors.length ? null : displayPath(ctx, dest),
      };
      if (!report.ok)
        return emitReport(
          ctx,
          mode,
          report,
          `not pulled: ${pulled.pinned} does not hold a valid catalog${countSummary(report)}`,
        );
      if (await lstat(dest).catch(() => undefined))
        throw new UsageError(`${positionals[1]} appeared while the image was pulled; nothing was replaced`);
      await rename(pulled.configs, dest);
      return emitReport(
        ctx,
        mode,
        report,
        `pulled ${pulled.pinned} (${plural(report.packages, 'package')}, ${plural(report.bundles, 'bundle')}) into ${displayPath(ctx, dest)}${countSummary(report)}`,
      );
    } finally {
      await client.close();
      await rm(temp, { recursive: true, force: true });
    }
  },
};

export const catalogImageCommands: Command[] = [
  buildCommand,
  layoutPushCommand(ImageKind.Catalog, 'catalog'),
  pullCommand,
];
