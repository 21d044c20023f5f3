/**
 * The global pull Secret ClusterCatalog images are pulled with: `namespace/name` from
 * BOSUN_GLOBAL_PULL_SECRET or --global-pull-secret, and a value that names no Secret refused
 * with the variable or flag that gave it.
 */
import { describe, expect, it } from 'vitest';
import { globalPullSecretOf } from '../../../src/manager/registry-settings.js';

describe('globalPullSecretOf', () => {
  it.each([
    [{}, undefined],
    [{ BOSUN_GLOBAL_PULL_SECRET: '' }, undefined],
    [{ BOSUN_GLOBAL_PULL_SECRET: 'olm/pull-secret' }, { namespace: 'olm', name: 'pull-secret' }],
    [
      { BOSUN_GLOBAL_PULL_SECRET: ' olm/registry.example.com ' },
      { namespace: 'olm', name: 'registry.example.com' },
    ],
  ])('%j', (env, expected) => {
    expect(globalPullSecretOf(env)).toEqual(expected);
  });

  it.each([
    'pull-secret',
    'olm/',
    '/pull-secret',
    'olm/pull/secret',
    'OLM/pull-secret',
    'olm/../x',
    'olm/a b',
  ])('%s is refused, naming where it came from', (value) => {
    expect(() => globalPullSecretOf({ BOSUN_GLOBAL_PULL_SECRET: value })).toThrow(
      `BOSUN_GLOBAL_PULL_SECRET: "${value}" is not a Secret's namespace/name`,
    );
    expect(() => globalPullSecretOf({ BOSUN_GLOBAL_PULL_SECRET: value }, '--global-pull-secret')).toThrow(
      /^--global-pull-secret: /,
    );
  });
});
