/**
 * Tells the follow-up request waiting on a machine login that the login ended (approved or
 * refused), and the request waiting on an SSH check that it was confirmed, in whichever
 * instance holds that request. The end signals on the database's change
 * channel (storage/change-signal.ts) in the statement's own transaction, so it is delivered when
 * it commits: to every instance through LISTEN/NOTIFY on PostgreSQL, to this process by the
 * committing connection on SQLite. When signals may have been missed (the listening connection
 * was lost; on SQLite, another process committed) the channel asks its listeners to look again,
 * so a waiter never needs to read its login over and over.
 */
import { type ChangeChannel, signalChange } from '../../../storage/change-signal.js';
import type { Db } from '../../../storage/database.js';

/** The channel names networks by their ids; a login goes by a subject no network id can be. */
const subjectOf = (tokenHash: string) => `login:${tokenHash}`;

/** Inside the statement's transaction (or right after it) that ended the login of this token hash. */
export async function signalLoginEnded(db: Db, tokenHash: string): Promise<void> {
  await signalChange(db, subjectOf(tokenHash));
}

/** Calls `wake` when the login of this token hash may have ended; returns how to stop listening. */
export function onLoginEnded(changes: ChangeChannel, tokenHash: string, wake: () => void): () => void {
  return onSignal(changes, subjectOf(tokenHash), wake);
}

/** The same for an SSH check (ssh-check.service.ts), confirmed on whichever instance. */
const sshCheckSubject = (tokenHash: string) => `ssh-check:${tokenHash}`;

export async function signalSshCheckEnded(db: Db, tokenHash: string): Promise<void> {
  await signalChange(db, sshCheckSubject(tokenHash));
}

export function onSshCheckEnded(changes: ChangeChannel, tokenHash: string, wake: () => void): () => void {
  return onSignal(changes, sshCheckSubject(tokenHash), wake);
}

function onSignal(changes: ChangeChannel, subject: string, wake: () => void): () => void {
  return changes.subscribe({
    changed: (changed) => {
      if (changed === subject) wake();
    },
    resync: wake,
  });
}
