/**
 * How an admin sets the manager's registry transport: CA files that must hold a PEM certificate,
 * insecure registries that must be registry names (no scheme, path or credentials: a URL there
 * would not match the registry part of any reference, and would be a typo to point out), and the
 * bundle cache's bound; each setting that does not parse is refused naming the variable.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bundleCacheBytes,
  DefaultBundleCacheMiB,
  registryTransport,
} from '../../../src/manager/registry-settings.js';
import { tempDir } from '../../support/temp-dir.js';

const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('registry settings from the environment', () => {
  it('are empty when nothing is set', async () => {
    expect(await registryTransport({})).toEqual({});
    expect(bundleCacheBytes({})).toBe(DefaultBundleCacheMiB * 1024 * 1024);
  });

  it('read CA files and insecure registries, separated by commas', async () => {
    const dir = await tempDir('bosun-registry-settings-');
    await writeFile(join(dir, 'a.pem'), pem);
    await writeFile(join(dir, 'b.pem'), pem);
    expect(
      await registryTransport({
        BOSUN_REGISTRY_CA_FILES: `${join(dir, 'a.pem')}, ${join(dir, 'b.pem')}`,
        BOSUN_INSECURE_REGISTRIES: 'registry.lab:5000, mirror.internal ,[fd00::1]:5000',
      }),
    ).toEqual({ ca: [pem, pem], insecure: ['registry.lab:5000', 'mirror.internal', '[fd00::1]:5000'] });
  });

  it('refuse a CA file that is missing or holds no certificate, naming the variable and the file', async () => {
    const dir = await tempDir('bosun-registry-settings-');
    await writeFile(join(dir, 'key.pem'), '-----BEGIN PRIVATE KEY-----\n');
    await expect(registryTransport({ BOSUN_REGISTRY_CA_FILES: join(dir, 'nope.pem') })).rejects.toThrow(
      `BOSUN_REGISTRY_CA_FILES: cannot read ${join(dir, 'nope.pem')}`,
    );
    await expect(registryTransport({ BOSUN_REGISTRY_CA_FILES: join(dir, 'key.pem') })).rejects.toThrow(
      `BOSUN_REGISTRY_CA_FILES: ${join(dir, 'key.pem')} holds no PEM certificate`,
    );
  });

  it.each([
    ['http://registry.lab:5000'],
    ['registry.lab/team'],
    ['user:pw@registry.lab'],
    ['*'],
    ['registry.lab:port'],
  ])('refuse %s as an insecure registry', async (name) => {
    await expect(registryTransport({ BOSUN_INSECURE_REGISTRIES: name })).rejects.toThrow(
      `BOSUN_INSECURE_REGISTRIES: "${name}" is not a registry name`,
    );
  });

  it.each([['0'], ['-1'], ['1.5'], ['lots']])('refuse a bundle cache bound of %s MiB', (text) => {
    expect(() => bundleCacheBytes({ BOSUN_BUNDLE_IMAGE_CACHE_MIB: text })).toThrow(
      `BOSUN_BUNDLE_IMAGE_CACHE_MIB: "${text}" is not a whole number of MiB`,
    );
  });
});
