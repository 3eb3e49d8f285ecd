// Replays a code part's recorded editor states (snapshots, runs and submissions):
// play/pause, a speed, and a slider to jump to any frame. At 1x the frames follow the
// real pace, except that pauses longer than MAX_GAP_S are cut to MAX_GAP_S.
// Beside the code it shows the latest run and submission as they stood at that frame
// (rendered by the server, one hidden block each; a frame's "run" and "submission"
// name which, and "*_pending" whether its result had come back yet). The timeline's
// "frame N of the playback" links jump the playback to that frame.
(function () {
  const MAX_GAP_S = 10;
  const clock = (seconds) => {
    const whole = Math.floor(seconds);
    return `+${String(Math.floor(whole / 60)).padStart(2, "0")}:${String(whole % 60).padStart(2, "0")}`;
  };
  const players = {};

  document.querySelectorAll("[data-playback]").forEach((root) => {
    const frames = JSON.parse(document.getElementById(root.dataset.playback).textContent);
    const slider = root.querySelector("input[type=range]");
    const screen = root.querySelector("pre.playback-screen");
    const label = root.querySelector(".frame-label");
    const button = root.querySelector("button.play");
    const speed = root.querySelector("select.speed");
    const results = Array.from(root.querySelectorAll(".playback-result"));
    let index = 0;
    let timer = null;

    function showResults(frame) {
      results.forEach((block) => {
        const which = Number(block.dataset.result);
        const isRun = block.dataset.kind === "code_run";
        const current = isRun ? frame.run : frame.submission;
        block.hidden = current !== which;
        block.querySelector(".pending").hidden = !(isRun ? frame.run_pending : frame.submission_pending);
        block.querySelector(".result-body").hidden = !block.querySelector(".pending").hidden;
      });
    }
    function show(i) {
      index = i;
      slider.value = String(i);
      screen.textContent = frames[i].source;
      label.textContent = `frame ${i + 1} of ${frames.length} · ${clock(frames[i].offset)} · ${frames[i].kind.replace("_", " ")}`;
      root.dataset.frame = String(i);
      showResults(frames[i]);
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
    players[root.id] = (i) => { stop(); show(i); };
    show(0);
  });

  document.querySelectorAll("a.frame-link[data-playback-target]").forEach((link) => {
    link.addEventListener("click", () => {
      const jump = players[link.dataset.playbackTarget];
      if (jump) jump(Number(link.dataset.frame));  // the href still scrolls to the playback
    });
  });
})();
