/** CodeMirror pieces of the policy page: the validating editor and the side-by-side diff. */
import { type Diagnostic, linter, lintGutter } from '@codemirror/lint';
import { MergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import type { PolicyProblem, PolicyTestResultBody } from '@warren/contract';
import { type RefObject, useEffect, useRef } from 'react';
import { api } from '../api.ts';
import { editorSetup, offsetOf } from '../hujson.ts';

/** Moves the editor's cursor to a 1-based line and column, scrolls there and focuses it. */
export type GoTo = (line: number, column: number) => void;

const VALIDATE_DELAY_MS = 400;

export function Editor(props: {
  value: string;
  readOnly: boolean;
  onChange: (text: string) => void;
  onProblems: (problems: PolicyProblem[]) => void;
  onTests: (tests: PolicyTestResultBody[]) => void;
  /** Set to the editor's GoTo once it exists (the problem and test lists jump to lines). */
  goTo?: RefObject<GoTo | null>;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // The latest callbacks, read by the long-lived editor's extensions.
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    const validate = linter(
      async (v): Promise<Diagnostic[]> => {
        const text = v.state.doc.toString();
        const result = await api.acl.validate(text);
        latest.current.onProblems(result.errors);
        latest.current.onTests(result.tests ?? []);
        return result.errors.map((p) => {
          const from = offsetOf(v.state.doc, p.line, p.column);
          const to = Math.max(from + 1, v.state.doc.lineAt(from).to);
          return { from, to: Math.min(to, v.state.doc.length), severity: 'error', message: p.msg };
        });
      },
      { delay: VALIDATE_DELAY_MS },
    );
    view.current = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: latest.current.value,
        extensions: [
          editorSetup,
          // Validation is a call of the acls scope: a read-only role reads the policy as stored.
          ...(latest.current.readOnly ? [] : [lintGutter(), validate]),
          EditorState.readOnly.of(latest.current.readOnly),
          EditorView.editable.of(!latest.current.readOnly),
          EditorView.contentAttributes.of({ 'aria-label': 'Policy (HuJSON)' }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latest.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    if (latest.current.goTo) {
      latest.current.goTo.current = (line, column) => {
        const v = view.current;
        if (!v) return;
        const at = offsetOf(v.state.doc, line, column);
        v.dispatch({ selection: { anchor: at }, scrollIntoView: true });
        v.focus();
      };
    }
    return () => view.current?.destroy();
  }, []);

  // A value set from outside (restore, discard) replaces the document.
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== props.value) {
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: props.value } });
    }
  }, [props.value]);

  return <div className="editor" ref={host} />;
}

export function Diff({ original, changed }: { original: string; changed: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const readOnly = [editorSetup, EditorState.readOnly.of(true), EditorView.editable.of(false)];
    const merge = new MergeView({
      parent: host.current!,
      a: {
        doc: original,
        extensions: [...readOnly, EditorView.contentAttributes.of({ 'aria-label': 'Stored policy' })],
      },
      b: { doc: changed, extensions: [...readOnly, EditorView.contentAttributes.of({ 'aria-label': 'Your policy' })] },
    });
    return () => merge.destroy();
  }, [original, changed]);
  return <div className="diff" ref={host} />;
}
