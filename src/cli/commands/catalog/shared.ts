/** Options several catalog commands share. */
import { availableParallelism } from 'node:os';
import { CatalogFormat } from '../../../catalog/encode.js';
import { UsageError } from '../../../util/errors.js';
import { type OptionSpec, str, type Values } from '../../command.js';

/** `-o yaml|json`: the format of catalog documents printed or written. */
export const formatOption: Record<'output', OptionSpec> = {
  output: { type: 'string', short: 'o', valueName: 'FORMAT', description: 'yaml (default) or json' },
};

export function parseFormat(values: Values, name = 'output'): CatalogFormat | undefined {
  const v = str(values, name);
  if (v === undefined) return undefined;
  if (v !== CatalogFormat.YAML && v !== CatalogFormat.JSON)
    throw new UsageError(`--${name}: "${v}" is not yaml or json`);
  return v;
}

export const imageTemplateOption: Record<'image-ref-template', OptionSpec> = {
  'image-ref-template': {
    type: 'string',
    valueName: 'TEMPLATE',
    description:
      'Set bundle images from {{.Package}}, {{.Name}}, {{.Version}} (default: none, manifests inline)',
  },
};

/** Worker threads for large imports: the cores there are, at most four. */
export function importWorkers(): number {
  return Math.min(availableParallelism(), 4);
}
