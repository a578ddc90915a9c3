/**
 * A section of the network's settings (devices, DNS, relays): one form whose save is one
 * `PATCH /v1/network` carrying the fields the person changed in that section, and nothing
 * else (settings-changes.ts), so a save never writes back values as they were when the page
 * loaded, someone else's change to another field of the same section included. After a save
 * the form is filled afresh from the server's answer: it shows what is stored, and the next
 * save compares against that.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { NetworkBody, PatchNetworkRequest } from '@warren/contract';
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { api } from '../api.ts';
import { Failure } from '../ui.tsx';
import { changedFields } from './settings-changes.ts';

/**
 * A section's save, and the network its form is filled from: the page's until a save, then the
 * server's answer, with a new `key` the section gives its form so that it is filled afresh.
 * Kept above the form, so the outcome of a save outlives the form it refills.
 */
export function useSectionSave(network: NetworkBody) {
  const queries = useQueryClient();
  const [filled, setFilled] = useState({ network, key: 0 });
  const mutation = useMutation({
    // Built inside the call, so an unreadable value fails and shows as a refused one does.
    // Nothing changed: nothing is written, and the form is refilled with what is stored now.
    mutationFn: async (changes: () => PatchNetworkRequest | undefined) => {
      const body = changes();
      return body
        ? { network: await api.network.update(body), sent: true }
        : { network: await api.network.get(), sent: false };
    },
    onSuccess: ({ network: answer }) => {
      queries.setQueryData(['network'], answer);
      setFilled((last) => ({ network: answer, key: last.key + 1 }));
    },
  });
  return { ...filled, mutation };
}

export type SectionSave = ReturnType<typeof useSectionSave>;

export function SettingsForm(props: {
  labelledBy: string;
  saveLabel: string;
  save: SectionSave;
  /** The section's fields as the form was filled with them (from `save.network`). */
  loaded: PatchNetworkRequest;
  /** The section's fields from the form; throws (nothing is sent) on a value the console itself cannot read. */
  request: (form: FormData) => PatchNetworkRequest;
  /** The fields; as a function, told of edits that change no input (a row added or removed). */
  children: ReactNode | ((edited: () => void) => ReactNode);
}) {
  const { mutation, key } = props.save;
  const submitButton = useRef<HTMLButtonElement>(null);
  // Filled afresh after a save (a new key, so a new form): the focus stays on the save button
  // rather than falling back to the page.
  useEffect(() => {
    if (key > 0) submitButton.current?.focus();
  }, [key]);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    mutation.mutate(() => changedFields(props.loaded, props.request(form)));
  };
  return (
    // Any edit clears the last outcome: "Saved" must not stand beside values that are not.
    <form className="card" onSubmit={submit} onChange={() => mutation.reset()} aria-labelledby={props.labelledBy}>
      {typeof props.children === 'function' ? props.children(() => mutation.reset()) : props.children}
      <div className="actions wide">
        <button type="submit" className="primary" disabled={mutation.isPending} ref={submitButton}>
          {props.saveLabel}
        </button>
        {mutation.isSuccess && (
          <span className="ok" role="status">
            {mutation.data.sent ? 'Saved' : 'Nothing changed'}
          </span>
        )}
      </div>
      {mutation.isError && <Failure error={mutation.error} />}
    </form>
  );
}

/** A control with a line of help under it, tied to the control by aria-describedby. */
export function Field({ hint, children }: { hint: ReactNode; children: (hintId: string) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      {children(id)}
      <span className="subtle" id={id}>
        {hint}
      </span>
    </div>
  );
}

/** A list typed into one input: items separated by spaces or commas. */
export function words(value: FormDataEntryValue | string | null): string[] {
  return String(value ?? '')
    .split(/[\s,]+/)
    .filter(Boolean);
}

export const onOff = (on: boolean) => (on ? 'on' : 'off');
