// A form marked data-reset-after-success is cleared once htmx has posted it successfully
// (the private note, so the next note starts empty). This lives here rather than in an
// hx-on attribute because the Content-Security-Policy forbids evaluating attribute code.
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.matches("[data-reset-after-success]") && event.detail.successful) {
    form.reset();
  }
});

// A form marked data-confirm asks before it is sent ("End the interview now" cannot be
// undone); a plain form posts without htmx, so hx-confirm would not reach it.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});
