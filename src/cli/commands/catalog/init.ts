import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { type PackageDoc, Schema } from '../../../apis/fbc.js';
import { dns1123LabelError } from '../../../bundle/names.js';
import { CatalogFormat, encodeDocuments } from '../../../catalog/encode.js';
import { UsageError, UserError } from '../../../util/errors.js';
import { dataStream } from '../../output.js';
import { type Command, str } from '../../command.js';
import { argPath } from './report.js';
import { formatOption, parseFormat } from './shared.js';

const ICON_TYPES: Record<string, string> = {
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
};

export const initCommand: Command = {
  name: 'init',
  summary: 'Print a new olm.package document (like opm init)',
  usage: '<package>',
  description:
    'Prints an olm.package document for a new package. Put it in the catalog as <catalog>/<package>/catalog.yaml\n' +
    'and add bundles with `bosun catalog publish`.',
  args: { min: 1, max: 1 },
  options: {
    'default-channel': {
      type: 'string',
      valueName: 'CHANNEL',
      description: 'The channel subscriptions get when they name none',
    },
    description: {
      type: 'string',
      valueName: 'FILE',
      description: 'A file (e.g. README.md) whose text describes the package',
    },
    icon: { type: 'string', valueName: 'FILE', description: 'An SVG, PNG, JPEG or GIF icon' },
    ...formatOption,
  },
  run: async ({ values, positionals, ctx }) => {
    const name = positionals[0]!;
    const bad = dns1123LabelError(name);
    if (bad) throw new UsageError(`package name: ${bad}`);
    const format = parseFormat(values) ?? CatalogFormat.YAML;
    const doc: PackageDoc = { schema: Schema.Package, name };
    const def = str(values, 'default-channel');
    if (def) doc.defaultChannel = def;
    const iconFile = str(values, 'icon');
    if (iconFile) {
      const mediatype = ICON_TYPES[extname(iconFile).toLowerCase()];
      if (!mediatype) throw new UsageError(`--icon: ${iconFile} is not .svg, .png, .jpg or .gif`);
      doc.icon = { base64data: (await readOrFail(argPath(ctx, iconFile))).toString('base64'), mediatype };
    }
    const descFile = str(values, 'description');
    if (descFile) doc.description = (await readOrFail(argPath(ctx, descFile))).toString('utf8');
    dataStream(ctx.stdout).write(encodeDocuments([doc as unknown as Record<string, unknown>], format));
    return 0;
  },
};

async function readOrFail(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new UserError(`cannot read ${path}: ${(err as Error).message}`);
  }
}
