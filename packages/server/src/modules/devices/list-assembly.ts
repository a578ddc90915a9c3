/**
 * A whole device list's body, made from the body before it so that a build costs what moved.
 *
 * At 10,000 devices every heartbeat moves one record's `lastSeen`, and the fleet's presence
 * batches (up to 20 a second) each made every list body stale; a build then checked all 10,000
 * kept records, looked up each one's JSON and joined them into 3–8 MB again, 11–22 ms of the
 * server's thread per build. Here a body is held as segments, runs of consecutive devices, each
 * remembering what its records showed (record version, last heartbeat, online at the build's
 * time) and its JSON as a view into the body. The next build walks the selection once,
 * comparing those numbers; a run whose devices all show the same is reused as it is, and only
 * the runs with a moved device are rendered again, in one call (so one read of rows for all
 * of them). What is still proportional to the whole list is that walk (numbers, no records)
 * and copying the segments into the new body, a single `Buffer.concat` of a few hundred parts.
 *
 * Segments end at devices chosen by their id, not at fixed positions: a device added or removed
 * changes the run it is in, not every run after it. Reuse needs no other check of what changed:
 * a record shows its row (moved only with its version: device-records.ts), its presence (the
 * heartbeat and online-at-now, compared here, which also catches devices timing out with nothing
 * written), and, for detail records, the network's routes, whose text is part of `context`:
 * a body made with other routes or another serializer reuses nothing.
 */
import { isOnline } from '../network/online.js';
import type { DeviceStamp } from './devices.repository.js';

/**
 * The JSON of each record, in the stamps' order: null for one the shape does not show,
 * undefined for one whose row is gone. Called once per build with every device whose run must
 * be rendered, so the rows of all of them are read together.
 */
export type RenderRecords = (stamps: DeviceStamp[]) => Promise<(Buffer | null | undefined)[]>;

interface Segment {
  ids: readonly string[];
  /** Per device: its record version, NaN when nothing was rendered for it (never equal). */
  versions: readonly number[];
  /** Per device: its last heartbeat, -1 for never. */
  seen: readonly number[];
  online: readonly boolean[];
  /** The shown records' JSON joined by commas (empty when it shows none): a view into the body. */
  bytes: Buffer;
}

export class ListAssembly {
  private byFirst: Map<string, Segment> | undefined;

  constructor(
    private readonly segments: readonly Segment[],
    /** What every record shows beside its row and presence (the routes text, the serializer). */
    readonly context: unknown,
    readonly body: Buffer,
  ) {}

  /** The segment that began at `id`, if any. */
  startingAt(id: string): Segment | undefined {
    if (!this.byFirst) {
      this.byFirst = new Map();
      for (const segment of this.segments) this.byFirst.set(segment.ids[0]!, segment);
    }
    return this.byFirst.get(id);
  }

  /** How many segments the body is held in (tests, the benchmark). */
  get size(): number {
    return this.segments.length;
  }
}

/** A body is `{"devices":[…]}`; the segments sit between, separated by commas. */
const OPEN = Buffer.from('{"devices":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');
const EMPTY = Buffer.alloc(0);

/** A run longer than this ends whatever its ids, so no segment grows past it. */
const MAX_RUN = 128;

/**
 * Whether a segment begins at this device: about one in 32 of random ids (ids end in random
 * base32). Read from the id's last three characters, so the test costs a few operations.
 */
function startsSegment(id: string): boolean {
  const n = id.length;
  const mixed = (id.charCodeAt(n - 1) * 961 + id.charCodeAt(n - 2) * 31 + id.charCodeAt(n - 3)) >>> 0;
  return mixed % 32 === 0;
}

/**
 * The body of `selected` (in its order) at `now`, reusing what `previous` rendered where nothing
 * moved; `context` names everything else a record shows, and `render` makes the records.
 */
