/**
 * `bosun catalog mirror <catalog-ref> <registry/prefix>`: a catalog image and every image it names,
 * copied by digest into another registry, and the catalog pushed again there with its references
 * rewritten to the copies (catalog/mirror.ts), so that the mirror alone serves everything.
 * Read (pull the catalog), plan (pure), copy, then write and push only once every copy succeeded.
 */
import { lstat } from 'node:fs/promises';
import type { FileMap } from '../../../util/tar-write.js';
import { CatalogFormat } from '../../../catalog/encode.js';
import { buildCatalogImage, openCatalogImage } from '../../../catalog/image.js';
import {
  mirrorRepository,
  parseMirrorPrefix,
  planMirror,
  rewriteReferences,
} from '../../../catalog/mirror.js';
import { validateCatalog } from '../../../catalog/validate.js';
import { renderCatalogFiles } from '../../../catalog/write.js';
import { pushImage } from '../../../oci/build.js';
import { type CopyReport, copyImage } from '../../../oci/copy.js';
import { formatReference } from '../../../oci/reference.js';
import { UsageError } from '../../../util/errors.js';
import type { Problem } from '../../../util/result.js';
import { type Command, str } from '../../command.js';
import { writeNewFolder } from '../bundle-image.js';
import { imageArgument, platformOf, platformOption, registryClient, registryOptions } from '../images.js';
import { argPath, countSummary, displayPath, emitReport, outputMode, outputOption } from './report.js';

/** Blobs stream from registry to registry; this only stops a registry that never ends one. */
const MaxBlobBytes = 16 * 1024 * 1024 * 1024;

export const mirrorCommand: Command = {
  name: 'mirror',
  summary:
    'Copy a catalog image and every image it names into another registry, and point the catalog at the copies',
  usage: '<catalog-ref> <registry/prefix>',
  description:
    'Pulls the file-based catalog image <catalog-ref> and copies, by digest, each image its bundles\n' +
    'name (each bundle image and related image) to <registry/prefix>/<repository> (quay.io/org/op:v1\n' +
    'mirrored to mirror.local/ocp goes to mirror.local/ocp/org/op), with its tag when it has one and\n' +
    'its index and every platform, byte for byte, so every digest stays. Blobs the target has are\n' +
    'not sent again. The catalog image itself is copied by digest too. Then the catalog, with each\n' +
    "bundle's image and related images rewritten to the copies pinned to their digests, is pushed as\n" +
    'a new catalog image to <registry/prefix>/<catalog repository>:<catalog tag> (latest when the\n' +
    'reference has none), and written to --dir when given (a folder that must not exist yet).\n' +
    'Manifests inside bundles are left as published. Prints one line per image, source=target. An\n' +
    'image that cannot be copied is an error naming the bundles that use it, and then no catalog is\n' +
    'pushed or written.',
  args: { min: 2, max: 2 },
  options: {
    dir: {
      type: 'string',
      valueName: 'DIR',
      description: 'Also write the rewritten catalog into this new folder',
    },
    ...platformOption,
    ...registryOptions,
    ...outputOption,
  },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const catalogRef = imageArgument(positionals[0]!, '<catalog-ref>');
    const prefix = parseMirrorPrefix(positionals[1]!);
    if (!prefix.ok)
      throw new UsageError(`<registry/prefix>: "${positionals[1]}" ${prefix.errors[0]!.message}`);
    const dirArg = str(values, 'dir');
    const dir = dirArg === undefined ? undefined : argPath(ctx, dirArg);
    if (dir && (await lstat(dir).catch(() => undefined)))
      throw new UsageError(`--dir: ${dirArg} exists already; catalog mirror writes a new folder`);

    const client = await registryClient(ctx, values);
    try {
      await using catalog = await openCatalogImage(client, catalogRef, { platform: platformOf(values) });
      const fail = (errors: Problem[], mappings: string[] = []) =>
        emitReport(
          ctx,
          mode,
          { ok: false, packages: 0, bundles: 0, errors, warnings: [], catalog: catalog.pinned, mappings },
          `not mirrored: ${catalog.pinned}${countSummary({ errors, warnings: [] })}`,
        );
      if (!catalog.loaded.ok) return fail(catalog.loaded.errors);
      const plan = planMirror(catalog.loaded.value, prefix.value);
      if (!plan.ok) return fail(plan.errors);

      const mappings: string[] = [];
      // What the copies took, added up: a second mirror of the same catalog uploads nothing.
      const blobs = { uploaded: 0, mounted: 0, present: 0, skipped: 0 };
      let bytes = 0;
      const tally = (r: CopyReport) => {
        for (const k of Object.keys(blobs) as (keyof typeof blobs)[]) blobs[k] += r.blobs[k];
        bytes += r.bytes;
      };
      const copies = new Map<string, string>();
      const errors: Problem[] = [];
      for (const image of plan.value) {
        try {
          const copied = await copyImage(client, image.from, image.to, { maxBlobBytes: MaxBlobBytes });
          tally(copied);
          const pinned = formatReference({ ...image.to, tag: undefined, digest: copied.digest });
          copies.set(image.source, pinned);
          mappings.push(`${image.source}=${pinned}`);
        } catch (err) {
          errors.push({
            object: `bundle ${image.usedBy.join(', bundle ')}`,
            message: `cannot copy ${(err as Error).message}`,
          });
        }
      }
      if (errors.length) return fail(errors, mappings);

      // The original by digest, so that anything pinned to it resolves at the mirror as well.
      const original = mirrorRepository(prefix.value, catalogRef);
      const copiedCatalog = await copyImage(client, catalog.image.ref, original, {
        maxBlobBytes: MaxBlobBytes,
      });
      tally(copiedCatalog);
      mappings.push(`${catalog.pinned}=${formatReference({ ...original, digest: copiedCatalog.digest })}`);

      const rewritten = rewriteReferences(catalog.loaded.value, copies);
      const v = validateCatalog(rewritten);
      if (v.errors.length) return fail(v.errors, mappings);
      const text = await renderCatalogFiles(rewritten, CatalogFormat.YAML);
      const files: FileMap = new Map([...text].map(([p, t]) => [p, Buffer.from(t)] as const));
      const target = { ...original, tag: catalogRef.tag ?? 'latest' };
      const digest = await pushImage(client, target, buildCatalogImage(files, platformOf(values)));
      const pushed = `${formatReference(target)}@${digest}`;
      mappings.push(`${positionals[0]}=${pushed}`);
      if (dir) await writeNewFolder(dir, files);

      if (mode === 'text') for (const m of mappings) ctx.stdout.write(`${m}\n`);
      const report = {
        ok: true,
        packages: rewritten.packages.length,
        bundles: rewritten.bundles.length,
        errors: [],
        warnings: v.warnings,
        catalog: pushed,
        mappings,
        blobs,
        bytes,
        dir: dir ? displayPath(ctx, dir) : null,
      };
      return emitReport(
        ctx,
        mode,
        report,
        `mirrored ${catalog.pinned} and ${plan.value.length} image(s) to ${positionals[1]}: the catalog is ${pushed}, ${bytes} bytes uploaded (${blobs.uploaded} blobs; ${blobs.present} already there, ${blobs.mounted} mounted)${dir ? `, written to ${displayPath(ctx, dir)}` : ''}${countSummary(report)}`,
      );
    } finally {
      await client.close();
    }
  },
};
