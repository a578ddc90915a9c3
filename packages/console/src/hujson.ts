/**
 * HuJSON (JSON with comments and trailing commas) for CodeMirror: a stream tokenizer (the
 * JSON grammar has no comments), a highlight style in the theme's colours, and the
 * position of a validation problem's line and column.
 */
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  StreamLanguage,
  syntaxHighlighting,
} from '@codemirror/language';
import type { Extension, Text } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { styleNonce } from './csp.ts';

interface State {
  inComment: boolean;
}

export const hujson = StreamLanguage.define<State>({
  name: 'hujson',
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo('*/')) {
        stream.match('*/');
        state.inComment = false;
      } else stream.skipToEnd();
      return 'comment';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('/*')) {
      state.inComment = true;
      return 'comment';
    }
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) {
      // A string followed by a colon is a key.
      return /^\s*:/.test(stream.string.slice(stream.pos)) ? 'propertyName' : 'string';
    }
    if (stream.match(/^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/)) return 'number';
    if (stream.match(/^(?:true|false|null)\b/)) return 'atom';
    stream.next();
    return 'punctuation';
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
});

export const hujsonHighlight = syntaxHighlighting(
  HighlightStyle.define([
    { tag: tags.comment, color: 'var(--tok-comment)', fontStyle: 'italic' },
    { tag: tags.propertyName, color: 'var(--tok-key)' },
    { tag: tags.string, color: 'var(--tok-string)' },
    { tag: tags.number, color: 'var(--tok-number)' },
    { tag: tags.atom, color: 'var(--tok-atom)' },
  ]),
);

/** A 1-based line and column as a document offset, clamped into the document. */
export function offsetOf(doc: Text, line: number, column: number): number {
  const l = doc.line(Math.min(Math.max(1, line), doc.lines));
  return Math.min(l.from + Math.max(0, column - 1), l.to);
}

/**
 * The editor's base: line numbers, history, brackets, the default keys (Tab leaves the editor),
 * and the page's style nonce, without which the strict style-src refuses CodeMirror's styles.
 */
export const editorSetup: Extension = [
  EditorView.cspNonce.of(styleNonce),
  lineNumbers(),
  highlightActiveLineGutter(),
  history(),
  drawSelection(),
  indentOnInput(),
  bracketMatching(),
  highlightActiveLine(),
  // Wrapped lines: no sideways scrolling on a phone, and no scroll region without a focus.
  EditorView.lineWrapping,
  keymap.of([...defaultKeymap, ...historyKeymap]),
  hujson,
  hujsonHighlight,
];
