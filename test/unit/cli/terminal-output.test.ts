/**
 * Names, paths and messages from catalogs and bundles, printed by the real commands: whatever
 * they hold, nothing reaches the terminal that it would act on (escape sequences, carriage
 * returns, backspaces, C1 controls, bidi overrides), and a one-line message stays one line. Every
 * payload shape of support/terminal-attacks.ts goes through every place input is printed.
 */
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packArchive } from '../../../src/bundle/archive.js';
import { main } from '../../../src/cli/main.js';
import { escapeControls } from '../../../src/util/terminal.js';
import { capture } from '../../support/capture.js';
import { controlCharacters, TerminalAttacks } from '../../support/terminal-attacks.js';
import { bosun, repo, type Run, workdir } from './run-bosun.js';

const sampleBundle = join(repo, 'bundles/bosun-sample/0.2.1');
const csvFile = 'manifests/bosun-sample.clusterserviceversion.yaml';

/** A YAML double-quoted string holding `s` exactly, every character outside printable ASCII escaped. */
function yamlString(s: string): string {
  const body = [...s]
    .map((c) => {
      const cp = c.codePointAt(0)!;
      if (cp >= 0x20 && cp < 0x7f && c !== '"' && c !== '\\') return c;
      return cp <= 0xffff
        ? `\\u${cp.toString(16).padStart(4, '0')}`
        : `\\U${cp.toString(16).padStart(8, '0')}`;
    })
    .join('');
  return `"${body}"`;
}

/** A catalog in `dir/cat` whose package, channel and default channel are all named `name`. */
async function catalogNamed(dir: string, name: string, folder = 'p'): Promise<void> {
  const docs = [
    { schema: 'olm.package', name, defaultChannel: name },
    { schema: 'olm.channel', package: name, name, entries: [{ name: 'b.v1.0.0' }] },
    {
      schema: 'olm.bundle',
      name: 'b.v1.0.0',
      package: name,
      image: '',
      properties: [{ type: 'olm.package', value: { packageName: name, version: '1.0.0' } }],
    },
  ];
  await mkdir(join(dir, 'cat', folder), { recursive: true });
  await writeFile(join(dir, 'cat', folder, 'catalog.json'), docs.map((d) => JSON.stringify(d)).join('\n'));
}

/** The sample bundle in `dir/bundle`, with annotations and the CSV's display name changed. */
async function bundleWith(
  dir: string,
  opts: { package?: string; channels?: string; displayName?: string },
): Promise<void> {
  await cp(sampleBundle, join(dir, 'bundle'), { recursive: true });
  const annotations = join(dir, 'bundle/metadata/annotations.yaml');
  let text = await readFile(annotations, 'utf8');
  if (opts.package !== undefined)
    text = text.replace('package.v1: bosun-sample', `package.v1: ${yamlString(opts.package)}`);
  if (opts.channels !== undefined) {
    text = text
      .replace('channels.v1: candidate,stable', `channels.v1: ${yamlString(opts.channels)}`)
      .replace('channel.default.v1: stable', `channel.default.v1: ${yamlString(opts.channels)}`);
  }
  await writeFile(annotations, text);
  if (opts.displayName !== undefined) {
    const csv = join(dir, 'bundle', csvFile);
    const yaml = await readFile(csv, 'utf8');
    await writeFile(
      csv,
      yaml.replace('  displayName: Bosun Sample Operator', `  displayName: ${yamlString(opts.displayName)}`),
    );
  }
}

/** What a terminal would be sent: both streams. */
const printed = (r: Run) => `${r.stdout}${r.stderr}`;

/** The output a terminal would act on nothing in, and that shows the payload as escapes. */
function expectInert(r: Run, payload: string): void {
  expect(controlCharacters(printed(r))).toEqual([]);
  expect(printed(r)).toContain(escapeControls(payload));
}

/** Every line is one the command wrote: none starts with what a payload's newline forged. */
function expectNoForgedLine(r: Run): void {
  for (const line of printed(r).split('\n')) expect(line).not.toMatch(/^valid catalog cat: 1 package/);
}

