// formsubmit: submits a form as its submit button would (validation and
// submit handlers included), in chromegate's isolated world. Called as
// fn({form}) with the form's CSS path from formprobe. Returns {ok} or
// {ok: false, error}.
(function (args) {
  "use strict";
  const dom = chromegateDOM();
  const form = dom.qs(document, args.form);
  if (!form || dom.localName(form) !== "form") return { ok: false, error: "the form is no longer in the page" };
  // Through the prototype: a control named requestSubmit or submit
  // shadows the form's own methods (named access).
  HTMLFormElement.prototype.requestSubmit.call(form);
  return { ok: true };
})
