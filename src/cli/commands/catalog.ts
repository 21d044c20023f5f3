import type { Command } from '../command.js';

export const catalogCommand: Command = {
  name: 'catalog',
  summary: 'Author file-based catalogs: init, render, validate, import, publish, diff, template',
  subcommands: [],
};
