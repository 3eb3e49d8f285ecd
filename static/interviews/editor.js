// Code editors record the candidate's typing for the interview's playback: every 5 s,
// if the text changed since the last snapshot the server took, it is posted. That is
// enough to replay how the code grew without recording every keystroke.
(function () {
  const INTERVAL_MS = 5000;
  // base.html puts the CSRF token in the body's hx-headers for htmx; reuse it.
  const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
  const csrfToken = headers["X-CSRFToken"] || "";

  document.querySelectorAll("textarea[data-snapshot-url]").forEach((editor) => {
    const url = editor.dataset.snapshotUrl;
    let lastSent = editor.value;
    let timer = null;

    async function send() {
      const source = editor.value;
      if (source === lastSent) return;
      const response = await fetch(url, {
        method: "POST",
        body: new URLSearchParams({ source }),
        headers: { "X-CSRFToken": csrfToken },
        credentials: "same-origin",
      });
      if (response.ok) {
        lastSent = source;
        editor.dataset.snapshots = String(Number(editor.dataset.snapshots || 0) + 1);
      } else if (response.status === 409) {  // the interview has ended
        clearInterval(timer);
        window.location.reload();
      }
    }

    timer = setInterval(send, INTERVAL_MS);
    // Leaving the page (or losing it) mid-edit: send what was typed since the last one.
    window.addEventListener("pagehide", () => {
      if (editor.value === lastSent) return;
      const body = new FormData();
      body.append("source", editor.value);
      body.append("csrfmiddlewaretoken", csrfToken);
      navigator.sendBeacon(url, body);
    });
  });
})();
