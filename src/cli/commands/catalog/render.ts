import { emptyConfig } from '../../../apis/fbc.js';
import { streamWriter, writeConfig } from '../../../catalog/encode.js';
import { mergeInto } from '../../../catalog/import.js';
import type { RegistryClient } from '../../../oci/client.js';
import { formatProblem } from '../../../util/result.js';
import { dataStream } from '../../output.js';
import { type Command, str } from '../../command.js';
import { namesImage, platformOf, platformOption, registryClient, registryOptions } from '../images.js';
import { renderImageInput } from './image-inputs.js';
import { type RenderedInput, renderInputs } from './inputs.js';
import { argPath, displayProblem } from './report.js';
import { formatOption, imageTemplateOption, importWorkers, parseFormat } from './shared.js';

export const renderCommand: Command = {
  name: 'render',
  summary: 'Print bundles, packages, catalogs and their images as FBC (like opm render)',
  usage: '<input>...',
  description:
    'Renders each input to file-based catalog documents on stdout. An input is a bundle directory or\n' +
    'archive (validated first; its image is empty unless --image-ref-template is given, its manifests\n' +
    'travel inline as olm.bundle.object), a package-manifest package, a directory of packages, or a\n' +
    'catalog directory or file; or an image in a registry, named with its registry\n' +
    '(quay.io/org/catalog:v1, localhost:5000/bundle@sha256:...): a catalog image renders the FBC of\n' +
    'its configs folder, a bundle image its bundle (validated, its image the reference as given), as\n' +
    'opm render does. Nothing is printed when any input has errors.',
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  options: { ...formatOption, ...imageTemplateOption, ...platformOption, ...registryOptions },
  run: async ({ values, positionals, ctx }) => {
    const format = parseFormat(values) ?? 'yaml';
    const template = str(values, 'image-ref-template');
    const platform = platformOf(values);
    const r: RenderedInput = { config: emptyConfig(), errors: [], warnings: [] };
    // Pulled catalogs stay on disk until the catalog is written: their manifests are read from there.
    await using opened = new AsyncDisposableStack();
    let client: RegistryClient | undefined;
    for (const p of positionals) {
      let one: RenderedInput;
      if (namesImage(ctx, p)) {
        if (!client) {
          client = await registryClient(ctx, values);
          const made = client;
          opened.defer(() => made.close());
        }
        one = opened.use(await renderImageInput(client, p, platform));
      } else {
        one = await renderInputs([argPath(ctx, p)], {
          ...(template ? { imageRefTemplate: template } : {}),
          workers: importWorkers(),
        });
      }
      mergeInto(r.config, one.config);
      r.errors.push(...one.errors);
      r.warnings.push(...one.warnings);
    }
    for (const w of r.warnings) ctx.stderr.write(`warning: ${formatProblem(displayProblem(ctx, w))}\n`);
    for (const e of r.errors) ctx.stderr.write(`error: ${formatProblem(displayProblem(ctx, e))}\n`);
    if (r.errors.length) return 1;
    await writeConfig(r.config, format, streamWriter(dataStream(ctx.stdout)));
    return 0;
  },
};
