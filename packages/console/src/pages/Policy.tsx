/**
 * The policy editor: HuJSON in CodeMirror, validated as you type (debounced POST
 * /v1/acl/validate, each problem underlined at its line and column and listed), a diff
 * against the stored text before saving, If-Match on save with a 412 shown as what changed,
 * and the history with restore.
 */

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { WarrenError } from '@warren/client';
import type { PolicyProblem, PolicyTestResultBody } from '@warren/contract';
import { useRef, useState } from 'react';
import { api, type Can } from '../api.ts';
import { Failure, Loading, PageHeader, Time } from '../ui.tsx';
import { Problems, TestResults } from './PolicyChecks.tsx';
import { Diff, Editor, type GoTo } from './PolicyEditor.tsx';

type Review = { kind: 'save' } | { kind: 'conflict'; stored: string; etag: string };

export function Policy({ can }: { can: Can }) {
  const queries = useQueryClient();
  const stored = useQuery({ queryKey: ['policy-text'], queryFn: () => api.acl.getText(), staleTime: Infinity });
  const [draft, setDraft] = useState<string | null>(null);
  const [problems, setProblems] = useState<PolicyProblem[]>([]);
  const [tests, setTests] = useState<PolicyTestResultBody[]>([]);
  const editorGoTo = useRef<GoTo | null>(null);
  const goTo: GoTo = (line, column) => editorGoTo.current?.(line, column);
  const [review, setReview] = useState<Review | null>(null);
  const [saved, setSaved] = useState(false);
  const editable = can.write('acls');

  const save = useMutation({
    mutationFn: ({ text, etag }: { text: string; etag: string }) => api.acl.set(text, { ifMatch: etag }),
    onSuccess: async () => {
      setReview(null);
      setDraft(null);
      setSaved(true);
      await queries.invalidateQueries({ queryKey: ['policy-text'] });
      await queries.invalidateQueries({ queryKey: ['policy-history'] });
      await queries.invalidateQueries({ queryKey: ['policy'] });
    },
    onError: async (error) => {
      if (error instanceof WarrenError && error.status === 412) {
        const current = await api.acl.getText();
        setReview({ kind: 'conflict', stored: current.text, etag: current.etag });
      } else if (error instanceof WarrenError && error.errors.length > 0) {
        setProblems(error.errors);
        setReview(null);
      }
    },
  });

  if (stored.isPending) return <Loading what="the policy" />;
  if (stored.isError) return <Failure error={stored.error} retry={() => stored.refetch()} />;
  const text = draft ?? stored.data.text;
  const changed = draft !== null && draft !== stored.data.text;

  return (
    <section>
      <PageHeader title="Policy">
        {editable && (
          <>
            <button type="button" disabled={!changed} onClick={() => setDraft(null)}>
              Discard changes
            </button>
            <button
              type="button"
              className="primary"
              disabled={!changed || problems.length > 0}
              onClick={() => {
                setSaved(false);
                setReview({ kind: 'save' });
              }}
            >
              Review and save
            </button>
          </>
        )}
      </PageHeader>
      {saved && !changed && (
        <p className="ok" role="status">
          Policy saved.
        </p>
      )}
      {review ? (
        <div className="review">
          {review.kind === 'conflict' ? (
            <p role="alert" className="error">
              Someone saved the policy since you opened it. Left: the policy as stored now; right: yours. Save yours
              over it, or go back and merge.
            </p>
          ) : (
            <p>Left: the stored policy; right: yours.</p>
          )}
          <Diff original={review.kind === 'conflict' ? review.stored : stored.data.text} changed={text} />
          <div className="actions">
            <button type="button" onClick={() => setReview(null)}>
              Back to editing
            </button>
            <button
              type="button"
              className="primary"
              disabled={save.isPending}
              onClick={() => save.mutate({ text, etag: review.kind === 'conflict' ? review.etag : stored.data.etag })}
            >
              {review.kind === 'conflict' ? 'Save mine over it' : 'Save policy'}
            </button>
          </div>
          {save.isError && !(save.error instanceof WarrenError && save.error.status === 412) && (
            <Failure error={save.error} />
          )}
        </div>
      ) : (
        <div className="policy-layout">
          <div>
            <Editor
              value={text}
              readOnly={!editable}
              onChange={setDraft}
              onProblems={setProblems}
              onTests={setTests}
              goTo={editorGoTo}
            />
          </div>
          <aside aria-label="Validation">
            {editable ? (
              <>
                <h2>Problems</h2>
                <Problems problems={problems} goTo={goTo} />
                <h2>Tests</h2>
                <TestResults tests={tests} problems={problems} goTo={goTo} />
              </>
            ) : (
              <p>
                You can read the policy. Checking it and running its <code>tests</code> is for those who may change it
                (owners, admins and network admins).
              </p>
            )}
            <History onRestore={(t) => setDraft(t)} editable={editable} />
          </aside>
        </div>
      )}
    </section>
  );
}

function History({ onRestore, editable }: { onRestore: (text: string) => void; editable: boolean }) {
  const history = useQuery({ queryKey: ['policy-history'], queryFn: () => api.acl.history() });
  const [loading, setLoading] = useState<number | null>(null);
  const restore = async (version: number) => {
    setLoading(version);
    try {
      onRestore((await api.acl.version(version)).text);
    } finally {
      setLoading(null);
    }
  };
  return (
    <>
      <h2>History</h2>
      {history.isPending ? (
        <Loading what="history" />
      ) : history.isError ? (
        <Failure error={history.error} />
      ) : (
        <ol className="history">
          {history.data.map((v) => (
            <li key={v.version}>
              v{v.version} · <Time iso={v.created} /> · {v.createdBy ?? 'unknown'}
              {editable && (
                <button type="button" disabled={loading === v.version} onClick={() => restore(v.version)}>
                  Restore v{v.version}
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
