/**
 * Network flow logs uploaded by Tailscale clients, as connection log entries.
 *
 * A client's netlog sends, every few seconds, a JSON array of messages, each one window
 * (`start`, `end`) of the device's traffic counted per connection (`proto`, `src`, `dst`,
 * `txPkts`, `txBytes`, `rxPkts`, `rxBytes`), `src` always the device's side. Mesh traffic
 * (`virtualTraffic`), subnet traffic (`subnetTraffic`) and exit traffic (`exitTraffic`, whose
 * addresses the client blanks unless told otherwise) become entries; `physicalTraffic` (the
 * WireGuard packets underneath) does not, as a native device does not report it either.
 *
 * Each entry passes the rules of a native report (connections.validate.ts) and its source must
 * be the uploader's (connections.source.ts). Unlike a native report, one bad entry does not
 * refuse the upload: the client would send the same body again forever and never log again, so
 * the entries that pass are stored and the others counted as rejected. A message naming
 * another device (`nodeId`) is rejected whole.
 */
import type { ReportedConnectionRequest } from '@warren/contract';
import type { AppContext, DeviceRef } from '../../core/context.js';
import { appendConnections, toRows } from './connections.service.js';
import { foreignSources } from './connections.source.js';
import { type ParsedConnection, type Protocol, parseConnection } from './connections.validate.js';

/** IP protocol numbers (tailscale.com/types/ipproto) that the connection log has a name for. */
const PROTOCOL_NUMBERS: ReadonlyMap<number, Protocol> = new Map([
  [1, 'icmp'],
  [6, 'tcp'],
  [17, 'udp'],
  [58, 'icmp'],
]);
const TRAFFIC = ['virtualTraffic', 'subnetTraffic', 'exitTraffic'] as const;
/** Rows per append, as a native report holds at most. */
const CHUNK = 1_000;

export interface FlowLogResult {
  accepted: number;
  rejected: number;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const count = (value: unknown): number => (value === undefined ? 0 : (value as number));

/** One counted connection of a message as a native entry, or undefined if it has no name for it. */
function entryOf(flow: unknown, start: string, end: string): ReportedConnectionRequest | undefined {
  if (!isObject(flow)) return undefined;
  const proto = PROTOCOL_NUMBERS.get(flow.proto as number);
  if (!proto) return undefined;
  return {
    start,
    end,
    proto,
    src: { addr: text(flow.src) },
    dst: { addr: text(flow.dst) },
    txBytes: count(flow.txBytes),
    rxBytes: count(flow.rxBytes),
    txPackets: count(flow.txPkts),
    rxPackets: count(flow.rxPkts),
  };
}

/** The entries an upload describes, checked one by one; `rejected` counts those refused. */
export function parseFlowLog(body: unknown, reporter: string): { parsed: ParsedConnection[]; rejected: number } {
  const parsed: ParsedConnection[] = [];
  let rejected = 0;
  for (const message of Array.isArray(body) ? body : []) {
    // Lines that are not flow messages (logtail's own notes) carry no window.
    if (!isObject(message) || message.start === undefined) continue;
    const flows = TRAFFIC.flatMap((kind) => (Array.isArray(message[kind]) ? (message[kind] as unknown[]) : []));
    if (message.nodeId !== reporter) {
      rejected += flows.length;
      continue;
    }
    for (const flow of flows) {
      const entry = entryOf(flow, text(message.start), text(message.end));
      const result = entry && parseConnection(entry, reporter);
      if (result && typeof result !== 'string') parsed.push(result);
      else rejected++;
    }
  }
  return { parsed, rejected };
}

/** Stores what an upload of `reporter` truthfully describes. */
export async function ingestFlowLog(ctx: AppContext, reporter: DeviceRef, body: unknown): Promise<FlowLogResult> {
  const { parsed, rejected } = parseFlowLog(body, reporter.deviceId);
  if (parsed.length === 0) return { accepted: 0, rejected };
  const foreign = new Set(await foreignSources(ctx.db, reporter, parsed));
  const own = parsed.filter((_, index) => !foreign.has(index));
  const rows = await toRows(ctx.db, reporter, own);
  const now = ctx.clock.now();
  for (let at = 0; at < rows.length; at += CHUNK) {
    await appendConnections(ctx.db, reporter.networkId, rows.slice(at, at + CHUNK), now);
  }
  return { accepted: rows.length, rejected: rejected + foreign.size };
}
