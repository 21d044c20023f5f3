import type { Command } from '../command.js';

export const startCommand: Command = { name: 'start', summary: 'Start Bosun on the local control plane' };
export const clusterCommand: Command = {
  name: 'cluster',
  summary: 'Run a local Kubernetes control plane',
  subcommands: [],
};
