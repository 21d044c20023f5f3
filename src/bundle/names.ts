/** Kubernetes name rules (apimachinery's validation), used for package, object and channel names. */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `s` is not a DNS-1123 label (max 63, lowercase alphanumerics and `-`), or undefined. */
export function dns1123LabelError(s: string): string | undefined {
  if (s.length > 63) return `"${s}" is longer than 63 characters`;
  if (!DNS1123_LABEL.test(s)) {
    return `"${s}" is not a DNS-1123 label: use lowercase letters, digits and "-", starting and ending with a letter or digit`;
  }
  return undefined;
}

/** Why `s` is not a DNS-1123 subdomain (max 253, labels joined by `.`), or undefined. */
export function dns1123SubdomainError(s: string): string | undefined {
  if (s.length > 253) return `"${s}" is longer than 253 characters`;
  if (!DNS1123_SUBDOMAIN.test(s)) {
    return `"${s}" is not a DNS-1123 subdomain: use lowercase letters, digits, "-" and ".", starting and ending with a letter or digit`;
  }
  return undefined;
}
