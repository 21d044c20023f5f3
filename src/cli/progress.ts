/**
 * Progress of long steps on stderr. Milestones are lines (`• starting etcd`); the control-plane
 * build also reports a status that changes many times a second. On a terminal that status is one
 * line rewritten in place; otherwise (CI logs, pipes) it is printed when a step changes and every
 * half minute, so a log shows the build advancing without thousands of lines.
 */
import type { BuildStatus } from '../cluster/build.js';
import { rawStream } from './output.js';
import type { CommandContext } from './command.js';

export interface Progress {
  line(text: string): void;
  build(status: BuildStatus): void;
}

const quietIntervalMs = 30_000;

export function progressReporter(ctx: Pick<CommandContext, 'stderr'>, now = () => Date.now()): Progress {
  const tty = ctx.stderr.isTTY === true;
  const latest = new Map<string, BuildStatus>();
  let live = false;
  let lastPrinted = 0;
  let lastSteps = '';
  const clear = () => {
    // Back to the line's start and erase it: Bosun's own sequence, past the escaping of output.
    if (live) rawStream(ctx.stderr).write('\r\x1b[K');
    live = false;
  };
  return {
    line(text) {
      clear();
      ctx.stderr.write(`• ${text}\n`);
    },
    build(status) {
      latest.set(status.components.join(','), status);
      const all = [...latest.values()];
      const text = formatBuildStatus(all);
      if (tty) {
        clear();
        ctx.stderr.write(text);
        live = true;
        if (all.every((s) => s.step === 'done')) clear();
        return;
      }
      const steps = all.map((s) => s.step).join(',');
      if (steps !== lastSteps || now() - lastPrinted >= quietIntervalMs) {
        ctx.stderr.write(`  ${text}\n`);
        lastSteps = steps;
        lastPrinted = now();
      }
    },
  };
}

/** `kube-apiserver…: compiling 812/2140 packages · kwok: done · 3m12s · log: …/build.log` */
export function formatBuildStatus(statuses: readonly BuildStatus[]): string {
  const parts = statuses.map((s) => `${label(s.components)}: ${stepText(s)}`);
  const elapsed = Math.max(0, ...statuses.map((s) => s.elapsedMs));
  const log = statuses[0]?.log;
  return [...parts, duration(elapsed), ...(log ? [`log: ${log}`] : [])].join(' · ');
}

function label(components: readonly string[]): string {
  return components.length <= 1 ? (components[0] ?? '?') : `${components[0]} +${components.length - 1}`;
}

function stepText(s: BuildStatus): string {
  switch (s.step) {
    case 'resolving modules':
      return s.done > 0 ? `downloading modules (${s.done})` : 'resolving modules';
    case 'compiling':
      return `compiling ${s.done}/${s.total ?? '?'} packages`;
    case 'linking':
      return 'linking';
    case 'done':
      return 'done';
  }
}

function duration(ms: number): string {
  const total = Math.round(ms / 1000);
  const m = Math.floor(total / 60);
  return m > 0 ? `${m}m${String(total % 60).padStart(2, '0')}s` : `${total}s`;
}
