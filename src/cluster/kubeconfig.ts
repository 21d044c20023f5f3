import { toYaml } from '../bundle/yaml.js';

export interface KubeconfigSpec {
  clusterName: string;
  server: string;
  caPem: string;
  user: string;
  certPem: string;
  keyPem: string;
}

/** A kubeconfig with the credentials embedded, so it works from any directory and can be copied. */
export function renderKubeconfig(s: KubeconfigSpec): string {
  const b64 = (t: string) => Buffer.from(t).toString('base64');
  const context = `${s.user}@${s.clusterName}`;
  return toYaml(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: s.clusterName, cluster: { server: s.server, 'certificate-authority-data': b64(s.caPem) } },
      ],
      users: [
        {
          name: s.user,
          user: { 'client-certificate-data': b64(s.certPem), 'client-key-data': b64(s.keyPem) },
        },
      ],
      contexts: [{ name: context, context: { cluster: s.clusterName, user: s.user } }],
      'current-context': context,
      preferences: {},
    },
    { sortKeys: false },
  );
}
