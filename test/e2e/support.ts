/**
 * What the web catalog's browser tests share: a page that fails the test on anything a strict
 * page must not do (a script error, a request to another host, a dialog, a Content-Security-Policy
 * violation), screenshots kept as test artifacts, catalogs published into a directory and served
 * from a ConfigMap, and the real kubectl.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import type { CatalogSource } from '../../src/apis/operators.js';
import { catalogConfigMapData } from '../../src/cli/commands/start.js';
import { spawnBosun } from '../support/bosun-process.js';
import { catalogReady } from '../support/corpus-install.js';
import { olmReaderRole, serviceAccountToken } from '../support/users.js';
import { repo, runBosun } from '../unit/cli/run-bosun.js';
import { objectPath } from '../../src/kube/client.js';
import {
  catalogSource,
  client,
  ConfigMapResource,
  create,
  get,
  Resources,
} from '../integration/controllers/support.js';
import { eventually } from '../integration/support.js';

/** Where screenshots go: git-ignored (test-results/), kept by CI as artifacts. */
export const ScreenshotDir = join(repo, 'test-results', 'web');

export interface CheckedPage {
  page: Page;
  context: BrowserContext;
  /** Script errors, foreign requests, dialogs and CSP violations seen so far. */
  problems: string[];
  close(): Promise<void>;
}

/** A page of `baseUrl` whose clipboard the test may read, watched for what a strict page never does. */
export async function checkedPage(browser: Browser, baseUrl: string): Promise<CheckedPage> {
  const origin = new URL(baseUrl).origin;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`script error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:'))
      problems.push(`request to another host: ${url}`);
  });
  // Playwright's init scripts run outside the page's CSP; this one records every violation.
  // (Code for the page is given as text: this program is compiled without the DOM's types.)
  await page.addInitScript(
    `window.__violations = [];
     document.addEventListener('securitypolicyviolation', (e) =>
       window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
  );
  return {
    page,
    context,
    problems,
    close: () => context.close(),
  };
}

/** The CSP violations the page reported. */
export async function violations(page: Page): Promise<string[]> {
  return page.evaluate<string[]>('window.__violations');
}

/**
 * Signs the page in with a bearer token through its own form (the header's "Sign in"); resolves
 * once the page says who is signed in.
 */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.click('#session summary');
  await page.fill('#session-token', token);
  await page.click('#sign-in button[type="submit"]');
  await page.waitForSelector('#signed-in-as');
}

/**
 * A token for a viewer of the whole cluster's OLM state (OLM's kinds and PackageManifests in every
 * namespace, and the namespaces), for tests of what the manager's web catalog shows a signed-in
 * viewer; `remove` takes its ServiceAccount and role away.
 */
export async function clusterViewer(): Promise<{ token: string; user: string; remove(): Promise<void> }> {
  const name = `web-viewer-${process.pid}-${Date.now().toString(36)}`;
  await olmReaderRole(client(), name, { namespaces: true });
  const token = await serviceAccountToken(client(), 'default', name, [{ role: name }]);
  return {
    token,
    user: `system:serviceaccount:default:${name}`,
    remove: async () => {
      const rbac = '/apis/rbac.authorization.k8s.io/v1';
      for (const path of [
        `${rbac}/clusterrolebindings/default-${name}-0`,
        `${rbac}/clusterroles/${name}`,
        `/api/v1/namespaces/default/serviceaccounts/${name}`,
      ])
        await client()
          .request({ method: 'DELETE', path })
          .catch(() => undefined);
    },
  };
}

/** Opens the page and waits for its first render. */
export async function openCatalog(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
}

/** A screenshot of the whole page, or of the window only for a page too long to be worth keeping whole. */
export async function screenshot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  await mkdir(ScreenshotDir, { recursive: true });
  await page.screenshot({ path: join(ScreenshotDir, `${name}.png`), fullPage: opts.fullPage ?? true });
}

/** Publishes bundles of bundles/ into a catalog directory with the real CLI. */
export async function publish(dir: string, ...bundles: string[]): Promise<void> {
  for (const b of bundles) {
    const r = await runBosun(['catalog', 'publish', dir, join(repo, 'bundles', b)]);
    expect(r.code, r.stderr).toBe(0);
  }
}

/** Serves the catalog directory as CatalogSource `name` from a ConfigMap in `ns`; resolves once READY. */
export async function serveFromConfigMap(ns: string, name: string, dir: string): Promise<void> {
  await create(ConfigMapResource, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: await catalogConfigMapData(dir),
  } as never);
  await create(
    Resources.CatalogSource,
    ns,
    catalogSource(ns, name, { sourceType: 'configmap', configMap: name, displayName: `Samples of ${ns}` }),
  );
  await waitReady(ns, name);
}

/** Writes the directory's catalog into the ConfigMap again (the manager watches it). */
export async function updateConfigMap(ns: string, name: string, dir: string): Promise<void> {
  await client().request({
    method: 'PATCH',
    path: objectPath(ConfigMapResource, name, ns),
    body: { data: await catalogConfigMapData(dir) },
    contentType: 'application/merge-patch+json',
  });
}

export async function waitReady(ns: string, name: string): Promise<void> {
  await eventually(
    `CatalogSource ${ns}/${name} to be READY`,
    async () => {
      const cs = await get<CatalogSource>(Resources.CatalogSource, ns, name);
      return cs && catalogReady(cs) ? cs : undefined;
    },
    120_000,
  );
}

/** Runs the real kubectl against the test cluster, with `input` on its standard input. */
export function kubectl(
  args: string[],
  input = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', args, {
      env: { ...process.env, KUBECONFIG: inject('kubeconfig') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) =>
      reject(
        new Error(
          `kubectl could not be run (${err.message}): the browser tests apply what the page copies with it`,
          {
            cause: err,
          },
        ),
      ),
    );
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** The `bosun` CLI in a process of its own (as a user runs it), its output collected. */
export function bosunProcess(args: string[]): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawnBosun(args, { cwd: repo });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return { child, out: () => out, err: () => err };
}
