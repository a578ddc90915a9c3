/**
 * What a device says of itself over its protocol, kept on its row: the disco key, endpoints and
 * home relay its peers dial it by, its Hostinfo and, from it, the hostname, OS and client
 * version its record shows (which change when the client is upgraded); a rotation of its node
 * key; the public id of its flow-log stream. A report that changes what peers see moves the
 * network's netmap epoch with the device logged against it, exactly as an admin's change does,
 * so every open map stream on every instance notices it.
 *
 * Each function brings the caller's copy of the row up to date after its write, so a long-lived
 * session (a map stream) compares the next report with what is stored without reading it again.
 */
import { withChanges } from '../../core/changes.js';
import type { Db } from '../../storage/database.js';
import { netmapEpoch } from '../network/epochs.js';

/** A report, as the protocol read it; an absent hostname, OS or client version was not reported. */
export interface Reported {
  discoKey: string;
  endpoints: string;
  homeDerp: number;
  hostinfo: string | null;
  hostname?: string;
  os?: string;
  clientVersion?: string;
}

/** The columns of a device's row that its reports write, as the caller last read them. */
export interface ReportedState {
  id: string;
  network_id: string;
  hostname: string;
  os: string;
  client_version: string | null;
  disco_key: string | null;
  endpoints: string;
  home_derp: number;
  hostinfo: string | null;
}

/**
 * The SSH host keys a Hostinfo carries (`sshHostKeys`), as text to compare ('' for none: the
 * device runs no Tailscale SSH server). Peers' `tailscale
 * ssh` trusts a device's host keys only as its node in their maps gives them, so a device that
 * starts or stops its SSH server changes what they must be sent. The rest of a Hostinfo is
 * sent to peers with the next change about the device.
 */
function sshHostKeys(hostinfo: string | null): string {
  if (hostinfo === null || !hostinfo.includes('"sshHostKeys"')) return '';
  try {
    const keys = (JSON.parse(hostinfo) as { sshHostKeys?: unknown }).sshHostKeys;
    return Array.isArray(keys) && keys.length > 0 ? JSON.stringify(keys) : '';
  } catch {
    return '';
  }
}

/** Stores what a map request reported; returns whether anything peers see changed. */
export async function storeReport(db: Db, device: ReportedState, reported: Reported): Promise<boolean> {
  // What the device's record shows; unreported fields keep their value.
  const record = {
    hostname: reported.hostname ?? device.hostname,
    os: reported.os ?? device.os,
    client_version: reported.clientVersion ?? device.client_version,
  };
  const recordChanged =
    record.hostname !== device.hostname || record.os !== device.os || record.client_version !== device.client_version;
  const hostinfoChanged = reported.hostinfo !== null && reported.hostinfo !== device.hostinfo;
  // Parsed once, and only when the Hostinfo changed: an unchanged one keeps its keys and flag.
  const reportedSshKeys = hostinfoChanged ? sshHostKeys(reported.hostinfo) : undefined;
  const peersSee =
    device.disco_key !== reported.discoKey ||
    device.endpoints !== reported.endpoints ||
    device.home_derp !== reported.homeDerp ||
    recordChanged ||
    (reportedSshKeys !== undefined && reportedSshKeys !== sshHostKeys(device.hostinfo));
  if (!peersSee && !hostinfoChanged) return false;
  await withChanges(db, device.network_id, async (trx, changes) => {
    if (peersSee) await changes.touch(netmapEpoch, [device.id]);
    await trx
      .updateTable('devices')
      .set({
        disco_key: reported.discoKey,
        endpoints: reported.endpoints,
        home_derp: reported.homeDerp,
        ...record,
        ...(reportedSshKeys !== undefined && {
          hostinfo: reported.hostinfo,
          ssh_enabled: reportedSshKeys === '' ? 0 : 1,
        }),
      })
      .where('id', '=', device.id)
      .execute();
  });
  Object.assign(device, {
    disco_key: reported.discoKey,
    endpoints: reported.endpoints,
    home_derp: reported.homeDerp,
    ...record,
    hostinfo: reported.hostinfo ?? device.hostinfo,
  });
  return peersSee;
}

/** A new node key for a device (`OldNodeKey` → `NodeKey`): its peers get the new key. */
export async function rotateNodeKey(
  db: Db,
  device: { id: string; network_id: string; node_key: string },
  nodeKey: string,
): Promise<void> {
  await withChanges(db, device.network_id, async (trx, changes) => {
    await changes.touch(netmapEpoch, [device.id]);
    await trx.updateTable('devices').set({ node_key: nodeKey }).where('id', '=', device.id).execute();
  });
  device.node_key = nodeKey;
}

/** Keeps the public id of the device's flow log stream (set once; again if the secret changed). */
export async function storeFlowLogId(
  db: Db,
  device: { id: string; flow_log_id: string | null },
  publicId: string,
): Promise<void> {
  await db.updateTable('devices').set({ flow_log_id: publicId }).where('id', '=', device.id).execute();
  device.flow_log_id = publicId;
}
