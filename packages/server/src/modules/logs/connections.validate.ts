/**
 * The rules of one reported connection, beyond what the body schema already checked
 * (shapes, non-negative integers, unknown fields). Pure: an entry in, a parsed entry or the
 * reason it is refused out, so the service can name the first bad entry of a batch.
 */
import type { ReportedConnectionRequest } from '@warren/contract';
import { type ParsedEndpoint, parseEndpoint } from './connections.address.js';

export const PROTOCOLS = ['tcp', 'udp', 'icmp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export interface ParsedConnection {
  startMs: number;
  endMs: number;
  proto: Protocol;
  src: ParsedEndpoint;
  dst: ParsedEndpoint;
  txBytes: number;
  rxBytes: number;
  txPackets: number;
  rxPackets: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** RFC 3339 date-time → epoch milliseconds (sub-millisecond digits dropped), or undefined. */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  if (day < 1 || day > daysInMonth) return undefined;
  const ms = m[7] ? Number(m[7].padEnd(3, '0').slice(0, 3)) : 0;
  let offset = 0;
  if (!m[8]) {
    const offHours = Number(m[10]);
    const offMinutes = Number(m[11]);
    if (offHours > 23 || offMinutes > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (offHours * 60 + offMinutes) * 60_000;
  }
  let utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (year < 100) {
    // Date.UTC reads years 0–99 as 1900–1999.
    const date = new Date(utc);
    date.setUTCFullYear(year);
    utc = date.getTime();
  }
  return utc - offset;
}

const COUNTERS = ['txBytes', 'rxBytes', 'txPackets', 'rxPackets'] as const;

/**
 * Checks one entry reported by `reporter`. A device reports its own connections: the source
 * is the reporter (named or implied); naming another device is refused, not corrected.
 */
export function parseConnection(entry: ReportedConnectionRequest, reporter: string): ParsedConnection | string {
  const startMs = parseRfc3339(entry.start);
  if (startMs === undefined) return `start "${entry.start}" is not an RFC 3339 time`;
  const endMs = parseRfc3339(entry.end);
  if (endMs === undefined) return `end "${entry.end}" is not an RFC 3339 time`;
  if (endMs < startMs) return 'end is before start';
  const proto = entry.proto as Protocol;
  if (!PROTOCOLS.includes(proto)) return `proto "${entry.proto}" is not one of ${PROTOCOLS.join(', ')}`;
  const claimed = entry.src.deviceId;
  if (claimed != null && claimed !== reporter) {
    return `src.deviceId is ${claimed}, but a device reports only its own connections (this is ${reporter})`;
  }
  const src = parseEndpoint(entry.src.addr);
  if (typeof src === 'string') return `src.addr "${entry.src.addr}" ${src}`;
  const dst = parseEndpoint(entry.dst.addr);
  if (typeof dst === 'string') return `dst.addr "${entry.dst.addr}" ${dst}`;
  if (proto !== 'icmp') {
    // Port 0 is not a TCP or UDP port; ICMP has no ports and reports 0.
    if (src.port === 0) return `src.addr "${entry.src.addr}" has port 0, which only icmp entries may have`;
    if (dst.port === 0) return `dst.addr "${entry.dst.addr}" has port 0, which only icmp entries may have`;
  }
  for (const name of COUNTERS) {
    const value = entry[name];
    if (!Number.isSafeInteger(value) || value < 0) return `${name} must be an integer from 0 to 2^53 - 1`;
  }
  return {
    startMs,
    endMs,
    proto,
    src,
    dst,
    txBytes: entry.txBytes,
    rxBytes: entry.rxBytes,
    txPackets: entry.txPackets,
    rxPackets: entry.rxPackets,
  };
}
