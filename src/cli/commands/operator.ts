import { UserError } from '../../util/errors.js';
import type { Command } from '../command.js';

export const operatorCommand: Command = {
  name: 'operator',
  summary: 'Run the Bosun manager (the meta-operator) against a cluster',
  subcommands: [
    {
      name: 'run',
      summary: 'Run the manager: reconcile CatalogSources, Subscriptions, InstallPlans and CSVs',
      run: () => {
        throw new UserError('bosun operator run is not available in this version yet');
      },
    },
  ],
};

export const planCommand: Command = {
  name: 'plan',
  summary: 'Show an upgrade plan before it happens: target, manifest diff, CRD safety, RBAC delta',
  run: () => {
    throw new UserError('bosun plan is not available in this version yet');
  },
};

// `start` is defined with the cluster commands for now: it brings up the local control plane.
export { startCommand } from './cluster.js';
