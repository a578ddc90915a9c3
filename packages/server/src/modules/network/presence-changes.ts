/**
 * The presence change log (migration 014): per network and presence epoch, which devices the
 * move to that epoch was about. Written by the calls that take a device online or offline (a
 * heartbeat after silence, a disconnect, an enrollment) with the epoch's move, in the same
 * transaction (core/changes.ts); read by presence-snapshot.ts to follow those devices instead
 * of reading the whole network's presence again. A move that does not log (a user suspended, which takes
 * all of their devices offline) makes the next snapshot a whole read.
 */
import { epochLog } from './epoch-log.js';

/** The log itself, written through presenceEpoch (epochs.ts). */
export const presenceLog = epochLog('presence_changes');

/** The devices whose presence moved after epoch `from` up to `to`, or undefined when not covered. */
export const presenceChangedSince = presenceLog.changedSince;

/** Drops entries long behind `epoch`, on one move in a few dozen (epoch-log.ts). */
export const prunePresenceChanges = presenceLog.prune;
