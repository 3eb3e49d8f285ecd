// The practice page's small behaviours, for content the server rendered (no inline
// handlers: the Content-Security-Policy forbids them).
//
// - "Restore into the editor" puts an earlier answer's code back in its part's editor
//   (the CodeMirror view when mounted, else the plain textarea), which also saves it as
//   the part's draft through the textarea's input event.
// - "Practise another variant" asks first when code was typed (a draft exists, or an
//   editor's text differs from what the page opened with): the new variant discards it.

function setCode(textarea, code) {
  const view = textarea.editorView;
  if (view) {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
    view.focus();
  } else {
    textarea.value = code;
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
  }
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-restore]");
  if (!button) return;
  const template = document.getElementById(button.dataset.restore);
  const textarea = document.querySelector(`#${button.dataset.into} textarea[name=answer]`);
  if (template && textarea) setCode(textarea, template.content.textContent);
});

document.addEventListener("submit", (event) => {
  const form = event.target;
  const message = form.dataset && form.dataset.confirmIfDrafts;
  if (!message) return;
  const edited = [...document.querySelectorAll("textarea[name=answer]")].some(
    (textarea) => textarea.value !== textarea.defaultValue,
  );
  if ((edited || "hasDrafts" in form.dataset) && !window.confirm(message)) event.preventDefault();
});
