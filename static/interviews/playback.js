// Replays a code part's recorded editor states (snapshots, checks and submissions):
// play/pause, a speed, and a slider to jump to any frame. At 1x the frames follow the
// real pace, except that pauses longer than MAX_GAP_S are cut to MAX_GAP_S.
(function () {
  const MAX_GAP_S = 10;
  const clock = (seconds) => {
    const whole = Math.floor(seconds);
    return `+${String(Math.floor(whole / 60)).padStart(2, "0")}:${String(whole % 60).padStart(2, "0")}`;
  };

  document.querySelectorAll("[data-playback]").forEach((root) => {
    const frames = JSON.parse(document.getElementById(root.dataset.playback).textContent);
    const slider = root.querySelector("input[type=range]");
    const screen = root.querySelector("pre");
    const label = root.querySelector(".frame-label");
    const button = root.querySelector("button.play");
    const speed = root.querySelector("select.speed");
    let index = 0;
    let timer = null;

    function show(i) {
      index = i;
      slider.value = String(i);
      screen.textContent = frames[i].source;
      label.textContent = `frame ${i + 1} of ${frames.length} · ${clock(frames[i].offset)} · ${frames[i].kind.replace("_", " ")}`;
      root.dataset.frame = String(i);
    }
    function stop() {
      clearTimeout(timer);
      timer = null;
      button.textContent = "Play";
    }
    function scheduleNext() {
      if (index >= frames.length - 1) { stop(); return; }
      const gap = Math.min(MAX_GAP_S, Math.max(0, frames[index + 1].offset - frames[index].offset));
      timer = setTimeout(() => { show(index + 1); scheduleNext(); }, (gap * 1000) / Number(speed.value));
    }

    slider.max = String(frames.length - 1);
    button.addEventListener("click", () => {
      if (timer !== null) { stop(); return; }
      if (index >= frames.length - 1) show(0);
      button.textContent = "Pause";
      scheduleNext();
    });
    slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
    show(0);
  });
})();
