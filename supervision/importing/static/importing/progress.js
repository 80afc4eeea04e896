// Polls the import job and moves the progress bar; reloads the page once the job has finished.
(function () {
  "use strict";
  var box = document.getElementById("import-progress");
  if (!box) { return; }
  var bar = box.querySelector("progress");
  var text = box.querySelector(".import-progress-text");
  var phases = { read: "읽는 중", validate: "검증 중", write: "저장 중" };
  function poll() {
    fetch(box.dataset.url, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (job) {
        if (job.status !== "queued" && job.status !== "running") { window.location.reload(); return; }
        bar.value = job.percent;
        text.textContent = (phases[job.phase] || "대기 중") + ": " + job.done.toLocaleString() +
          (job.total ? " / " + job.total.toLocaleString() : "") + "행";
        window.setTimeout(poll, 1000);
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  window.setTimeout(poll, 500);
})();