export async function assemble(
  selected: readonly DeviceStamp[],
  now: number,
  previous: ListAssembly | undefined,
  context: unknown,
  render: RenderRecords,
): Promise<ListAssembly> {
  const reusable = previous && previous.context === context ? previous : undefined;
  // Read synchronously, before anything awaits: on SQLite the stamps are the index's objects,
  // which a later call's read may update while this build waits for rows.
  const runs: (Segment | Omit<Segment, 'bytes'>)[] = [];
  const toRender: DeviceStamp[] = [];
  const renderedRuns: { run: number; count: number }[] = [];
  for (let start = 0; start < selected.length; ) {
    const kept = reusable?.startingAt(selected[start]!.id);
    const end = kept ? start + kept.ids.length : 0;
    // The same devices showing the same, and still a whole run: the next device starts one.
    if (kept && end <= selected.length && runEndsAt(selected, start, end) && sameRun(kept, selected, start, now)) {
      runs.push(kept);
      start = end;
      continue;
    }
    let next = start + 1;
    while (!runEndsAt(selected, start, next)) next++;
    const ids: string[] = [];
    const versions: number[] = [];
    const seen: number[] = [];
    const online: boolean[] = [];
    for (let k = start; k < next; k++) {
      const stamp = selected[k]!;
      ids.push(stamp.id);
      versions.push(Number(stamp.record_version));
      seen.push(seenOf(stamp));
      online.push(isOnline(stamp, now));
      toRender.push({
        id: stamp.id,
        record_version: stamp.record_version,
        last_seen_at: stamp.last_seen_at,
        disconnected: stamp.disconnected,
      });
    }
    renderedRuns.push({ run: runs.length, count: next - start });
    runs.push({ ids, versions, seen, online });
    start = next;
  }

  const rendered = toRender.length > 0 ? await render(toRender) : [];
  let at = 0;
  for (const { run, count } of renderedRuns) {
    const marks = runs[run]! as Segment;
    const versions = marks.versions as number[];
    const parts: Buffer[] = [];
    for (let k = 0; k < count; k++) {
      const json = rendered[at + k];
      // A row gone is rendered again next time: the device may still be selected then.
      if (json === undefined) versions[k] = Number.NaN;
      if (!json) continue;
      if (parts.length > 0) parts.push(COMMA);
      parts.push(json);
    }
    at += count;
    runs[run] = { ...marks, bytes: parts.length === 0 ? EMPTY : Buffer.concat(parts) };
  }

  // One copy of every segment into the body; each segment is then a view of it, so the bodies
  // before it are not held by segments that did not change.
  const parts: Buffer[] = [OPEN];
  for (const run of runs as Segment[]) {
    if (run.bytes.length === 0) continue;
    if (parts.length > 1) parts.push(COMMA);
    parts.push(run.bytes);
  }
  parts.push(CLOSE);
  const body = Buffer.concat(parts);
  let offset = OPEN.length;
  const segments: Segment[] = [];
  for (const run of runs as Segment[]) {
    const length = run.bytes.length;
    if (length > 0 && offset > OPEN.length) offset += COMMA.length;
    segments.push({ ...run, bytes: length === 0 ? EMPTY : body.subarray(offset, offset + length) });
    offset += length;
  }
  return new ListAssembly(segments, context, body);
}

/** Whether a run that began at `start` ends before `at`: at the end, at the longest run, or where a segment starts. */
const runEndsAt = (selected: readonly DeviceStamp[], start: number, at: number) =>
  at >= selected.length || at - start >= MAX_RUN || startsSegment(selected[at]!.id);

const seenOf = (stamp: DeviceStamp) => (stamp.last_seen_at == null ? -1 : Number(stamp.last_seen_at));

/** Whether the devices from `from` on are the segment's, each showing what it showed then. */
function sameRun(segment: Segment, selected: readonly DeviceStamp[], from: number, now: number): boolean {
  const { ids, versions, seen, online } = segment;
  for (let k = 0; k < ids.length; k++) {
    const stamp = selected[from + k]!;
    if (
      ids[k] !== stamp.id ||
      versions[k] !== Number(stamp.record_version) ||
      seen[k] !== seenOf(stamp) ||
      online[k] !== isOnline(stamp, now)
    ) {
      return false;
    }
  }
  return true;
}
