import { cp, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBundle, readBundleDir } from '../../../src/bundle/read.js';
import { tempDir } from '../../support/temp-dir.js';

const minimal = join(import.meta.dirname, '../../fixtures/bundles/minimal');

async function copyOfMinimal(): Promise<string> {
  const dir = join(await tempDir('bosun-read-'), 'bundle');
  await cp(minimal, dir, { recursive: true });
  return dir;
}

describe('readBundle', () => {
  it('reads annotations and one object per manifest file', async () => {
    const r = await readBundle(minimal);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.annotations['operators.operatorframework.io.bundle.package.v1']).toBe('gizmo');
    expect(r.value.manifests.map((m) => [m.file, m.object.kind])).toEqual([
      ['manifests/gizmo.csv.yaml', 'ClusterServiceVersion'],
      ['manifests/gizmos.crd.yaml', 'CustomResourceDefinition'],
    ]);
    expect(r.value.dependencies).toEqual([]);
    expect(r.value.metadataFiles).toEqual({ annotations: join(minimal, 'metadata/annotations.yaml') });
  });

  it('reports every broken file in one pass', async () => {
    const dir = await copyOfMinimal();
    await writeFile(
      join(dir, 'manifests/gizmo.csv.yaml'),
      'kind: ClusterServiceVersion\nmetadata: {name: [x\n',
    );
    await writeFile(join(dir, 'manifests/extra.yaml'), '- just\n- a list\n');
    await writeFile(join(dir, 'metadata/dependencies.yaml'), 'dependencies: {type: olm.gvk}\n');
    const r = await readBundle(dir);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      { file: join(dir, 'manifests/extra.yaml'), message: 'expected a Kubernetes object, found a list' },
      {
        file: join(dir, 'manifests/gizmo.csv.yaml'),
        message: expect.stringMatching(/^invalid YAML: line \d+, column \d+/),
      },
      {
        file: join(dir, 'metadata/dependencies.yaml'),
        field: 'dependencies',
        message: 'expected a list of {type, value}, found a map',
      },
    ]);
  });

  it('needs metadata/annotations.yaml and at least one manifest', async () => {
    const dir = await copyOfMinimal();
    await rm(join(dir, 'metadata/annotations.yaml'));
    await rm(join(dir, 'manifests'), { recursive: true });
    const r = await readBundle(dir);
    expect(r.ok ? [] : r.errors.map((e) => e.file)).toEqual([
      join(dir, 'metadata/annotations.yaml'),
      join(dir, 'manifests/'),
    ]);
  });

  it.each([false, true])(
    'reads the first document of a manifest file, as opm and OLM do, and says what it left out (lenient: %s)',
    async (lenient) => {
      const dir = await copyOfMinimal();
      const sa = (name: string) => `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${name}}\n`;
      await writeFile(join(dir, 'manifests/rbac.yaml'), `---\n${sa('a')}---\n${sa('b')}---\n${sa('c')}---\n`);
      const r = await readBundleDir(dir, { lenient });
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      const objects = r.value.manifests.filter((m) => m.file === 'manifests/rbac.yaml');
      expect(objects.map((m) => (m.object.metadata as { name?: string }).name)).toEqual(['a']);
      expect(r.value.warnings).toEqual([
        {
          file: join(dir, 'manifests/rbac.yaml'),
          message: expect.stringContaining(
            'holds 3 documents; only the first is read, as opm and OLM read a manifest file, so ServiceAccount/b, ServiceAccount/c are left out',
          ),
        },
      ]);
    },
  );

  it('refuses symlinks in a bundle directory', async () => {
    const dir = await copyOfMinimal();
    await symlink('/etc/hostname', join(dir, 'manifests/host.yaml'));
    const r = await readBundle(dir);
    expect(r).toEqual({
      ok: false,
      errors: [
        {
          file: join(dir, 'manifests/host.yaml'),
          message: expect.stringContaining('symlinks are not allowed'),
        },
      ],
    });
  });

  it('reads leniently for imports: repeated keys keep the last value, with a warning', async () => {
    const dir = await copyOfMinimal();
    await writeFile(
      join(dir, 'manifests/cm.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\ndata: {k: two}\n',
    );
    expect((await readBundleDir(dir)).ok).toBe(false);
    const r = await readBundleDir(dir, { lenient: true });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.manifests.find((m) => m.file === 'manifests/cm.yaml')?.object.data).toEqual({ k: 'two' });
    expect(r.value.warnings).toEqual([
      {
        file: join(dir, 'manifests/cm.yaml'),
        message: expect.stringContaining('duplicated mapping key; the last value was used'),
      },
    ]);
  });
});
