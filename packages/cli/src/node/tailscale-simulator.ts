/**
 * `warren node simulate --protocol tailscale`: a fleet of Tailscale-protocol devices in one
 * process. Each device has its own machine key and control channel (the ts2021 upgrade, Noise
 * IK, HTTP/2), registers with the auth key and holds its map stream open, as tailscaled does;
 * no packets flow. Connections are opened with bounded concurrency; what each device receives
 * is counted, and `onMessage` sees every map message with its arrival time (the benchmarks
 * measure how long a change takes to reach the last stream).
 */
import type { ControlChannel, MapMessage, MapStream } from '@warren/server';
import { loadServer } from '../commands/server.js';
import { message } from './agent.js';
import { pool, startProgress } from './concurrency.js';

export interface TailscaleSimulateOptions {
  server: string;
  /** Several instances of one server: device i connects to `servers[i % length]` (default: `server`). */
  servers?: string[];
  /** The auth key, or the auth key device `index` registers with (a server may tag by key). */
  authKey: string | ((index: number) => string);
  count: number;
  /** Devices connecting and registering at once (default 32). */
  concurrency?: number;
  /** Hostnames are `<prefix>-1` … `<prefix>-N` (default `sim`). */
  hostnamePrefix?: string;
  /** The tags device `index` asks for (`--advertise-tags`); none by default. */
  tags?: (index: number) => string[];
  /** Every map message, with the device's index and when it arrived (performance.now()). */
  onMessage?: (index: number, message: MapMessage, at: number) => void;
  progress?: (line: string) => void;
  signal?: AbortSignal;
}

export interface TailscaleDevice {
  index: number;
  /** The instance it is connected to. */
  server: string;
  hostname: string;
  nodeKey: string;
  channel: ControlChannel;
  stream: MapStream;
  /** Map messages received so far (the first is the full map). */
  messages: number;
  /** Peers in the device's map as last received. */
  peers: Set<number>;
}

export interface TailscaleSimulation {
  devices: TailscaleDevice[];
  connected: number;
  failed: number;
  /** Failures by reason, so 10,000 refusals for one cause read as one line. */
  reasons: Record<string, number>;
  /** Seconds until every device had registered and received its full map. */
  seconds: number;
  stop(): void;
}

/** Keeps a device's peer set as the map messages describe it. */
function applyPeers(peers: Set<number>, map: MapMessage): void {
  const ids = (list: unknown) => (Array.isArray(list) ? list : []).map((p) => Number((p as { ID?: number }).ID ?? p));
  if (Array.isArray(map.Peers)) {
    peers.clear();
    for (const id of ids(map.Peers)) peers.add(id);
  }
  for (const id of ids(map.PeersChanged)) peers.add(id);
  for (const id of ids(map.PeersRemoved)) peers.delete(id);
}

export async function simulateTailscale(options: TailscaleSimulateOptions): Promise<TailscaleSimulation> {
  const { ControlChannel, randomTailscaleNodeKey, serverNoiseKey } = await loadServer();
  const { count, signal } = options;
  const concurrency = options.concurrency ?? 32;
  const prefix = options.hostnamePrefix ?? 'sim';
  const servers = options.servers ?? [options.server];
  // Every instance of one server presents the same key (it lives in the shared database).
  const serverKey = await serverNoiseKey(servers[0], signal);
  const devices: TailscaleDevice[] = [];
  const reasons: Record<string, number> = {};
  let failed = 0;
  let refused = false;
  const progress = options.progress;
  const clock = startProgress('connected', count, () => ({ done: devices.length, failed }), progress);

  await pool(
    Array.from({ length: count }, (_, i) => i),
    concurrency,
    async (index) => {
      if (refused || signal?.aborted) return;
      const hostname = `${prefix}-${index + 1}`;
      const nodeKey = randomTailscaleNodeKey();
      const server = servers[index % servers.length];
      let channel: ControlChannel | undefined;
      try {
        channel = await ControlChannel.open(server, serverKey);
        const answer = await channel.register({
          NodeKey: nodeKey,
          Auth: { AuthKey: typeof options.authKey === 'string' ? options.authKey : options.authKey(index) },
          Hostinfo: {
            Hostname: hostname,
            OS: 'linux',
            IPNVersion: 'warren-simulator',
            RequestTags: options.tags?.(index),
          },
        });
        if (typeof answer.Error === 'string' && answer.Error) {
          if (/auth key/i.test(answer.Error)) refused = true;
          throw new Error(answer.Error);
        }
        let connected: () => void = () => {};
        let lost: (error: Error) => void = () => {};
        const first = new Promise<void>((resolve, reject) => {
          connected = resolve;
          lost = reject;
        });
        const open = channel;
        const device: TailscaleDevice = {
          index,
          server,
          hostname,
          nodeKey,
          channel: open,
          messages: 0,
          peers: new Set(),
          stream: open.map({ NodeKey: nodeKey, Hostinfo: { Hostname: hostname, OS: 'linux' } }, (map) => {
            const at = performance.now();
            device.messages++;
            applyPeers(device.peers, map);
            options.onMessage?.(index, map, at);
            if (device.messages === 1) connected();
          }),
        };
        device.stream.done.then(() => lost(new Error('the map stream ended before its first message')), lost);
        await first;
        devices.push(device);
      } catch (error) {
        channel?.close();
        if (signal?.aborted) return;
        failed++;
        const reason = message(error);
        reasons[reason] = (reasons[reason] ?? 0) + 1;
      }
    },
  );
  const seconds = clock.stop();
  devices.sort((a, b) => a.index - b.index);
  return {
    devices,
    connected: devices.length,
    failed,
    reasons,
    seconds,
    stop: () => {
      for (const device of devices) device.channel.close();
    },
  };
}
