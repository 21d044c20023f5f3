/**
 * A manager that dies without stopping leaves its spooled catalogs behind; the next start removes
 * those of managers that are gone (sweepStaleSpools), and nothing else: not a running manager's,
 * not one whose owner it cannot tell, not another user's, not a link.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CatalogSpool, sweepStaleSpools } from '../../../../src/catalog/content/spool.js';
import { tempDir } from '../../../support/temp-dir.js';

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((done) => child.once('exit', done));
  return child.pid!;
}

/** This process's start time as /proc says, as the spool records it. */
function ourStart(): string | undefined {
  try {
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

async function spoolDir(parent: string, name: string, owner?: object): Promise<string> {
  const dir = join(parent, `bosun-catalogs-${name}`);
  await mkdir(dir);
  await writeFile(join(dir, 'olm_c_1.fbc'), 'spooled catalog');
  if (owner) await writeFile(join(dir, 'owner'), JSON.stringify(owner));
  return dir;
}

describe('sweepStaleSpools', () => {
  it('removes the spools of managers that are gone, and only those', async () => {
    const parent = await tempDir('bosun-sweep-');
    const dead = await deadPid();
    const gone = await spoolDir(parent, 'gone', { pid: dead });
    const goneWithStart = await spoolDir(parent, 'gone2', { pid: dead, start: '12345' });
    // Our own pid with another start time: a process that had our pid before us.
    const reused = await spoolDir(parent, 'reused', { pid: process.pid, start: 'not-our-start' });
    const running = await spoolDir(parent, 'running', {
      pid: process.pid,
      ...(ourStart() ? { start: ourStart() } : {}),
    });
    const parentProcess = await spoolDir(parent, 'parent', { pid: process.ppid });
    const noOwner = await spoolDir(parent, 'noowner');
    const badOwner = await spoolDir(parent, 'badowner');
    await writeFile(join(badOwner, 'owner'), '{"pid": "1; rm -rf /"}');
    const other = await spoolDir(parent, 'also-gone');
    await writeFile(join(other, 'owner'), JSON.stringify({ pid: dead }));
    // A link named like a spool, pointing at a folder that must survive.
    const target = await tempDir('bosun-sweep-target-');
    await writeFile(join(target, 'owner'), JSON.stringify({ pid: dead }));
    await symlink(target, join(parent, 'bosun-catalogs-link'));
    const unrelated = join(parent, 'something-else');
    await mkdir(unrelated);
    await writeFile(join(unrelated, 'owner'), JSON.stringify({ pid: dead }));

    const removed = await sweepStaleSpools(parent);

    const expectedGone = [gone, goneWithStart, other, ...(ourStart() ? [reused] : [])];
    expect(removed.sort()).toEqual(expectedGone.sort());
    for (const d of expectedGone) expect(existsSync(d)).toBe(false);
    for (const d of [
      running,
      parentProcess,
      noOwner,
      badOwner,
      unrelated,
      target,
      join(parent, 'bosun-catalogs-link'),
    ])
      expect(existsSync(d), d).toBe(true);
    expect(await readFile(join(target, 'owner'), 'utf8')).toContain(String(dead));
  });

  it('leaves a spool this process opened, and removes it once its owner is gone', async () => {
    const parent = await tempDir('bosun-sweep-');
    const spool = await CatalogSpool.open(parent);
    expect(JSON.parse(await readFile(join(spool.dir, 'owner'), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(await sweepStaleSpools(parent)).toEqual([]);
    expect(existsSync(spool.dir)).toBe(true);
    await writeFile(join(spool.dir, 'owner'), JSON.stringify({ pid: await deadPid() }));
    expect(await sweepStaleSpools(parent)).toEqual([spool.dir]);
    expect(existsSync(spool.dir)).toBe(false);
  });

  it('finds nothing to do in a folder that does not exist', async () => {
    expect(await sweepStaleSpools(join(await tempDir('bosun-sweep-'), 'missing'))).toEqual([]);
  });
});
