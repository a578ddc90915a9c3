/**
 * The ETag of a stored policy: the SHA-256 of its exact text in hex, quoted as HTTP wants. The
 * whole digest, as Tailscale gives it: its GitOps pusher compares the ETag with the digest of
 * its own copy of the file to tell "nothing to push" and an edit made elsewhere from its own.
 */
import { createHash } from 'node:crypto';

export function policyEtag(text: string): string {
  return `"${createHash('sha256').update(text).digest('hex')}"`;
}
