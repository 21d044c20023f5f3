import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BundleAnnotation } from '../../../apis/bundle.js';
import { type DeclarativeConfig, emptyConfig } from '../../../apis/fbc.js';
import { isCSV } from '../../../bundle/manifest.js';
import { readBundle } from '../../../bundle/read.js';
import { bundleToDoc } from '../../../bundle/render.js';
import { upgradeBundle } from '../../../bundle/upgrade/bundle.js';
import { validateBundle } from '../../../bundle/validate.js';
import { CatalogFormat, catalogFileName } from '../../../catalog/encode.js';
import { loadCatalog } from '../../../catalog/load.js';
import { publishBundle } from '../../../catalog/publish.js';
import { Archetype, Archetypes } from '../../../catalog/semver-template.js';
import { filesOfPackages, writeCatalog } from '../../../catalog/write.js';
import { UsageError } from '../../../util/errors.js';
import type { Problem, Result } from '../../../util/result.js';
import type { Bundle } from '../../../apis/bundle.js';
import { bool, type Command, type CommandContext, str, strs, type Values } from '../../command.js';
import { namesImage, platformOf, platformOption, registryClient, registryOptions } from '../images.js';
import { bundleImageInput } from './image-inputs.js';
import {
  argPath,
  countSummary,
  displayPath,
  emitReport,
  outputMode,
  outputOption,
  type Report,
} from './report.js';
import { imageTemplateOption, parseFormat } from './shared.js';

