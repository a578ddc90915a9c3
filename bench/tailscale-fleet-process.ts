// One share of the Tailscale fleet benchmark's simulated devices, in a process of its own
// (started by tailscale-fleet.ts): the fleet's decoding is spread over processes so that the
// simulator does not set the delivery times it measures. It takes its share in a `start`
// message, reports progress and then each map message's arrival (the device, the time on the
// machine's monotonic clock, the packet filter it carries), and answers `census` and `stop`.
import { simulateTailscale, type TailscaleSimulation } from '../packages/cli/src/node/tailscale-simulator.js';
import type { MapMessage } from '../packages/server/src/index.js';
import type { FleetEvent, FleetRequest, MapArrival } from './tailscale-fleet.js';

/** The machine's monotonic clock in ms, the same in every process. */
const now = () => Number(process.hrtime.bigint()) / 1e6;
const send = (event: FleetEvent) => process.send?.(event);
/** The packet filter a map message carries: the single one, or Tailscale's named set of them. */
const filterOf = (message: MapMessage) => message.PacketFilter ?? message.PacketFilters;

// Arrivals go to the parent in batches: one IPC message per map message would cost more than
// decoding it. Each is stamped as it arrives, so the batching does not move the times.
let batch: MapArrival[] = [];
const flush = () => {
  if (batch.length > 0) send({ kind: 'maps', maps: batch });
  batch = [];
};

let sim: TailscaleSimulation | undefined;
process.on('message', async (request: FleetRequest) => {
  if (request.kind === 'start') {
    const { share } = request;
    sim = await simulateTailscale({
      server: share.urls[0],
      servers: share.urls,
      authKey:
        typeof share.authKey === 'string' ? share.authKey : (index) => share.authKey[Math.floor(index / share.group)],
      tags: share.tagged ? (index) => [`tag:g${Math.floor(index / share.group)}`] : undefined,
      first: share.first,
      count: share.count,
      concurrency: share.concurrency,
      hostnamePrefix: share.prefix,
      onMessage: (index, message, at) => {
        // A keep-alive says nothing about any change.
        if (message.KeepAlive === true && Object.keys(message).length === 1) return;
        const filter = filterOf(message);
        if (batch.length === 0) setImmediate(flush);
        batch.push({ index, at: at - performance.now() + now(), filter: filter ? JSON.stringify(filter) : undefined });
      },
      progress: (line) => send({ kind: 'progress', line }),
    });
    send({
      kind: 'ready',
      devices: sim.devices.map((d) => d.index),
      failed: sim.failed,
      reasons: sim.reasons,
      seconds: sim.seconds,
    });
  } else if (request.kind === 'census') {
    send({ kind: 'census', connected: sim?.connectedNow() ?? 0, reconnects: sim?.reconnects() ?? 0 });
  } else if (request.kind === 'stop') {
    sim?.stop();
    flush();
    process.disconnect();
  }
});
