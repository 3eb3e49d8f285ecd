// The interview clock counts down to the server's deadline, and the room stops taking
// answers when the interview ends. The server enforces the deadline on every write; the
// page learns of the end from the status partial (#room-status), which htmx polls every
// 2 s and which comes back with data-ended once the interview has closed, whether its
// time ran out or the panel ended it. Then the clock stops and the forms and editors go
// inert, without a reload, so the candidate reads why.
//
// Events on document.body, for editor.js and the status poll: "time-nearly-up" shortly
// before zero (send the last snapshot while the server still takes it), "time-up" at
// zero (ask the server now rather than at the next poll), "interview-ended" when the
// server has said so.
(function () {
  const FLUSH_BEFORE_MS = 1500;
  const clock = document.querySelector("[data-deadline]");
  const display = clock && clock.querySelector(".clock-time");
  const signal = (name) => document.body.dispatchEvent(new CustomEvent(name));
  let timer = null;
  let nearlyUp = false;
  let ended = false;

  function stopAnswers() {
    document.querySelectorAll("article form").forEach((form) => {
      form.querySelectorAll("button, input, select, textarea").forEach((field) => { field.disabled = true; });
    });
    // CodeMirror's editors are contenteditable, which `disabled` does not reach.
    document.querySelectorAll("article").forEach((article) => { article.inert = true; });
  }

  function end() {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    if (display) {
      display.textContent = "Ended";
      display.classList.remove("low");
    }
    stopAnswers();
    signal("interview-ended");
  }

  document.body.addEventListener("htmx:load", () => {
    if (document.querySelector("#room-status[data-ended]")) end();
  });

  if (!clock) return;
  const deadline = Date.parse(clock.dataset.deadline);
  // The page's time comes from the server: correct for this machine's clock being off.
  const skew = Date.parse(clock.dataset.serverNow) - Date.now();
  const pad = (n) => String(n).padStart(2, "0");

  function tick() {
    const left = Math.max(0, deadline - (Date.now() + skew));
    const seconds = Math.ceil(left / 1000);
    display.textContent = `${pad(Math.floor(seconds / 60))}:${pad(seconds % 60)}`;
    display.classList.toggle("low", seconds < 60);
    if (left <= FLUSH_BEFORE_MS && !nearlyUp) {
      nearlyUp = true;
      signal("time-nearly-up");
    }
    if (left <= 0) {
      clearInterval(timer);
      document.querySelectorAll("article form button").forEach((button) => { button.disabled = true; });
      signal("time-up");
    }
  }
  timer = setInterval(tick, 250);
  tick();
})();
