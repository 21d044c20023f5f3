/**
 * The image the top-level Dockerfile builds, read from the Dockerfile itself, so that the test that
 * runs its entrypoint (test/integration/deploy/image-entrypoint.test.ts) lays out and starts what
 * the image holds, and fails when the Dockerfile changes in a way it does not reproduce: every
 * instruction of the runtime stage is either one it applies (FROM, COPY of the build stage's
 * production install, USER, ENV, VOLUME, WORKDIR, EXPOSE, ENTRYPOINT, CMD, LABEL) or an error
 * naming the line.
 *
 * The grammar read is Dockerfile's as far as this Dockerfile uses it: comments, line
 * continuations, `KEY=value` ENV pairs, exec-form (JSON) ENTRYPOINT, CMD and VOLUME, and COPY
 * flags. Anything else is an error too, never a guess.
 */

export interface Instruction {
  keyword: string;
  /** The arguments as written, continuations joined. */
  args: string;
  /** Line number of the instruction's first line. */
  line: number;
}

export interface Stage {
  /** The image it starts from. */
  from: string;
  /** `AS <name>`, if any. */
  name?: string;
  instructions: Instruction[];
}

/** What the runtime stage makes of the image, in the terms the test lays it out in. */
export interface RuntimeImage {
  /** The build stage's and the runtime stage's base images. */
  buildBase: string;
  base: string;
  /** The prefix the build stage installs Bosun into with `npm install -g --prefix`. */
  installPrefix: string;
  /** Each COPY of the runtime stage: the build stage's install prefix, to `dest`. */
  copies: { src: string; dest: string; line: number }[];
  user: { uid: number; gid: number };
  env: Record<string, string>;
  volumes: string[];
  workdir: string;
  expose: number[];
  entrypoint: string[];
  cmd: string[];
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** The stages of a Dockerfile, each with its instructions (FROM excluded). */
export function parseDockerfile(text: string, file = 'Dockerfile'): Parsed<Stage[]> {
  const errors: string[] = [];
  const stages: Stage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const first = i + 1;
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    // A trailing backslash continues the instruction; comment lines inside it are dropped, as
    // Docker drops them.
    while (line.endsWith('\\') && i + 1 < lines.length) {
      const next = lines[++i]!.trim();
      line = `${line.slice(0, -1).trimEnd()} ${next.startsWith('#') ? '' : next}`.trimEnd();
    }
    const m = /^([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) {
      errors.push(`${file}:${first}: not an instruction: ${line}`);
      continue;
    }
    const keyword = m[1]!.toUpperCase();
    const args = m[2]!.trim();
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) errors.push(`${file}:${first}: FROM ${args}: expected an image and an optional AS name`);
      else stages.push({ from: from[1]!, ...(from[2] ? { name: from[2] } : {}), instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) errors.push(`${file}:${first}: ${keyword} before any FROM`);
    else stage.instructions.push({ keyword, args, line: first });
  }
  if (stages.length === 0) errors.push(`${file}: no FROM`);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: stages };
}

/**
 * The runtime image the Dockerfile's last stage makes, or every instruction the entrypoint test
 * could not reproduce, each naming its line.
 */
