import { streamWriter, writeConfig } from '../../../catalog/encode.js';
import { formatProblem } from '../../../util/result.js';
import { dataStream } from '../../output.js';
import { type Command, str } from '../../command.js';
import { renderInputs } from './inputs.js';
import { argPath, displayProblem } from './report.js';
import { formatOption, imageTemplateOption, importWorkers, parseFormat } from './shared.js';

export const renderCommand: Command = {
  name: 'render',
  summary: 'Print bundles, packages and catalogs as FBC (like opm render)',
  usage: '<input>...',
  description:
    'Renders each input to file-based catalog documents on stdout. An input is a bundle directory or\n' +
    'archive (validated first; its image is empty unless --image-ref-template is given, its manifests\n' +
    'travel inline as olm.bundle.object), a package-manifest package, a directory of packages, or a\n' +
    'catalog directory or file. Nothing is printed when any input has errors.',
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  options: { ...formatOption, ...imageTemplateOption },
  run: async ({ values, positionals, ctx }) => {
    const format = parseFormat(values) ?? 'yaml';
    const template = str(values, 'image-ref-template');
    const r = await renderInputs(
      positionals.map((p) => argPath(ctx, p)),
      { ...(template ? { imageRefTemplate: template } : {}), workers: importWorkers() },
    );
    for (const w of r.warnings) ctx.stderr.write(`warning: ${formatProblem(displayProblem(ctx, w))}\n`);
    for (const e of r.errors) ctx.stderr.write(`error: ${formatProblem(displayProblem(ctx, e))}\n`);
    if (r.errors.length) return 1;
    await writeConfig(r.config, format, streamWriter(dataStream(ctx.stdout)));
    return 0;
  },
};
