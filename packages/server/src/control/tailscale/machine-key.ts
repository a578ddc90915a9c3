/**
 * The server's Noise machine key. Every instance on one database must present the same key
 * (clients pin it from GET /key), so it is derived from the server secret that lives in the
 * database (lib/server-secret.ts) rather than made per process.
 */
import { deriveKey, loadServerSecret } from '../../lib/server-secret.js';
import type { Db } from '../../storage/database.js';
import { type X25519KeyPair, x25519Private } from './noise-crypto.js';

const loaded = new WeakMap<Db, Promise<X25519KeyPair>>();

export function machineKey(db: Db): Promise<X25519KeyPair> {
  let key = loaded.get(db);
  if (!key) {
    key = loadServerSecret(db).then((secret) => x25519Private(deriveKey(secret, 'tailscale-machine-key-v1')));
    // A failed read is retried by the next caller rather than remembered.
    key.catch(() => loaded.delete(db));
    loaded.set(db, key);
  }
  return key;
}

/** `mkey:<hex>`, Tailscale's text form of a machine public key. */
export const machineKeyText = (raw: Buffer): string => `mkey:${raw.toString('hex')}`;
