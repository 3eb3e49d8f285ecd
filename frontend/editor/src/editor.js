// Code answers get a CodeMirror editor: every <textarea class="code"> on the page (and
// in content htmx swaps in later) is hidden and an editor is mounted right after it.
// The textarea stays in its form and receives the editor's text on every change, so the
// form posts exactly what it posted before; without JavaScript the textarea is the editor.
//
// Keys: Tab indents (spaces to the next multiple of 4, or whole lines when text is
// selected), Shift-Tab dedents, Ctrl/Cmd-Enter submits the form, and Escape then Tab
// leaves the editor for keyboard users (CodeMirror's own escape hatch).
//
// The mounted EditorView is textarea.editorView, for tests and for other scripts.

import { basicSetup } from "codemirror";
import { indentLess, indentMore } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { indentUnit } from "@codemirror/language";
import { EditorSelection, EditorState, Prec, countColumn } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";

const SELECTOR = "textarea.code";
const INDENT_WIDTH = 4;
const LINE_HEIGHT = 1.45; // em; also sizes the editor from the textarea's rows
const MONOSPACE = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace';
// CodeMirror writes its styles into a <style> element, which the site's
// Content-Security-Policy admits only with the page's nonce: the page gives this
// script's tag that nonce, and the editor puts it on the <style>. Read it now, while
// this script is the current one.
const CSP_NONCE = document.currentScript?.nonce || "";

// Tab with nothing selected types spaces up to the next indent stop, as in a code
// editor; with a selection it indents the selected lines.
function indentOrInsertSpaces(view) {
  const { state } = view;
  if (state.selection.ranges.some((range) => !range.empty)) return indentMore(view);
  view.dispatch(
    state.changeByRange((range) => {
      const line = state.doc.lineAt(range.head);
      const column = countColumn(line.text, state.tabSize, range.head - line.from);
      const spaces = " ".repeat(INDENT_WIDTH - (column % INDENT_WIDTH));
      return {
        changes: { from: range.head, insert: spaces },
        range: EditorSelection.cursor(range.head + spaces.length),
      };
    }),
    { scrollIntoView: true, userEvent: "input" },
  );
  return true;
}

function submitter(textarea) {
  return (view) => {
    if (!textarea.form) return false;
    textarea.value = view.state.doc.toString();
    textarea.form.requestSubmit(); // fires "submit", so htmx's hx-post still handles it
    return true;
  };
}

// Keeps the hidden textarea equal to the editor's text; the "input" event lets listeners
// written for the plain textarea keep working.
function textareaSync(textarea) {
  return EditorView.updateListener.of((update) => {
    if (!update.docChanged) return;
    textarea.value = update.state.doc.toString();
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

function theme(rows) {
  return EditorView.theme({
    "&": {
      fontSize: "0.9rem",
      backgroundColor: "#fff",
      border: "1px solid var(--line, #d8dde3)",
      borderRadius: "6px",
    },
    "&.cm-focused": { outline: "2px solid var(--accent, #2457c5)", outlineOffset: "-1px" },
    ".cm-scroller": {
      fontFamily: MONOSPACE,
      lineHeight: String(LINE_HEIGHT),
      minHeight: `${rows * LINE_HEIGHT}em`,
      maxHeight: "70vh",
      overflow: "auto",
    },
    ".cm-gutters": { borderRadius: "6px 0 0 6px" },
  });
}

function label(textarea) {
  const labelled = textarea.getAttribute("aria-label") || textarea.labels?.[0]?.textContent?.trim();
  return labelled || "Code";
}

/** Mounts an editor for one textarea (once) and returns its EditorView. */
export function mount(textarea) {
  if (textarea.editorView) return textarea.editorView;
  const editable = !textarea.disabled && !textarea.readOnly;
  const view = new EditorView({
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        Prec.highest(
          keymap.of([
            { key: "Mod-Enter", run: submitter(textarea) },
            { key: "Tab", run: indentOrInsertSpaces, shift: indentLess },
          ]),
        ),
        basicSetup,
        python(),
        indentUnit.of(" ".repeat(INDENT_WIDTH)),
        EditorState.tabSize.of(INDENT_WIDTH),
        EditorState.readOnly.of(!editable),
        EditorView.editable.of(editable),
        EditorView.contentAttributes.of({ "aria-label": label(textarea) }),
        theme(Number(textarea.getAttribute("rows")) || 12),
        ...(CSP_NONCE ? [EditorView.cspNonce.of(CSP_NONCE)] : []),
        textareaSync(textarea),
      ],
    }),
  });
  textarea.after(view.dom);
  textarea.style.display = "none"; // not [hidden]: author CSS can override that attribute
  textarea.editorView = view;
  return view;
}

/** Mounts editors for the code textareas in root (an element or the document). */
export function enhance(root) {
  if (root instanceof Element && root.matches(SELECTOR)) mount(root);
  if (root instanceof Element || root instanceof Document) root.querySelectorAll(SELECTOR).forEach(mount);
}

// htmx fires htmx:load for every element it swaps in.
document.addEventListener("htmx:load", (event) => enhance(event.target));
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", () => enhance(document));
} else {
  enhance(document);
}
