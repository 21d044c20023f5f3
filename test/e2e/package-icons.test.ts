/**
 * A CSV's icon, opened in headless Chromium through `kubectl proxy` (the API server's origin, with
 * the proxy's admin credentials), runs no script and reads nothing: an icon of type text/html,
 * application/xhtml+xml or text/xml is a download, and an SVG with script is shown sandboxed. The
 * same SVG served without the policy runs its script in the same browser, so the test would see it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defaultPackageApiAddress } from '../../src/server/packageserver/listen.js';
import { launchBrowser } from '../support/browser.js';
import { configMapCatalog, managerWithPackageApi } from '../integration/packages/support.js';
import { eventually, freshNamespace } from '../integration/support.js';
import { client } from '../integration/controllers/support.js';

const base = '/apis/packages.operators.coreos.com/v1';
/** What each payload tries: mark the document, and read the cluster's Secrets with the proxy's credentials. */
const script =
  "document.documentElement.setAttribute('data-ran', '1');" +
  "fetch('/api/v1/secrets').then((r) => r.text()).then((t) => document.documentElement.setAttribute('data-secrets', String(t.length)));";
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" onload="${script.replace(/"/g, '&quot;')}"><script><![CDATA[${script}]]></script><rect width="64" height="64"/></svg>`;
const html = `<!doctype html><html><body><p>icon</p><script>${script}</script><img src="x" onerror="${script.replace(/"/g, '&quot;')}"></body></html>`;

const icons: [string, string, string][] = [
  ['evil-html', 'text/html', html],
  ['evil-html-charset', 'TEXT/HTML; charset=utf-8', html],
  [
    'evil-xhtml',
    'application/xhtml+xml',
    `<html xmlns="http://www.w3.org/1999/xhtml"><body><script>${script}</script></body></html>`,
  ],
  ['evil-xml', 'text/xml', svg],
  ['evil-svg', 'image/svg+xml', svg],
  ['evil-svg-upper', 'IMAGE/SVG+XML', svg],
];

function evilPackage(name: string, mediatype: string, data: string): unknown[] {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: `${name}.v1.0.0` },
    spec: {
      displayName: name,
      version: '1.0.0',
      icon: [{ base64data: b64(data), mediatype }],
      installModes: [{ type: 'AllNamespaces', supported: true }],
      install: { strategy: 'deployment', spec: { deployments: [] } },
    },
  };
  return [
    { schema: 'olm.package', name, defaultChannel: 'stable' },
    { schema: 'olm.channel', package: name, name: 'stable', entries: [{ name: `${name}.v1.0.0` }] },
    {
      schema: 'olm.bundle',
      name: `${name}.v1.0.0`,
      package: name,
      image: `example.com/${name}:1.0.0`,
      properties: [
        { type: 'olm.package', value: { packageName: name, version: '1.0.0' } },
        { type: 'olm.bundle.object', value: { data: b64(JSON.stringify(csv)) } },
      ],
    },
  ];
}

let stopManager: () => Promise<void>;
let browser: Browser;
let proxy: ChildProcess;
let proxyUrl: string;
let ns: string;

beforeAll(async () => {
  ({ stop: stopManager } = await managerWithPackageApi({
    packageApiAddr: defaultPackageApiAddress(),
    catalog: `icons-global-${process.pid}`,
    displayName: 'Icon test samples',
  }));
  ns = await freshNamespace('icons');
  const docs = icons.flatMap(([name, type, data]) => evilPackage(name, type, data));
  await configMapCatalog(ns, 'evil', { 'catalog.json': docs.map((d) => JSON.stringify(d)).join('\n') });
  await eventually('the evil packages to be served', async () => {
    const list = await client().request<{ items: unknown[] }>({
      path: `${base}/namespaces/${ns}/packagemanifests`,
      query: { labelSelector: 'catalog=evil' },
    });
    return list.items.length === icons.length ? true : undefined;
  });
  proxy = spawn('kubectl', ['--kubeconfig', inject('kubeconfig'), 'proxy', '--port=0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proxy.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proxyUrl = await eventually('kubectl proxy to listen', async () => {
    const m = /Starting to serve on ([\d.]+:\d+)/.exec(out);
    return m ? `http://${m[1]}` : undefined;
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  proxy?.kill();
  await stopManager?.();
});

/** Opens `url` in a fresh page; what the document became, and whether anything asked for Secrets. */
async function open(context: BrowserContext, url: string) {
  const page = await context.newPage();
  const secretRequests: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/secrets')) secretRequests.push(r.url());
  });
  let download = false;
  page.on('download', () => (download = true));
  await page.goto(url).catch(() => undefined); // a download aborts the navigation
  await page.waitForTimeout(500);
  const marks = await page
    .evaluate<[string | null, string | null]>(
      `[document.documentElement.getAttribute('data-ran'), document.documentElement.getAttribute('data-secrets')]`,
    )
    .catch(() => [null, null] as [null, null]);
  const shown = page.url();
  await page.close();
  return { ran: marks[0], secrets: marks[1], secretRequests, download, shown };
}

describe('a CSV icon opened through kubectl proxy', () => {
  it.each(icons.filter(([, type]) => !/svg/i.test(type)))(
    '%s (%s) is a download: never rendered, no script, no request for Secrets',
    async (name) => {
      const context = await browser.newContext({ acceptDownloads: true });
      try {
        const r = await open(context, `${proxyUrl}${base}/namespaces/${ns}/packagemanifests/${name}/icon`);
        expect(r.download).toBe(true);
        expect(r.ran).toBeNull();
        expect(r.secretRequests).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  it.each(icons.filter(([, type]) => /svg/i.test(type)))(
    '%s (%s) is shown sandboxed: its script and onload never run, no request for Secrets',
    async (name) => {
      const context = await browser.newContext();
      try {
        const r = await open(context, `${proxyUrl}${base}/namespaces/${ns}/packagemanifests/${name}/icon`);
        expect(r.download).toBe(false);
        expect(r.ran).toBeNull();
        expect(r.secrets).toBeNull();
        expect(r.secretRequests).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  it('the same SVG served without the policy runs its script in this browser (the checks above can fail)', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'image/svg+xml' });
      res.end(svg);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const context = await browser.newContext();
    try {
      const r = await open(context, `http://127.0.0.1:${(server.address() as AddressInfo).port}/icon.svg`);
      expect(r.ran).toBe('1');
      expect(r.secretRequests.length).toBeGreaterThan(0);
    } finally {
      await context.close();
      server.close();
    }
  });
});
