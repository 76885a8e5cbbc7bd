package cdp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/playwright-community/playwright-go"

	"github.com/chromegate/chromegate/executor"
)

// A text holding an operator's secret is never typed key by key: the
// element script executor.InsertScript puts it into the element itself,
// in one step, and only while the element's document is of the origin the
// policy allowed and the element holds the focus.

// locInsert runs the guarded insertion on a locator's element. The page's
// own world cannot be trusted to check where the element is (a page can
// redefine window.origin, or the prototypes a check would call), so the
// element is only marked there, with a random token, and found, checked
// and written to from the isolated world, whose built-ins no page
// touches. A page that moves the mark can move it only within its own
// document; one that navigates away takes it along.
func (c *call) locInsert(what string, loc playwright.Locator, t executor.Target, arg map[string]any) error {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	token := hex.EncodeToString(b[:])
	if _, err := loc.Evaluate("(el, t) => el.setAttribute('"+insertMark+"', t)", token,
		playwright.LocatorEvaluateOptions{Timeout: c.to()}); err != nil {
		return err
	}
	withToken := map[string]any{"token": token}
	for k, v := range arg {
		withToken[k] = v
	}
	raw, err := c.runValue(markedInsert, withToken)
	if err != nil {
		return err
	}
	return insertErr(what, t.String(), raw)
}

// insertArg is the insert script's argument for a text holding a secret;
// shown marks the field (executor.SecretMark).
func insertArg(text, origin, shown string, replace bool) map[string]any {
	return map[string]any{"text": text, "origin": origin, "shown": shown, "replace": replace}
}

// unmarkArg has the insert script take a field's mark off: a plain value
// replaced its secret.
var unmarkArg = map[string]any{"unmark": true}

// insertMark is the attribute locInsert marks the element with.
const insertMark = "data-chromegate-insert"

// markedInsert finds the marked element in the main frame's document or a
// frame of it the isolated world can reach (same-origin ones), unmarks it
// and runs InsertScript on it.
var markedInsert = `(arg) => {
  const sel = '[` + insertMark + `="' + arg.token + '"]';
  const find = (doc) => {
    const el = doc.querySelector(sel);
    if (el) return el;
    for (const f of doc.querySelectorAll('iframe, frame')) {
      let d = null;
      try { d = f.contentDocument; } catch { d = null; }
      const e = d && find(d);
      if (e) return e;
    }
    return null;
  };
  const el = find(document);
  if (!el) return { error: 'guard', why: 'the field is no longer in the page the policy decided on' };
  el.removeAttribute('` + insertMark + `');
  return (` + executor.InsertScript + `)(el, arg);
}`

// refInsert runs it on a ref's element, handed over by the isolated world
// as a remote object.
func (c *call) refInsert(what, ref string, arg map[string]any) error {
	if !executor.ValidRef(ref) {
		return executor.RefError(ref, "malformed", "")
	}
	r, err := c.inRef(ref, scriptFunction(executor.ElementScript), false, map[string]any{"op": "element", "ref": ref})
	if err != nil {
		return err
	}
	objectID, _ := r["objectId"].(string)
	if r["subtype"] != "node" || objectID == "" {
		return c.refOp(what, ref, "state", nil, nil) // the script's {error, why}
	}
	sess, err := c.sessionOf(ref)
	if err != nil {
		return err
	}
	defer func() { _, _ = sess.Send("Runtime.releaseObject", map[string]any{"objectId": objectID}) }()
	res, err := sess.Send("Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": "function (arg) { return (" + executor.InsertScript + ")(this, arg); }",
		"objectId":            objectID,
		"arguments":           []any{map[string]any{"value": arg}},
		"returnByValue":       true,
	})
	if err != nil {
		return executor.Errorf(executor.CodeInternal, "%s on ref %s: %s", what, ref, firstLine(err)).Wrap(err)
	}
	var out struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &out); err != nil || out.Exception != nil {
		return executor.Errorf(executor.CodeInternal, "%s on ref %s: the insert script failed", what, ref)
	}
	return insertErr(what, "ref "+ref, out.Result.Value)
}

// insertErr turns the insert script's answer into the contract's error.
// It never quotes the text.
func insertErr(what, target string, raw json.RawMessage) error {
	var r struct {
		Done  bool   `json:"done"`
		Error string `json:"error"`
		Why   string `json:"why"`
	}
	_ = json.Unmarshal(raw, &r)
	switch {
	case r.Done:
		return nil
	case r.Error == "notfillable":
		return executor.Errorf(executor.CodeBadArgs, "%s on %s: %s", what, target, r.Why)
	case r.Error == "guard":
		return executor.Errorf(executor.CodePolicyDenied, "%s on %s: the secret was not typed: %s", what, target, r.Why).
			WithHint("nothing was typed; look at the page (snapshot) and retry on the field of the page the secret is bound to")
	}
	return executor.Errorf(executor.CodeInternal, "%s on %s: the insert script gave no answer", what, target)
}
