// Code editors record the candidate's typing for the interview: every 2 s, if the text
// changed since the last snapshot the server took, it is posted. The panel's live page
// shows the newest one within a poll or two, the transcript replays them, and when the
// interview closes the newest one is submitted if it was never submitted. The textarea
// is the one CodeMirror keeps in step with its editor (kinds/program_answer.html).
(function () {
  const INTERVAL_MS = 2000;
  // base.html puts the CSRF token in the body's hx-headers for htmx; reuse it.
  const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
  const csrfToken = headers["X-CSRFToken"] || "";
  let ended = false;

  document.querySelectorAll("textarea[data-snapshot-url]").forEach((editor) => {
    const url = editor.dataset.snapshotUrl;
    let lastSent = editor.value;
    let sending = false;

    async function send() {
      const source = editor.value;
      if (ended || sending || source === lastSent) return;
      sending = true;
      try {
        const response = await fetch(url, {
          method: "POST",
          body: new URLSearchParams({ source }),
          headers: { "X-CSRFToken": csrfToken },
          credentials: "same-origin",
        });
        if (response.ok) {
          lastSent = source;
          editor.dataset.snapshots = String(Number(editor.dataset.snapshots || 0) + 1);
        } else if (response.status === 409) {
          // The interview has ended: the status poll says so and stops the room.
          ended = true;
          document.body.dispatchEvent(new CustomEvent("time-up"));
        }
      } finally {
        sending = false;
      }
    }

    const timer = setInterval(send, INTERVAL_MS);
    document.body.addEventListener("time-nearly-up", send);
    document.body.addEventListener("interview-ended", () => { ended = true; clearInterval(timer); });
    // Leaving the page (or losing it) mid-edit: send what was typed since the last one.
    window.addEventListener("pagehide", () => {
      if (ended || editor.value === lastSent) return;
      const body = new FormData();
      body.append("source", editor.value);
      body.append("csrfmiddlewaretoken", csrfToken);
      navigator.sendBeacon(url, body);
    });
  });
})();
