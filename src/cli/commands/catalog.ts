import type { Command } from '../command.js';
import { diffCommand } from './catalog/diff.js';
import { catalogImageCommands } from './catalog/image.js';
import { importCommand } from './catalog/import.js';
import { initCommand } from './catalog/init.js';
import { mirrorCommand } from './catalog/mirror.js';
import { publishCommand } from './catalog/publish.js';
import { renderCommand } from './catalog/render.js';
import { serveCommand } from './catalog/serve.js';
import { templateCommand } from './catalog/template.js';
import { validateCommand } from './catalog/validate.js';

export const catalogCommand: Command = {
  name: 'catalog',
  summary:
    'Author file-based catalogs: init, render, validate, import, publish, diff, template, serve; build, push, pull and mirror catalog images',
  description:
    'Author OLM file-based catalogs (FBC): one directory per package holding olm.package, olm.channel and\n' +
    'olm.bundle documents. Catalogs Bosun writes pass `opm validate`, and catalogs opm writes load here.',
  subcommands: [
    initCommand,
    renderCommand,
    validateCommand,
    importCommand,
    publishCommand,
    diffCommand,
    templateCommand,
    serveCommand,
    ...catalogImageCommands,
    mirrorCommand,
  ],
};