export function runtimeImage(text: string, file = 'Dockerfile'): Parsed<RuntimeImage> {
  const parsed = parseDockerfile(text, file);
  if (!parsed.ok) return parsed;
  const stages = parsed.value;
  const errors: string[] = [];
  const runtime = stages.at(-1)!;
  const build = stages.length > 1 ? stages.at(-2)! : undefined;
  const at = (i: Instruction) => `${file}:${i.line}: ${i.keyword}`;

  const installPrefix = build?.instructions
    .filter((i) => i.keyword === 'RUN')
    .map((i) => /\bnpm install -g --prefix (\S+) /.exec(i.args)?.[1])
    .find((p) => p !== undefined);
  const packs = build?.instructions.some((i) => i.keyword === 'RUN' && /\bnpm pack\b/.test(i.args));
  if (!build || !installPrefix || !packs)
    errors.push(
      `${file}: the stage before the runtime stage must make the production install: \`npm pack\`, then \`npm install -g --prefix <dir>\` of the tarball`,
    );

  const image: RuntimeImage = {
    buildBase: build?.from ?? '',
    base: runtime.from,
    installPrefix: installPrefix ?? '',
    copies: [],
    user: { uid: 0, gid: 0 },
    env: {},
    volumes: [],
    workdir: '/',
    expose: [],
    entrypoint: [],
    cmd: [],
  };
  let user: string | undefined;
  for (const i of runtime.instructions) {
    switch (i.keyword) {
      case 'COPY': {
        const words = i.args.split(/\s+/);
        const flags = words.filter((w) => w.startsWith('--'));
        const paths = words.filter((w) => !w.startsWith('--'));
        const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
        const other = flags.filter((f) => !f.startsWith('--from='));
        if (other.length > 0 || from === undefined || from !== build?.name || paths.length !== 2)
          errors.push(
            `${at(i)} ${i.args}: the test lays out only \`COPY --from=${build?.name ?? '<build stage>'} <install prefix> <dir>\``,
          );
        else if (paths[0]!.replace(/\/+$/, '') !== installPrefix)
          errors.push(
            `${at(i)} ${i.args}: copies ${paths[0]}, which is not the production install (${installPrefix}) the test lays out`,
          );
        else image.copies.push({ src: paths[0]!, dest: paths[1]!, line: i.line });
        break;
      }
      case 'USER':
        user = i.args;
        break;
      case 'ENV':
        for (const pair of i.args.split(/\s+/)) {
          const kv = /^([A-Za-z_][A-Za-z0-9_]*)=([^\s"'\\$]*)$/.exec(pair);
          if (kv) image.env[kv[1]!] = kv[2]!;
          else errors.push(`${at(i)}: ${pair}: expected KEY=value without quotes, spaces or variables`);
        }
        break;
      case 'VOLUME':
        image.volumes.push(...(execForm(i.args) ?? i.args.split(/\s+/)));
        break;
      case 'WORKDIR':
        if (!i.args.startsWith('/')) errors.push(`${at(i)} ${i.args}: expected an absolute path`);
        image.workdir = i.args;
        break;
      case 'EXPOSE':
        for (const p of i.args.split(/\s+/)) {
          const port = /^(\d+)(\/tcp)?$/.exec(p);
          if (port) image.expose.push(Number(port[1]));
          else errors.push(`${at(i)} ${p}: expected a TCP port`);
        }
        break;
      case 'ENTRYPOINT':
      case 'CMD': {
        const argv = execForm(i.args);
        if (!argv) errors.push(`${at(i)}: expected the exec form, a JSON list of strings`);
        else if (i.keyword === 'ENTRYPOINT') image.entrypoint = argv;
        else image.cmd = argv;
        break;
      }
      case 'LABEL':
        break;
      default:
        errors.push(
          `${at(i)}: the image entrypoint test does not reproduce ${i.keyword} in the runtime stage`,
        );
    }
  }
  const ids = user === undefined ? undefined : /^(\d+):(\d+)$/.exec(user);
  if (!ids)
    errors.push(`${file}: the runtime stage's USER must be numeric uid:gid (it is ${user ?? 'unset'})`);
  else image.user = { uid: Number(ids[1]), gid: Number(ids[2]) };
  if (image.copies.length === 0) errors.push(`${file}: the runtime stage copies no production install`);
  if (image.entrypoint.length === 0) errors.push(`${file}: the runtime stage has no ENTRYPOINT`);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: image };
}

function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  try {
    const v: unknown = JSON.parse(args);
    return Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A .dockerignore's rules, in order: the last rule matching a path decides. */
export interface DockerIgnore {
  rules: { exclude: boolean; path: string }[];
}

/**
 * A .dockerignore of the forms the test can match exactly: `*` (everything) and plain paths,
 * each optionally negated with `!`. A pattern with other wildcards is an error, not a guess.
 */
export function parseDockerignore(text: string, file = '.dockerignore'): Parsed<DockerIgnore> {
  const errors: string[] = [];
  const rules: DockerIgnore['rules'] = [];
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const exclude = !line.startsWith('!');
    const path = (exclude ? line : line.slice(1)).replace(/^\/+|\/+$/g, '');
    if (path !== '*' && /[*?[\]\\]/.test(path))
      errors.push(`${file}:${n + 1}: ${line}: the test reads only \`*\` and plain paths`);
    else rules.push({ exclude, path });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { rules } };
}

/** Whether the build context holds `path` (relative to the context, `/`-separated). */
export function admitted(ignore: DockerIgnore, path: string): boolean {
  let excluded = false;
  for (const r of ignore.rules) {
    if (r.path === '*' || path === r.path || path.startsWith(`${r.path}/`)) excluded = r.exclude;
  }
  return !excluded;
}
