/** The ETag of a stored policy: a digest of its exact text, quoted as HTTP wants. */
import { createHash } from 'node:crypto';

export function policyEtag(text: string): string {
  return `"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"`;
}