export const publishCommand: Command = {
  name: 'publish',
  summary: 'Add a bundle to a catalog: place it on channels, compute its edges, validate, write',
  usage: '<catalog-dir> <bundle-dir|archive|image>',
  description:
    'Validates the bundle, adds it to the package in the catalog (creating both if needed) and writes\n' +
    '<catalog-dir>/<package>/catalog.yaml. Channels: --channel, else the bundle annotations. Edges: the\n' +
    "CSV's replaces/skips/olm.skipRange when it declares any, else the newest entry of an earlier\n" +
    'Y-stream is replaced and the entries of the same one are skipped.\n' +
    '\n' +
    'With --semver, the package grows as `catalog template semver` renders it: the bundle goes on its\n' +
    "version's template channel (<archetype>-v<major>.<minor>, and <archetype>-v<major> where the\n" +
    "package has major channels), the archetype's channels of that major are linked again by the\n" +
    "template's rules, the default channel is the template's, and the package's description and icon\n" +
    "are the default channel head's. Versions may then be published in any order.\n" +
    '\n' +
    'The package must validate after, or nothing is written. A version already published is refused\n' +
    'unless --replace.\n' +
    '\n' +
    'With --convert-removed-apis, manifests of API versions Kubernetes no longer serves are converted\n' +
    'to their successors before the bundle is validated and written: apiextensions.k8s.io/v1beta1 CRDs\n' +
    'to v1 (schemas made structural; what validation that loses is a warning), rbac.authorization.k8s.io/v1beta1\n' +
    'to v1, and the like. Without it, what is written is what opm writes for the same bundle.\n' +
    '\n' +
    'The bundle may be a bundle image in a registry, named with its registry (quay.io/org/op-bundle:v1):\n' +
    "it is pulled and read like a folder, and the bundle's image in the catalog is the reference pinned\n" +
    'to the digest it was pulled by (quay.io/org/op-bundle@sha256:...), whatever tool built it.',
  args: { min: 2, max: 2 },
  options: {
    channel: {
      type: 'string',
      multiple: true,
      valueName: 'NAME',
      description: 'A channel to publish to, instead of the annotations',
    },
    'default-channel': {
      type: 'string',
      valueName: 'NAME',
      description: "Set the package's default channel",
    },
    replace: { type: 'boolean', description: 'Replace the bundle if its version is already published' },
    semver: {
      type: 'boolean',
      description: 'Place the bundle and compute its edges by the semver template rules',
    },
    archetype: {
      type: 'string',
      valueName: 'NAME',
      description: 'With --semver: candidate, fast or stable (default)',
    },
    format: {
      type: 'string',
      valueName: 'FORMAT',
      description: 'yaml (default) or json, for a package file not written yet',
    },
    'convert-removed-apis': {
      type: 'boolean',
      description: 'Convert manifests of removed API versions (v1beta1 CRDs, ...) to served ones',
    },
    ...imageTemplateOption,
    ...platformOption,
    ...registryOptions,
    ...outputOption,
  },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const root = argPath(ctx, positionals[0]!);
    const bundlePath = argPath(ctx, positionals[1]!);
    const archetype = str(values, 'archetype') ?? Archetype.Stable;
    if (!(Archetypes as readonly string[]).includes(archetype))
      throw new UsageError(`--archetype: "${archetype}" is not candidate, fast or stable`);
    const requested = parseFormat(values, 'format');
    const fail = (errors: Problem[], warnings: Problem[] = []) =>
      emitReport(
        ctx,
        mode,
        { ok: false, packages: 0, bundles: 0, errors, warnings },
        `nothing was published: ${errors.length} error(s)`,
      );

    const template = str(values, 'image-ref-template');
    const fromImage = namesImage(ctx, positionals[1]!);
    if (fromImage && template)
      throw new UsageError(
        '--image-ref-template: a bundle image is published as its own image, pinned to its digest',
      );
    const catalog = await loadOrEmpty(root);
    const { read, image } = fromImage
      ? await pulledBundle(ctx, values, positionals[1]!)
      : { read: await readBundle(bundlePath), image: undefined };
    const errors: Problem[] = [...(catalog.ok ? [] : catalog.errors), ...(read.ok ? [] : read.errors)];
    if (!catalog.ok || !read.ok) return fail(errors);
    let bundle = read.value;
    const converted: Problem[] = [];
    if (bool(values, 'convert-removed-apis')) {
      const upgraded = upgradeBundle(bundle);
      if (upgraded.errors.length) return fail(upgraded.errors, upgraded.warnings);
      bundle = upgraded.bundle;
      converted.push(...upgraded.warnings);
    }
    const checked = validateBundle(bundle);
    const check = { errors: checked.errors, warnings: [...converted, ...checked.warnings] };
    if (check.errors.length) return fail(check.errors, check.warnings);
    const doc = bundleToDoc(bundle, template ? { imageRefTemplate: template } : image ? { image } : {});
    if (!doc.ok) return fail(doc.errors, check.warnings);
    const csv = bundle.manifests.find((m) => isCSV(m.object))!.object;
    const annotationChannels = (bundle.annotations[BundleAnnotation.Channels] ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    const annotationDefault = bundle.annotations[BundleAnnotation.DefaultChannel];
    const channels = strs(values, 'channel');
    const defaultChannel = str(values, 'default-channel');
    const outcome = publishBundle(
      catalog.value,
      {
        doc: doc.value,
        csv,
        annotationChannels,
        ...(annotationDefault ? { annotationDefaultChannel: annotationDefault } : {}),
      },
      {
        ...(channels.length ? { channels } : {}),
        ...(defaultChannel ? { defaultChannel } : {}),
        replace: bool(values, 'replace'),
        semver: bool(values, 'semver'),
        archetype: archetype as Archetype,
      },
    );
    if (!outcome.ok) return fail(outcome.errors, check.warnings);
    const pkg = outcome.value.package;
    const { files: oldFiles, problems } = filesOfPackages(root, catalog.value, new Set([pkg]));
    if (problems.length) return fail(problems, check.warnings);
    const format =
      requested ??
      ((await exists(join(root, pkg, catalogFileName(CatalogFormat.JSON))))
        ? CatalogFormat.JSON
        : CatalogFormat.YAML);
    const written = await writeCatalog(root, outcome.value.config, {
      format,
      packages: new Set([pkg]),
      remove: oldFiles,
    });
    if (!written.ok) return fail(written.errors, check.warnings);

    const o = outcome.value;
    const report: Report = {
      ok: true,
      packages: 1,
      bundles: 1,
      errors: [],
      warnings: [...check.warnings, ...o.warnings],
      package: pkg,
      bundle: o.bundle,
      version: o.version,
      channels: o.channels.map((c) => ({ name: c.name, created: c.created, entry: c.entry })),
      defaultChannel: o.defaultChannel,
      replaced: o.replaced ?? null,
      written: written.value,
    };
    const placed = o.channels
      .map((c) => `${c.name}${c.entry.replaces ? ` (replaces ${c.entry.replaces})` : ''}`)
      .join(', ');
    const summary = `published ${o.bundle} (${o.version}) to ${pkg} in ${displayPath(ctx, root)}: ${placed}${o.replaced ? `; replaced ${o.replaced}` : ''}${countSummary(report)}`;
    return emitReport(ctx, mode, report, summary);
  },
};

/** The bundle of a bundle image, and the image pinned to its digest. */
async function pulledBundle(
  ctx: CommandContext,
  values: Values,
  text: string,
): Promise<{ read: Result<Bundle>; image: string }> {
  const client = await registryClient(ctx, values);
  try {
    const { read, pinned } = await bundleImageInput(client, text, platformOf(values));
    return { read, image: pinned };
  } finally {
    await client.close();
  }
}

async function loadOrEmpty(
  root: string,
): Promise<{ ok: true; value: DeclarativeConfig } | { ok: false; errors: Problem[] }> {
  const st = await stat(root).catch(() => undefined);
  if (!st) return { ok: true, value: emptyConfig() };
  if (!st.isDirectory())
    return { ok: false, errors: [{ file: root, message: 'the catalog must be a directory' }] };
  return loadCatalog(root);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
