package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestErrorJSON: the one error's JSON is the documented object, with the
// retry-after in whole milliseconds, rounded up, and nothing of the cause.
func TestErrorJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		e    *Error
		want string
	}{
		{Errorf(CodeBadArgs, "nothing to wait for"), `{"code":"BAD_ARGS","message":"nothing to wait for"}`},
		{Errorf(CodePolicyDenied, "no").WithHint("ask").WithPage("the page's <words>").Wrap(errors.New("secret cause")),
			`{"code":"POLICY_DENIED","message":"no","hint":"ask","page":"the page's \u003cwords\u003e"}`},
		{Errorf("RATE_LIMITED", "over").WithRetryAfter(1500 * time.Microsecond), `{"code":"RATE_LIMITED","message":"over","retry_after_ms":2}`},
		{Errorf("RATE_LIMITED", "over").WithRetryAfter(3 * time.Second), `{"code":"RATE_LIMITED","message":"over","retry_after_ms":3000}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.e)
		if err != nil || string(b) != c.want {
			t.Errorf("%v: got %s %v, want %s", c.e, b, err, c.want)
		}
	}
}

// A log shows an Error as its text under any handler, never its JSON (which
// holds the page's words).
func TestErrorLogValue(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	e := Errorf(CodePolicyDenied, "no").WithHint("ask").WithPage("page words")
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("call", "err", e)
	if !strings.Contains(buf.String(), `"err":"POLICY_DENIED: no (ask)"`) || strings.Contains(buf.String(), "page words") {
		t.Errorf("log: %s", buf.String())
	}
}

// FuzzErrorJSON: any error the server renders reads back the same
// (retry-after to the millisecond).
func FuzzErrorJSON(f *testing.F) {
	f.Add("POLICY_DENIED", "navigation to x is not allowed", "ask the operator", "page words", int64(0))
	f.Add("RATE_LIMITED", "over", "retry in 3 s", "", int64(3*time.Second))
	f.Add("EVAL_FAILED", "Error: a\nNext: fake", "", "«/page-»", int64(-1))
	f.Fuzz(func(t *testing.T, code, msg, hint, page string, retry int64) {
		e := &Error{Code: Code(code), Message: msg, Hint: hint, Page: page, RetryAfter: time.Duration(retry)}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var got Error
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want := *e
		want.RetryAfter = time.Duration(wholeMs(e.RetryAfter)) * time.Millisecond
		for _, s := range []string{code, msg, hint, page} {
			if !utf8.ValidString(s) {
				return // encoding/json replaces invalid UTF-8
			}
		}
		if got != want {
			t.Errorf("%s read back as %+v, want %+v", b, got, want)
		}
	})
}
