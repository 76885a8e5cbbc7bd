// formsubmit: submits a form as its submit button would (validation and
// submit handlers included), in chromegate's isolated world. Called as
// fn({form}) with the form's CSS path from formprobe. Returns {ok} or
// {ok: false, error}.
(function (args) {
  "use strict";
  const form = document.querySelector(args.form);
  if (!form || form.localName !== "form") return { ok: false, error: "the form is no longer in the page" };
  if (typeof form.requestSubmit === "function") form.requestSubmit();
  else form.submit();
  return { ok: true };
})
