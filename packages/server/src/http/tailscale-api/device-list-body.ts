/**
 * `/api/v2`'s device list body, made from the kept detail records
 * (modules/devices/device-records.ts). Those records are replaced, never changed, when anything
 * they show moves, so a record object stands for its content: each one's Tailscale JSON is kept
 * by the object, and a whole body is kept per network, fields and filter while the call's
 * records are the very objects it was made from. A poll of an unchanged 1,000-device list then
 * compares 1,000 references instead of joining 600 kB of text.
 */
import type { DeviceBody } from '@warren/contract';
import { presentTailscaleDevice } from './devices.presenter.js';

interface KeptBody {
  records: readonly DeviceBody[];
  body: Buffer;
}

const MAX_BODIES = 64;

export class TailscaleListBodies {
  private readonly json = { default: new WeakMap<DeviceBody, string>(), all: new WeakMap<DeviceBody, string>() };
  private readonly bodies = new Map<string, KeptBody>();

  /** `key` names the network, fields and filter that selected `records`. */
  body(key: string, records: readonly DeviceBody[], all: boolean): Buffer {
    const kept = this.bodies.get(key);
    if (kept && sameRecords(kept.records, records)) return kept.body;
    const json = all ? this.json.all : this.json.default;
    let text = '{"devices":[';
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      let one = json.get(record);
      if (one === undefined) {
        one = JSON.stringify(presentTailscaleDevice(record, all));
        json.set(record, one);
      }
      text += i === 0 ? one : `,${one}`;
    }
    const body = Buffer.from(`${text}]}`);
    this.bodies.delete(key);
    this.bodies.set(key, { records, body });
    if (this.bodies.size > MAX_BODIES) this.bodies.delete(this.bodies.keys().next().value as string);
    return body;
  }
}

function sameRecords(a: readonly DeviceBody[], b: readonly DeviceBody[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
