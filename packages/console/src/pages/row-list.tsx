/**
 * A list edited as rows that can be added and removed (split DNS routes, extra DNS records).
 * Every control of a row is named with the row's place ("Domain of split DNS route 2"), so a
 * screen reader, and a test, tells the rows apart while each shows only "Domain".
 */
import { type ReactNode, useEffect, useRef, useState } from 'react';

type Keyed<T> = T & { key: number };

/** The rows and what changes them; each row keeps a key of its own, as rows go in any order. */
export function useRows<T extends object>(initial: () => T[]) {
  const counter = useRef(0);
  const keyed = (row: T): Keyed<T> => ({ ...row, key: ++counter.current });
  const [rows, setRows] = useState(() => initial().map(keyed));
  return {
    rows,
    add: (row: T) => setRows((all) => [...all, keyed(row)]),
    remove: (key: number) => setRows((all) => all.filter((r) => r.key !== key)),
    change: (key: number, change: Partial<T>) =>
      setRows((all) => all.map((r) => (r.key === key ? { ...r, ...change } : r))),
  };
}

export function RowList<T extends object>(props: {
  legend: string;
  /** What one row is, for the names of its controls: "split DNS route". */
  what: string;
  addLabel: string;
  list: ReturnType<typeof useRows<T>>;
  blank: T;
  /** Told of each row added or removed: they change no input, yet they are edits. */
  edited: () => void;
  children: (row: Keyed<T>, label: (field: string) => ReactNode) => ReactNode;
  intro?: ReactNode;
}) {
  const { list } = props;
  // The keyboard's focus follows the change: into a row just added, or, the row and its Remove
  // button gone, onto the Add button rather than lost to the page.
  const lastRow = useRef<HTMLDivElement>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const moveFocus = useRef<'added' | 'removed' | null>(null);
  useEffect(() => {
    if (moveFocus.current === 'added') lastRow.current?.querySelector<HTMLElement>('input, select')?.focus();
    if (moveFocus.current === 'removed') addButton.current?.focus();
    moveFocus.current = null;
  });
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {props.intro}
      {list.rows.map((row, i) => (
        <div className="inline wide" key={row.key} ref={i === list.rows.length - 1 ? lastRow : undefined}>
          {props.children(row, (field) => (
            <span>
              {field}
              <span className="sr-only">
                {' '}
                of {props.what} {i + 1}
              </span>
            </span>
          ))}
          <button
            type="button"
            onClick={() => {
              props.edited();
              moveFocus.current = 'removed';
              list.remove(row.key);
            }}
          >
            Remove
            <span className="sr-only">
              {' '}
              {props.what} {i + 1}
            </span>
          </button>
        </div>
      ))}
      <button
        type="button"
        ref={addButton}
        onClick={() => {
          props.edited();
          moveFocus.current = 'added';
          list.add(props.blank);
        }}
      >
        {props.addLabel}
      </button>
    </fieldset>
  );
}
