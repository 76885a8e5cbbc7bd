package cdp

import (
	"encoding/json"

	"github.com/playwright-community/playwright-go"

	"github.com/chromegate/chromegate/executor"
)

// A text holding an operator's secret is never typed key by key: the
// element script executor.InsertScript puts it into the element itself,
// in one step, and only while the element's document is of the origin the
// policy allowed and the element holds the focus.

// locInsert runs the guarded insertion on a locator's element (in the
// page's world: the document is the one the secret is bound to).
func (c *call) locInsert(what string, loc playwright.Locator, t executor.Target, text, origin string, replace bool) error {
	v, err := loc.Evaluate("(el, arg) => ("+executor.InsertScript+")(el, arg)",
		map[string]any{"text": text, "origin": origin, "replace": replace},
		playwright.LocatorEvaluateOptions{Timeout: c.to()})
	if err != nil {
		return err
	}
	b, _ := json.Marshal(v)
	return insertErr(what, t.String(), b)
}

// refInsert runs it on a ref's element, handed over by the isolated world
// as a remote object.
func (c *call) refInsert(what, ref, text, origin string, replace bool) error {
	if !executor.ValidRef(ref) {
		return executor.RefError(ref, "malformed", "")
	}
	r, err := c.inWorld(scriptFunction(executor.ElementScript), false, map[string]any{"op": "element", "ref": ref})
	if err != nil {
		return err
	}
	objectID, _ := r["objectId"].(string)
	if r["subtype"] != "node" || objectID == "" {
		return c.refOp(what, ref, "state", nil, nil) // the script's {error, why}
	}
	_, sess, err := c.t.w.context(c)
	if err != nil {
		return err
	}
	defer func() { _, _ = sess.Send("Runtime.releaseObject", map[string]any{"objectId": objectID}) }()
	res, err := sess.Send("Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": "function (arg) { return (" + executor.InsertScript + ")(this, arg); }",
		"objectId":            objectID,
		"arguments":           []any{map[string]any{"value": map[string]any{"text": text, "origin": origin, "replace": replace}}},
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
