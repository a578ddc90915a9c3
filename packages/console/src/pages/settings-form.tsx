/**
 * A section of the network's settings (devices, DNS, relays): one form whose save is one
 * `PATCH /v1/network` carrying that section's fields only, so saving one section never writes
 * back another's values as they were when the page loaded.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PatchNetworkRequest } from '@warren/contract';
import { type FormEvent, type ReactNode, useId } from 'react';
import { api } from '../api.ts';
import { Failure } from '../ui.tsx';

export function SettingsForm(props: {
  labelledBy: string;
  saveLabel: string;
  /** The section's fields from the form; throws (nothing is sent) on a value the console itself cannot read. */
  request: (form: FormData) => PatchNetworkRequest;
  /** The fields; as a function, told of edits that change no input (a row added or removed). */
  children: ReactNode | ((edited: () => void) => ReactNode);
}) {
  const queries = useQueryClient();
  const save = useMutation({
    // Built inside the call, so an unreadable value fails and shows as a refused one does.
    mutationFn: async (form: FormData) => api.network.update(props.request(form)),
    onSuccess: (network) => queries.setQueryData(['network'], network),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate(new FormData(event.currentTarget));
  };
  return (
    // Any edit clears the last outcome: "Saved" must not stand beside values that are not.
    <form className="card" onSubmit={submit} onChange={() => save.reset()} aria-labelledby={props.labelledBy}>
      {typeof props.children === 'function' ? props.children(() => save.reset()) : props.children}
      <div className="actions wide">
        <button type="submit" className="primary" disabled={save.isPending}>
          {props.saveLabel}
        </button>
        {save.isSuccess && (
          <span className="ok" role="status">
            Saved
          </span>
        )}
      </div>
      {save.isError && <Failure error={save.error} />}
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
