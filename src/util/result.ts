/**
 * Expected outcomes are values, not exceptions: parsing, validation and resolution return a
 * Result so that callers can collect every problem in one pass and decide what to print.
 */
import { escapeControls } from './terminal.js';

export type Result<T, E = Problem[]> = { ok: true; value: T } | { ok: false; errors: E };

export const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const fail = <E>(errors: E): { ok: false; errors: E } => ({ ok: false, errors });

/**
 * One thing wrong (or worth a warning) with some input. `file`, `object` and `field` locate it
 * so that the message can say exactly what to fix, e.g.
 * `bundles/etcd/0.9.4/manifests/etcd.csv.yaml: spec.replaces: etcdoperator.v0.9.3 is not in package etcd`.
 */
export interface Problem {
  file?: string;
  /** The object the problem is in, as `Kind/name` or a package/bundle/channel name. */
  object?: string;
  /** Dotted path to the field, e.g. `spec.version`. */
  field?: string;
  message: string;
}

/**
 * Renders a problem as one line: `file: object: field: message`, leaving out what is unknown.
 * Its parts quote input (names, paths inside archives), so their control characters, newlines
 * included, are shown as escapes: a problem cannot rewrite the terminal or forge a line.
 */
export function formatProblem(p: Problem): string {
  return [p.file, p.object, p.field, p.message]
    .filter((s) => s !== undefined && s !== '')
    .map((s) => escapeControls(s!))
    .join(': ');
}
