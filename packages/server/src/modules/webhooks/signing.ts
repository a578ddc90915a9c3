/**
 * Standard Webhooks signing. A secret is `whsec_` and the base64 of 32 random bytes; the
 * signature of a delivery is `v1,` and the base64 HMAC-SHA256, under the secret's bytes, of
 * `{webhook-id}.{webhook-timestamp}.{body}`. During a rotation both secrets sign, and the
 * header carries both signatures separated by a space, so a receiver holding either verifies.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of one delivery attempt; `timestamp` in Unix seconds. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestamp, body)).join(' '),
  };
}
