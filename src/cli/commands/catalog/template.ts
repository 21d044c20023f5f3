import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { type BundleDoc, type DeclarativeConfig, emptyConfig } from '../../../apis/fbc.js';
import { readBundle } from '../../../bundle/read.js';
import { isCSV } from '../../../bundle/manifest.js';
import { bundleToDoc } from '../../../bundle/render.js';
import { validateBundle } from '../../../bundle/validate.js';
import { parseYamlOne } from '../../../bundle/yaml.js';
import { encodeConfig } from '../../../catalog/encode.js';
import { versionOf } from '../../../catalog/publish.js';
import {
  Archetypes,
  generateSemverChannels,
  parseSemverTemplate,
  type TemplateBundle,
} from '../../../catalog/semver-template.js';
import { UserError } from '../../../util/errors.js';
import { formatProblem, type Problem } from '../../../util/result.js';
import { dataStream } from '../../output.js';
import { type Command, type CommandContext, str } from '../../command.js';
import { argPath, displayProblem } from './report.js';
import { formatOption, imageTemplateOption, parseFormat } from './shared.js';

const semverCommand: Command = {
  name: 'semver',
  summary: 'Render a semver template (schema: olm.semver) to FBC, like opm alpha render-template semver',
  usage: '<template-file>',
  description:
    'Generates channels from the versions of the bundles the template lists under candidate, fast and\n' +
    "stable: major and/or minor channels per archetype, each Y-stream's newest entry replacing the\n" +
    "previous Y-stream's newest and skipping the other earlier entries of its major; the most stable,\n" +
    "newest channel becomes the default, and its head's CSV gives the package's description and icon.\n" +
    'Each `image` is a bundle directory or archive, relative to the template file. Prints the\n' +
    'package, channels and bundles.',
  args: { min: 1, max: 1 },
  options: { ...formatOption, ...imageTemplateOption },
  run: async ({ values, positionals, ctx }) => {
    const format = parseFormat(values) ?? 'yaml';
    const file = argPath(ctx, positionals[0]!);
    const text = await readFile(file, 'utf8').catch((err: Error) => {
      throw new UserError(`cannot read ${positionals[0]}: ${err.message}`);
    });
    const parsed = parseYamlOne(text, file);
    const spec = parsed.ok
      ? parseSemverTemplate(parsed.value, file)
      : { ok: false as const, errors: [parsed.problem] };
    if (!spec.ok) return report(ctx, spec.errors);

    const problems: Problem[] = [];
    const rendered = new Map<string, TemplateBundle>();
    const docs = new Map<string, BundleDoc>();
    const template = str(values, 'image-ref-template');
    // A bundle listed under several archetypes is rendered once.
    for (const ref of new Set(Archetypes.flatMap((a) => spec.value.bundles[a]))) {
      const path = isAbsolute(ref) ? ref : resolve(dirname(file), ref);
      const read = await readBundle(path);
      if (!read.ok) {
        problems.push(
          {
            file,
            message: `${ref}: Bosun renders bundle directories and archives; this one could not be read`,
          },
          ...read.errors,
        );
        continue;
      }
      const v = validateBundle(read.value);
      if (v.errors.length) {
        problems.push(...v.errors);
        continue;
      }
      const doc = bundleToDoc(read.value, template ? { imageRefTemplate: template } : {});
      if (!doc.ok) {
        problems.push(...doc.errors);
        continue;
      }
      docs.set(doc.value.name, doc.value);
      rendered.set(ref, {
        ref,
        package: doc.value.package,
        name: doc.value.name,
        version: versionOf(doc.value) ?? '',
        csv: read.value.manifests.find((m) => isCSV(m.object))?.object,
      });
    }
    if (problems.length) return report(ctx, problems);
    const result = generateSemverChannels(spec.value, rendered, file);
    if (!result.ok) return report(ctx, result.errors);

    const cfg: DeclarativeConfig = emptyConfig();
    cfg.packages.push(result.value.package);
    cfg.channels.push(...result.value.channels);
    cfg.bundles.push(...docs.values());
    dataStream(ctx.stdout).write(await encodeConfig(cfg, format));
    return 0;
  },
};

function report(ctx: CommandContext, problems: Problem[]): number {
  for (const p of problems) ctx.stderr.write(`error: ${formatProblem(displayProblem(ctx, p))}\n`);
  return 1;
}

export const templateCommand: Command = {
  name: 'template',
  summary: 'Render catalog templates to FBC',
  subcommands: [semverCommand],
};