describe.each(TerminalAttacks)('$name, printed by the bosun command', ({ payload }) => {
  it('in package and channel names: catalog validate (text and JSON)', async () => {
    const dir = await workdir();
    await catalogNamed(dir, payload);
    const r = await bosun(dir, 'catalog', 'validate', 'cat');
    expect(r.code).toBe(1);
    expectInert(r, payload);
    expectNoForgedLine(r);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toMatch(/^invalid catalog cat: /);

    // JSON: still JSON, and it gives scripts the names as they are.
    const j = await bosun(dir, 'catalog', 'validate', 'cat', '--output', 'json');
    expect(controlCharacters(j.stdout)).toEqual([]);
    const report = JSON.parse(j.stdout) as { errors: { object: string | null }[] };
    expect(report.errors.some((e) => e.object?.includes(payload))).toBe(true);
  });

  it('in a catalog folder name: the error names the file', async () => {
    const folder = payload.replaceAll('/', '_').replaceAll('\0', '_');
    const dir = await workdir();
    await catalogNamed(dir, payload, folder);
    const r = await bosun(dir, 'catalog', 'validate', 'cat');
    expect(r.code).toBe(1);
    expectInert(r, folder);
    expectNoForgedLine(r);
  });

  it('in the package a bundle names: bundle validate, problems and summary', async () => {
    const dir = await workdir();
    await bundleWith(dir, { package: payload });
    const r = await bosun(dir, 'bundle', 'validate', 'bundle');
    expect(r.code).toBe(1);
    expectInert(r, payload);
    expectNoForgedLine(r);
    const last = r.stderr.trimEnd().split('\n').at(-1)!;
    expect(last).toBe(
      `invalid bundle bundle (package ${escapeControls(payload)}) (${last.split(' (').at(-1)}`,
    );
  });

  it('in a channel name: catalog publish`s summary, while the catalog keeps the name', async () => {
    const dir = await workdir();
    await bundleWith(dir, { channels: payload });
    const r = await bosun(dir, 'catalog', 'publish', 'cat', 'bundle', '--format', 'json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `published bosun-sample.v0.2.1 (0.2.1) to bosun-sample in cat: ${escapeControls(payload)} (replaces bosun-sample.v0.1.1)\n`,
    );
    // The catalog is data: the name is written as it is.
    const written = (await readFile(join(dir, 'cat/bosun-sample/catalog.json'), 'utf8'))
      .split(/\n(?=\{)/)
      .map((d) => JSON.parse(d) as { schema: string; name?: string });
    expect(written.find((d) => d.schema === 'olm.channel')?.name).toBe(payload);
    expect(controlCharacters(printed(r))).toEqual([]);
    expectNoForgedLine(r);
  });

  it('in file names inside a bundle archive: the errors name them', async () => {
    const dir = await workdir();
    const name = `manifests/${payload.replaceAll('/', '_').replaceAll('\0', '_')}.yaml`;
    const files = new Map([
      ['metadata/annotations.yaml', await readFile(join(sampleBundle, 'metadata/annotations.yaml'))],
      [name, Buffer.from('kind: [unclosed\n')],
    ]);
    await writeFile(join(dir, 'b.tar.gz'), packArchive(files).data);
    const r = await bosun(dir, 'bundle', 'validate', 'b.tar.gz');
    expect(r.code).toBe(1);
    expectInert(r, name);
    expectNoForgedLine(r);
  });

  it('in channel names: catalog diff, one line per change', async () => {
    const dir = await workdir();
    await catalogNamed(dir, 'p');
    await cp(join(dir, 'cat'), join(dir, 'old'), { recursive: true });
    const file = join(dir, 'cat/p/catalog.json');
    const docs = (await readFile(file, 'utf8'))
      .split('\n')
      .map((d) => JSON.parse(d) as Record<string, unknown>);
    docs.push({ schema: 'olm.channel', package: 'p', name: payload, entries: [{ name: 'b.v1.0.0' }] });
    await writeFile(file, docs.map((d) => JSON.stringify(d)).join('\n'));
    const r = await bosun(dir, 'catalog', 'diff', 'old', 'cat');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`         p: channel ${escapeControls(payload)} was added\n1 change, 0 breaking\n`);
  });

  // The catalog encoders already escape C0 controls in JSON and YAML as opm does; C1 controls
  // and bidi overrides they leave as they are, and those are escaped only on a terminal.
  it('in a CSV display name: catalog render escapes it on a terminal, and writes it as it is to a pipe', async () => {
    const dir = await workdir();
    await bundleWith(dir, { displayName: payload });
    const args = ['catalog', 'render', 'bundle', '-o', 'json'];

    const piped = await bosun(dir, ...args);
    expect(piped.code).toBe(0);
    const doc = JSON.parse(piped.stdout) as {
      properties: { type: string; value: { displayName?: string } }[];
    };
    expect(doc.properties.find((p) => p.type === 'olm.csv.metadata')?.value.displayName).toBe(payload);

    const c = capture(process.env, dir);
    (c.ctx.stdout as { isTTY?: boolean }).isTTY = true;
    expect(await main(args, c.ctx)).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(controlCharacters(c.stdout)).toEqual([]);
    // Only the display name changes on a terminal.
    expect(JSON.parse(c.stdout)).toEqual(JSON.parse(escapeControls(piped.stdout, { keepLayout: true })));
  });

  it('in a channel name: bosun resolve and explain, one line per step', async () => {
    const dir = await workdir();
    const docs = [
      { schema: 'olm.package', name: 'p', defaultChannel: payload },
      { schema: 'olm.channel', package: 'p', name: payload, entries: [{ name: 'p.v1.0.0' }] },
      {
        schema: 'olm.bundle',
        name: 'p.v1.0.0',
        package: 'p',
        image: 'quay.io/example/p:v1.0.0',
        properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }],
      },
    ];
    await mkdir(join(dir, 'cat/p'), { recursive: true });
    await writeFile(join(dir, 'cat/p/catalog.json'), docs.map((d) => JSON.stringify(d)).join('\n'));
    const sub = (channel: string) =>
      `apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: p, namespace: ops}\nspec: {name: p, source: cat, sourceNamespace: ops, channel: ${yamlString(channel)}}\n`;
    await writeFile(join(dir, 'sub.yaml'), sub(payload));
    const resolved = await bosun(dir, 'resolve', '--catalog=cat', '--subscription=sub.yaml');
    expect(resolved.stderr).toBe('');
    expect(resolved.stdout).toBe(
      `install p.v1.0.0 (1.0.0) from channel ${escapeControls(payload)} of catalog cat, for subscription p\n`,
    );
    const explained = await bosun(dir, 'explain', '--catalog=cat', '--subscription=sub.yaml');
    expect(explained.code).toBe(0);
    expectInert(explained, payload);
    expectNoForgedLine(explained);

    // Unresolvable: the Subscription's channel is not in the catalog, and the message says which.
    await writeFile(join(dir, 'sub.yaml'), sub(`${payload}-gone`));
    for (const command of ['resolve', 'explain']) {
      const r = await bosun(dir, command, '--catalog=cat', '--subscription=sub.yaml');
      expect(r.code).toBe(1);
      expectInert(r, `${payload}-gone`);
      expectNoForgedLine(r);
    }
  });

  it('in a message the command line quotes: a usage error', async () => {
    const dir = await workdir();
    const folder = payload.replaceAll('/', '_').replaceAll('\0', '_');
    await bundleWith(dir, {});
    await cp(join(dir, 'bundle'), join(dir, folder), { recursive: true });
    const r = await bosun(dir, 'catalog', 'validate', folder);
    expect(r.code).toBe(2);
    expect(controlCharacters(printed(r))).toEqual([]);
    expect(r.stderr).toContain(escapeControls(folder, { keepLayout: true }));
  });
});
