/**
 * `.indexignore` files, as opm honours them: gitignore syntax, and a file's patterns apply to the
 * directory it is in and everything below. Supported: comments, blank lines, `!` negation, a
 * trailing `/` for directories only, a leading or inner `/` to anchor to the file's directory,
 * `*`, `?`, `**` and `[...]` classes.
 */
import { posix } from 'node:path';

export const IndexIgnoreFile = '.indexignore';

interface Rule {
  /** Directory (relative to the catalog root, '' for the root) whose `.indexignore` holds the rule. */
  base: string;
  negate: boolean;
  dirOnly: boolean;
  regex: RegExp;
}

export class IgnoreMatcher {
  private readonly rules: Rule[] = [];

  /** Adds the patterns of the `.indexignore` found in `base` (relative path, '' for the root). */
  add(base: string, text: string): void {
    for (const raw of text.split(/\r?\n/)) {
      let line = raw.replace(/(?<!\\)\s+$/, '');
      if (line === '' || line.startsWith('#')) continue;
      const negate = line.startsWith('!');
      if (negate) line = line.slice(1);
      const dirOnly = line.endsWith('/');
      if (dirOnly) line = line.slice(0, -1);
      // A pattern with a slash (other than a trailing one) is relative to its base; one without
      // matches a name at any depth below the base.
      const anchored = line.includes('/');
      if (line.startsWith('/')) line = line.slice(1);
      const body = globToRegex(line);
      const regex = new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`);
      this.rules.push({ base, negate, dirOnly, regex });
    }
  }

  /** True when `path` (relative to the catalog root) is ignored; `isDir` for directories. */
  ignores(path: string, isDir: boolean): boolean {
    let ignored = false;
    for (const rule of this.rules) {
      if (rule.dirOnly && !isDir) continue;
      const rel =
        rule.base === ''
          ? path
          : path.startsWith(`${rule.base}/`)
            ? path.slice(rule.base.length + 1)
            : undefined;
      if (rel === undefined) continue;
      if (rule.regex.test(rel)) ignored = !rule.negate;
    }
    return ignored;
  }
}

function globToRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches any number of directories, `/**` everything below, `**` anything.
        const slashAfter = glob[i + 2] === '/';
        out += slashAfter ? '(?:.*/)?' : '.*';
        i += slashAfter ? 2 : 1;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close < 0) out += '\\[';
      else {
        const cls = glob
          .slice(i + 1, close)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        out += `[${cls}]`;
        i = close;
      }
    } else if (c === '\\' && i + 1 < glob.length) {
      out += RegExp.escape(glob[++i]!);
    } else out += RegExp.escape(c);
  }
  return out;
}

export const joinRel = (base: string, name: string): string => (base === '' ? name : posix.join(base, name));
