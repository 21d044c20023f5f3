import { describe, expect, it } from 'vitest';
import { formatBuildStatus, progressReporter } from '../../../src/cli/progress.js';
import type { BuildStatus } from '../../../src/cluster/build.js';

const kube = (over: Partial<BuildStatus>): BuildStatus => ({
  components: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'etcd'],
  step: 'compiling',
  done: 812,
  total: 2140,
  elapsedMs: 192_000,
  log: '/cache/build.log',
  ...over,
});
const kwok = (over: Partial<BuildStatus>): BuildStatus => ({
  components: ['kwok'],
  step: 'resolving modules',
  done: 0,
  elapsedMs: 5_000,
  log: '/cache/build.log',
  ...over,
});

function stream(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, stderr: { isTTY, write: (s: string) => (chunks.push(s), true) } as never };
}

describe('build progress', () => {
  it('says for each recipe what it is doing, with the time so far and the log', () => {
    expect(formatBuildStatus([kube({}), kwok({ done: 34 })])).toBe(
      'kube-apiserver +3: compiling 812/2140 packages · kwok: downloading modules (34) · 3m12s · log: /cache/build.log',
    );
    expect(formatBuildStatus([kube({ step: 'linking', elapsedMs: 9_400 })])).toBe(
      'kube-apiserver +3: linking · 9s · log: /cache/build.log',
    );
  });

  it('rewrites one line in place on a terminal and clears it when every build is done', () => {
    const { chunks, stderr } = stream(true);
    const p = progressReporter({ stderr });
    p.build(kube({}));
    p.build(kube({ done: 813 }));
    p.line('starting etcd');
    p.build(kube({ step: 'done' }));
    expect(chunks[0]).toContain('compiling 812/2140');
    expect(chunks[1]).toBe('\r\x1b[K');
    expect(chunks[2]).toContain('compiling 813/2140');
    expect(chunks.slice(3, 5)).toEqual(['\r\x1b[K', '• starting etcd\n']);
    expect(chunks.at(-1)).toBe('\r\x1b[K');
    expect(chunks.every((c) => !c.includes('\n') || c.endsWith('\n'))).toBe(true);
  });

  it('prints a line per step change and every half minute otherwise', () => {
    const { chunks, stderr } = stream(false);
    let t = 0;
    const p = progressReporter({ stderr }, () => t);
    p.build(kube({ done: 1 }));
    p.build(kube({ done: 2 }));
    t = 29_000;
    p.build(kube({ done: 3 }));
    t = 30_000;
    p.build(kube({ done: 4 }));
    p.build(kube({ step: 'linking' }));
    expect(chunks.map((c) => /compiling (\d+)|linking/.exec(c)?.[0])).toEqual([
      'compiling 1',
      'compiling 4',
      'linking',
    ]);
    expect(chunks.every((c) => c.endsWith('\n') && !c.includes('\r'))).toBe(true);
  });
});
