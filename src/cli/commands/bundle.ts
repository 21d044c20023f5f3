import { stat } from 'node:fs/promises';
import { BundleAnnotation } from '../../apis/bundle.js';
import { packArchive } from '../../bundle/archive.js';
import { readBundle, readBundleFiles } from '../../bundle/read.js';
import { validateBundle } from '../../bundle/validate.js';
import { UsageError } from '../../util/errors.js';
import { writeFileAtomic } from '../../util/fs.js';
import { type Command, str } from '../command.js';
import { bundleImageCommands } from './bundle-image.js';
import {
  argPath,
  countSummary,
  displayPath,
  emitReport,
  outputMode,
  outputOption,
} from './catalog/report.js';

const validateCommand: Command = {
  name: 'validate',
  summary: 'Check a registry+v1 bundle directory or archive',
  usage: '<bundle-dir|archive>',
  description:
    'Checks what OLM needs to install the bundle and what operator-sdk bundle validate looks for: one\n' +
    'CSV with a semver version, owned CRDs present, supported kinds only, install modes, deployments,\n' +
    'permissions and webhooks well-formed, annotations complete, objects under 1 MiB. Every problem is\n' +
    'reported with its file, object and field; warnings do not fail. Exits 0 only when there are no errors.\n' +
    'An archive is a tar, plain or compressed with gzip or zstd.',
  args: { min: 1, max: 1 },
  options: { ...outputOption },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const path = argPath(ctx, positionals[0]!);
    const read = await readBundle(path);
    const v = read.ok ? validateBundle(read.value) : { errors: read.errors, warnings: [] };
    const pkg = read.ok ? read.value.annotations[BundleAnnotation.Package] : undefined;
    const report = {
      ok: v.errors.length === 0,
      packages: pkg ? 1 : 0,
      bundles: read.ok ? 1 : 0,
      errors: v.errors,
      warnings: v.warnings,
    };
    const summary = `${report.ok ? 'valid' : 'invalid'} bundle ${displayPath(ctx, path)}${pkg ? ` (package ${pkg})` : ''}${countSummary(report)}`;
    return emitReport(ctx, mode, report, summary);
  },
};

const packCommand: Command = {
  name: 'pack',
  summary: 'Pack a bundle directory into a reproducible .tar.gz and print its digest',
  usage: '<bundle-dir> -o <file.tar.gz>',
  description:
    'Validates the bundle, then writes manifests/ and metadata/ into a gzip-compressed tar whose bytes\n' +
    'depend only on the files (sorted entries, fixed owner, mode and time), and prints its sha256 digest.\n' +
    'An invalid bundle is not packed.',
  args: { min: 1, max: 1 },
  options: {
    out: {
      type: 'string',
      short: 'o',
      valueName: 'FILE',
      description: 'The archive to write (e.g. bundle.tar.gz)',
    },
    ...outputOption,
  },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const out = str(values, 'out');
    if (!out) throw new UsageError('bundle pack: -o <file.tar.gz> is required');
    const dir = argPath(ctx, positionals[0]!);
    if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
      throw new UsageError(`bundle pack: ${positionals[0]} is not a bundle directory`);
    }
    const read = await readBundle(dir);
    const v = read.ok ? validateBundle(read.value) : { errors: read.errors, warnings: [] };
    const files = v.errors.length ? undefined : await readBundleFiles(dir);
    const errors = files && !files.ok ? files.errors : v.errors;
    const report = {
      ok: errors.length === 0,
      packages: read.ok ? 1 : 0,
      bundles: read.ok ? 1 : 0,
      errors,
      warnings: v.warnings,
      archive: null as string | null,
      digest: null as string | null,
    };
    if (!report.ok || !files?.ok) {
      return emitReport(
        ctx,
        mode,
        report,
        `not packed: ${displayPath(ctx, dir)} is not a valid bundle${countSummary(report)}`,
      );
    }
    const { data, digest } = packArchive(files.value);
    const target = argPath(ctx, out);
    await writeFileAtomic(target, data);
    report.archive = displayPath(ctx, target);
    report.digest = digest;
    return emitReport(ctx, mode, report, `${displayPath(ctx, target)} ${digest}${countSummary(report)}`);
  },
};

export const bundleCommand: Command = {
  name: 'bundle',
  summary: 'Validate, pack, build, push and pull operator bundles (registry+v1)',
  subcommands: [validateCommand, packCommand, ...bundleImageCommands],
};
