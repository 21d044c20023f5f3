import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectToCluster, loadKubeConfig } from '../../../src/kube/config.js';
import { UserError } from '../../../src/util/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bosun-kubeconfig-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function kubeconfig(opts: {
  server?: string;
  context?: string;
  currentContext?: string | null;
  user?: string;
}) {
  const context = opts.context ?? 'local';
  const lines = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${context}-cluster`,
    '  cluster:',
    `    server: ${opts.server ?? 'https://127.0.0.1:6443'}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${opts.user ?? `${context}-user`}`,
    '  user:',
    '    token: abc',
    'contexts:',
    `- name: ${context}`,
    '  context:',
    `    cluster: ${context}-cluster`,
    `    user: ${context}-user`,
  ];
  if (opts.currentContext !== null) lines.push(`current-context: ${opts.currentContext ?? context}`);
  return `${lines.join('\n')}\n`;
}

async function file(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

/** Options that isolate the lookup from the machine's own KUBECONFIG, home and ServiceAccount. */
const isolated = () => ({
  env: {},
  homeDir: join(dir, 'home'),
  serviceAccountTokenPath: join(dir, 'no-token'),
});

function userError(fn: () => unknown): UserError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return err as UserError;
  }
  throw new Error('expected a UserError');
}

describe('loadKubeConfig', () => {
  it('refuses to guess when nothing is configured, instead of falling back to localhost:8080', () => {
    const err = userError(() => loadKubeConfig(isolated()));
    expect(err.message).toContain('No Kubernetes cluster is configured');
    expect(err.message).toContain(join(dir, 'home', '.kube', 'config'));
    expect(err.message).toContain('bosun cluster up');
    expect(err.message).not.toContain('8080');
  });

  it('loads an explicit path first', async () => {
    const path = await file('explicit', kubeconfig({ server: 'https://10.0.0.1:6443' }));
    const envPath = await file('env', kubeconfig({ server: 'https://10.0.0.2:6443' }));
    const { access, source } = loadKubeConfig({ ...isolated(), path, env: { KUBECONFIG: envPath } });
    expect(access.server).toBe('https://10.0.0.1:6443');
    expect(source).toBe(path);
  });

  it('says which explicit path does not exist', () => {
    const err = userError(() => loadKubeConfig({ ...isolated(), path: join(dir, 'missing') }));
    expect(err.message).toContain(`kubeconfig ${join(dir, 'missing')} does not exist`);
  });

  it('uses KUBECONFIG, skipping files that do not exist and merging the rest', async () => {
    const first = await file('a', kubeconfig({ context: 'a', server: 'https://10.0.0.1:6443' }));
    const second = await file('b', kubeconfig({ context: 'b', server: 'https://10.0.0.2:6443' }));
    const { config, access } = loadKubeConfig({
      ...isolated(),
      env: { KUBECONFIG: [join(dir, 'gone'), first, second].join(delimiter) },
    });
    expect(config.context.name).toBe('a');
    expect(config.files).toEqual([first, second]);
    expect(access.server).toBe('https://10.0.0.1:6443');
  });

  it('fails when every file KUBECONFIG names is missing', () => {
    const err = userError(() => loadKubeConfig({ ...isolated(), env: { KUBECONFIG: join(dir, 'gone') } }));
    expect(err.message).toContain('none of them exists');
  });

  it('falls back to ~/.kube/config', async () => {
    const home = join(dir, 'home');
    await import('node:fs/promises').then((fs) => fs.mkdir(join(home, '.kube'), { recursive: true }));
    await writeFile(join(home, '.kube', 'config'), kubeconfig({ server: 'https://10.0.0.3:6443' }));
    const { access, source } = loadKubeConfig({ ...isolated(), homeDir: home });
    expect(access.server).toBe('https://10.0.0.3:6443');
    expect(source).toBe(join(home, '.kube', 'config'));
  });

  it('rejects a kubeconfig without a current context', async () => {
    const path = await file('nocontext', kubeconfig({ currentContext: null }));
    expect(userError(() => loadKubeConfig({ ...isolated(), path })).message).toContain(
      'has no current-context',
    );
  });

  it('rejects a current context that is not defined', async () => {
    const path = await file('badcontext', kubeconfig({ currentContext: 'elsewhere' }));
    expect(userError(() => loadKubeConfig({ ...isolated(), path })).message).toContain(
      'current-context elsewhere is not defined',
    );
  });

  it('rejects a file that is not YAML, naming it', async () => {
    const path = await file('garbage', 'clusters: [\n');
    expect(userError(() => loadKubeConfig({ ...isolated(), path })).message).toContain(`kubeconfig ${path}:`);
  });
});

describe('connectToCluster', () => {
  it('says clearly that the API server cannot be reached', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => resolve(port));
      });
    });
    const path = await file('closed', kubeconfig({ server: `https://127.0.0.1:${port}` }));
    await expect(connectToCluster({ ...isolated(), path })).rejects.toThrow(
      new RegExp(
        `Cannot use the Kubernetes API server at https://127.0.0.1:${port} \\(kubeconfig .*closed\\): .*ECONNREFUSED`,
      ),
    );
  });
});
