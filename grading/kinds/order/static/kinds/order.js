// Order parts (grading/kinds/order, kinds/order/answer.html): each step's ↑ and ↓
// buttons move it in its list and rewrite the form's one "answer" field, the ids from
// first to last, which is what the form posts. Without this script the buttons stay
// hidden and the candidate types the ids into that field instead.
//
// Keyboard: the buttons are real <button>s, so Tab reaches them and Enter or Space
// presses them; focus stays on the pressed button, so pressing again keeps moving the
// same step, and a polite live region says where it went. The script is included once
// per order part, so it guards against binding its handlers twice.
(function () {
  if (window.orderAnswerReady) return;
  window.orderAnswerReady = true;

  function showScripted(root) {
    root.querySelectorAll("form[data-order-answer]").forEach((form) => {
      form.querySelectorAll("[data-order-with-script]").forEach((element) => { element.hidden = false; });
      form.querySelectorAll("[data-order-without-script]").forEach((element) => { element.hidden = true; });
    });
  }

  function writeAnswer(form) {
    const ids = [...form.querySelectorAll("li[data-order-id]")].map((item) => item.dataset.orderId);
    const field = form.querySelector("input[name=answer]");
    field.value = ids.join(", ");
    // The live preview listens for this event (hx-trigger on the field).
    field.dispatchEvent(new CustomEvent("order-moved", { bubbles: true }));
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-order-move]");
    if (!button) return;
    const form = button.closest("form[data-order-answer]");
    const item = button.closest("li[data-order-id]");
    if (!form || !item) return;
    const list = item.parentElement;
    const up = button.dataset.orderMove === "up";
    const neighbour = up ? item.previousElementSibling : item.nextElementSibling;
    const items = [...list.children];
    const text = item.querySelector(".order-text").textContent;
    const announce = form.querySelector("[data-order-announce]");
    if (!neighbour) {
      announce.textContent = `“${text}” is already ${up ? "first" : "last"}.`;
      return;
    }
    if (up) list.insertBefore(item, neighbour);
    else list.insertBefore(neighbour, item);
    button.focus();  // moving the node can drop focus in some browsers
    const position = [...list.children].indexOf(item) + 1;
    announce.textContent = `“${text}” moved to position ${position} of ${items.length}.`;
    writeAnswer(form);
  });

  showScripted(document);
  // Content htmx swaps in later (a new variant, a question loaded in the room).
  document.addEventListener("htmx:load", (event) => showScripted(event.target));
})();
