package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// FuzzRESTCommand: POST /api/v1/command with any body never panics and
// never gives a 5xx; a body that is not one JSON object of the known fields
// is a 400 (413 when over the limit) with a JSON error that says what is
// wrong.
func FuzzRESTCommand(f *testing.F) {
	f.Add(`{"command":"tabs_list"}`)
	f.Add(`{"command":"navigate","params":{"url":"https://example.com"}}`)
	f.Add(`{"command":"navigate","Command":"eval"}`)
	f.Add(`{"command":"get_text","params":[1,2]}`)
	f.Add(`{"command":1}`)
	f.Add(`{"command":"x","session":{"a":1}}`)
	f.Add(`{"command":"tabs_list"} {"command":"eval"}`)
	f.Add(`[` + strings.Repeat(`[`, 5000))
	f.Add(`{"params":` + strings.Repeat(`{"a":`, 3000) + `1` + strings.Repeat(`}`, 3000) + `,"command":"tabs_list"}`)
	f.Add(`{"command":"tabs_list","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`)
	f.Add("\xff\xfe{")

	backend := executortest.NewBackend("fake")
	m := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{backend}})
	f.Cleanup(func() { _ = m.Close() })
	s, err := mcp.NewServer(mcp.Options{Manager: m, Gate: cheapOnly{}, Version: "test"})
	if err != nil {
		f.Fatal(err)
	}
	keys, err := OpenKeyStore(filepath.Join(f.TempDir(), "keys.json"))
	if err != nil {
		f.Fatal(err)
	}
	const addr = "127.0.0.1:7777"
	h, err := New(s, Options{Addr: addr, Keys: keys, MaxBodyBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/command", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var ans struct {
			OK    bool       `json:"ok"`
			Error *RESTError `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
			t.Fatalf("status %d, the answer is not JSON: %v\n%s", rec.Code, err, rec.Body.String())
		}
		if rec.Code >= 500 && (ans.Error == nil || ans.Error.Code == executor.CodeInternal) {
			t.Fatalf("body %q: %d %s", short(body), rec.Code, rec.Body.String())
		}
		var m map[string]json.RawMessage
		isObject := json.Unmarshal([]byte(body), &m) == nil && m != nil
		if !isObject && rec.Code != http.StatusBadRequest && rec.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("a body that is no JSON object got %d: %s", rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 && (ans.Error == nil || ans.Error.Code == "" || ans.Error.Message == "") {
			t.Fatalf("status %d without a clear error: %s", rec.Code, rec.Body.String())
		}
	})
}

// cheapOnly lets the calls that return at once run and denies the rest, so
// the fuzzer spends its time on the decoder, not on waits in a fake page.
type cheapOnly struct{}

func (cheapOnly) Decide(ctx context.Context, q gate.Question) gate.Decision {
	if q.Kind != gate.KindCall || q.Name == "tabs_list" || q.Name == "chrome_status" {
		return gatetest.AllowAll.Decide(ctx, q)
	}
	return gatetest.Deny(executor.Errorf(executor.CodePolicyDenied, "%s is not run by the fuzzer", q.Name))
}

func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
