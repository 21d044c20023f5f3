import type { Command } from '../command.js';

export const bundleCommand: Command = {
  name: 'bundle',
  summary: 'Validate and pack operator bundles (registry+v1)',
  subcommands: [],
};
