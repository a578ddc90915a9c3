/**
 * The log ids of network flow logging. A Tailscale client uploads its flows to
 * `/c/tailtraffic.log.tailscale.io/{private id}`: the private id (32 bytes, hex) is the
 * credential, given to the device alone in its map (`Node.DataPlaneAuditLogID`), and its public
 * id is its SHA-256, as in Tailscale's logtail. Private ids are derived from the server secret
 * and the device id, so every instance hands a device the same one and none is stored; Warren
 * keeps the public id only, to find the device an upload names.
 *
 * The client also insists on a per-network id (`DomainDataPlaneAuditLogID`), which it sends
 * back as `copyId`; Warren derives it the same way and needs nothing else from it.
 */
import { createHash, createHmac } from 'node:crypto';
import { deriveKey, loadServerSecret } from '../../lib/server-secret.js';
import type { Db } from '../../storage/database.js';

const loaded = new WeakMap<Db, Promise<Buffer>>();

function flowLogKey(db: Db): Promise<Buffer> {
  let key = loaded.get(db);
  if (!key) {
    key = loadServerSecret(db).then((secret) => deriveKey(secret, 'tailscale-flow-log-ids-v1'));
    // A failed read is retried by the next caller rather than remembered.
    key.catch(() => loaded.delete(db));
    loaded.set(db, key);
  }
  return key;
}

export interface FlowLogIds {
  /** The device's private id (hex), sent in its own map only. */
  node: string;
  /** Its public id: what Warren stores and looks uploads up by. */
  nodePublic: string;
  /** The network's private id (hex). */
  domain: string;
}

const PRIVATE_ID = /^[0-9a-f]{64}$/;

/** The public id of a private id, or undefined when the text is not one. */
export function publicLogId(privateId: string): string | undefined {
  if (!PRIVATE_ID.test(privateId)) return undefined;
  return createHash('sha256').update(Buffer.from(privateId, 'hex')).digest('hex');
}

export async function flowLogIds(db: Db, networkId: string, deviceId: string): Promise<FlowLogIds> {
  const key = await flowLogKey(db);
  const node = createHmac('sha256', key).update(`node\0${deviceId}`).digest('hex');
  const domain = createHmac('sha256', key).update(`network\0${networkId}`).digest('hex');
  return { node, nodePublic: publicLogId(node) as string, domain };
}
