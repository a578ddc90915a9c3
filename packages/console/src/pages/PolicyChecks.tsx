/**
 * The policy page's side panel lists: the draft's problems and the results of its own `tests`
 * (from POST /v1/acl/validate), each a button that puts the editor's cursor on its line.
 */
import type { PolicyProblem, PolicyTestResultBody } from '@warren/contract';

type GoTo = (line: number, column: number) => void;

const key = (p: PolicyProblem) => `${p.line}:${p.column}:${p.msg}`;

function ProblemItem({ problem: p, goTo }: { problem: PolicyProblem; goTo: GoTo }) {
  return (
    <li>
      <button type="button" className="jump" onClick={() => goTo(p.line, p.column)}>
        Line {p.line}, column {p.column}: {p.msg}
      </button>
    </li>
  );
}

export function Problems({ problems, goTo }: { problems: PolicyProblem[]; goTo: GoTo }) {
  if (problems.length === 0) return <p className="ok">No problems.</p>;
  return (
    <ul className="problems">
      {problems.map((p) => (
        <ProblemItem key={key(p)} problem={p} goTo={goTo} />
      ))}
    </ul>
  );
}

export function TestResults({
  tests,
  problems,
  goTo,
}: {
  tests: PolicyTestResultBody[];
  problems: PolicyProblem[];
  goTo: GoTo;
}) {
  if (tests.length === 0) {
    return problems.length === 0 ? (
      <p>This policy has no tests. Add a "tests" list to check who may reach what.</p>
    ) : (
      <p>No test results: the policy has no tests, or its tests run once it parses.</p>
    );
  }
  const passed = tests.filter((t) => t.passed).length;
  return (
    <>
      <p role="status" className={passed === tests.length ? 'ok' : 'error'}>
        {passed === tests.length
          ? `All ${tests.length} test${tests.length === 1 ? '' : 's'} pass.`
          : `${tests.length - passed} of ${tests.length} test${tests.length === 1 ? '' : 's'} fail.`}
      </p>
      <ul className="tests" aria-label="Policy tests">
        {tests.map((t) => (
          <li key={t.line} className={t.passed ? 'passed' : 'failed'}>
            <button type="button" className="jump" onClick={() => goTo(t.line, 1)}>
              <span className={t.passed ? 'pill on' : 'pill bad'}>{t.passed ? 'passed' : 'failed'}</span> Line {t.line}:{' '}
              {t.src || '(no src)'}
            </button>
            {t.failures.length > 0 && (
              <ul className="failures">
                {t.failures.map((f) => (
                  <ProblemItem key={key(f)} problem={f} goTo={goTo} />
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}
