import { UserError } from '../../util/errors.js';
import type { Command } from '../command.js';

export const resolveCommand: Command = {
  name: 'resolve',
  summary: 'Resolve Subscriptions against catalogs offline, exactly as the manager does',
  run: () => {
    throw new UserError('bosun resolve is not available in this version yet');
  },
};

export const explainCommand: Command = {
  name: 'explain',
  summary: 'Explain in prose why Subscriptions resolve as they do, or why they cannot',
  run: () => {
    throw new UserError('bosun explain is not available in this version yet');
  },
};
