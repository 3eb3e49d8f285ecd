// The interview clock counts down to the server's deadline. The server enforces the
// deadline on every write; at zero this only disables the forms and reloads the page,
// which the server answers with the closed interview.
(function () {
  const clock = document.querySelector("[data-deadline]");
  if (!clock) return;
  const deadline = Date.parse(clock.dataset.deadline);
  // The page's time comes from the server: correct for this machine's clock being off.
  const skew = Date.parse(clock.dataset.serverNow) - Date.now();
  const display = clock.querySelector(".clock-time");
  const pad = (n) => String(n).padStart(2, "0");
  let timer = null;

  function tick() {
    const left = Math.max(0, deadline - (Date.now() + skew));
    const seconds = Math.ceil(left / 1000);
    display.textContent = `${pad(Math.floor(seconds / 60))}:${pad(seconds % 60)}`;
    display.classList.toggle("low", seconds < 60);
    if (left <= 0) {
      clearInterval(timer);
      document.querySelectorAll("article form button").forEach((button) => { button.disabled = true; });
      setTimeout(() => window.location.reload(), 500);
    }
  }
  timer = setInterval(tick, 250);
  tick();
})();
