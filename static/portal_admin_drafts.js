// Unsent critique drafts on the admin transcript survive the transcript's filter (a GET that reloads the page)
// and any other reload: each comment form's fields are kept in sessionStorage (this tab only, gone when it
// closes) until the form is sent. Issue 33: filtering threw a half-written critique away without a word.
"use strict";
(function () {
  const prefix = "portal-draft:" + location.pathname + ":";

  function fields(form) {
    return Array.from(form.querySelectorAll("textarea, input:not([type=hidden]), select"));
  }

  function restore(form) {
    let restored = false;
    for (const field of fields(form)) {
      const kept = sessionStorage.getItem(prefix + field.name);
      if (kept !== null && kept !== field.value) {
        field.value = kept;
        restored = restored || field.tagName === "TEXTAREA";
      }
    }
    if (restored) {
      const details = form.closest("details");
      if (details) {
        details.open = true;
      }
      form.classList.add("draft-restored");
      const note = document.createElement("p");
      note.className = "help draft-note";
      note.textContent = "보내지 않은 논평 초안을 되살렸습니다.";
      form.prepend(note);
    }
  }

  function keep(event) {
    const field = event.target;
    if (field.name) {
      sessionStorage.setItem(prefix + field.name, field.value);
    }
  }

  function forget(form) {
    for (const field of fields(form)) {
      sessionStorage.removeItem(prefix + field.name);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("form[data-draft]").forEach((form) => {
      restore(form);
      form.addEventListener("input", keep);
      form.addEventListener("change", keep);
      form.addEventListener("submit", () => forget(form));
    });
  });
})();
