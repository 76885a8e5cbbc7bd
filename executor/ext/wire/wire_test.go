package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeFrame(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // "" = ok, else a substring of the error
	}{
		{`{"v":1,"type":"result","id":"c1","data":{"x":1}}`, ""},
		{`{"v":1,"type":"event","event":"tabClosed","data":{"tabId":"3"}}`, ""},
		{`{"v":1,"type":"made-up"}`, ""}, // unknown types pass; the reader ignores them
		{`[1,2]`, "not a JSON object"},
		{``, "not a JSON object"},
		{`{"v":2,"type":"ping"}`, "version"},
		{`{"type":"ping"}`, "version"},
		{`{"v":1}`, "no type"},
		{`{"v":1,"type":"result"}`, "no id"},
		{`{"v":1,"type":"error","id":"c1"}`, "no error"},
		{`{"v":1,"type":"ping"} {"v":1}`, "not valid JSON"},
		{`{"v":1,"type":"result","id":"c1","ID":"c2"}`, "only in case"},
		{`{"v":1,"Type":"result","id":"c1"}`, "only in case"},
		{`{"v":1,"type":"result","id":"c1"`, "not valid JSON"},
	}
	for _, tc := range cases {
		_, err := Decode([]byte(tc.in))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestWelcomeTokenField(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(Frame{V: 1, Type: TypeWelcome, NewToken: "abc"})
	if !strings.Contains(string(b), `"token":"abc"`) {
		t.Fatalf("welcome %s", b)
	}
	b, _ = json.Marshal(Frame{V: 1, Type: TypeWelcome})
	if strings.Contains(string(b), "token") {
		t.Fatalf("welcome without a code carries a token field: %s", b)
	}
}

// FuzzDecodeFrame: the decoder never panics, and whatever it accepts
// re-encodes to a frame it accepts again with the same meaning.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"type":"hello","token":"x","ext":{"id":"a"}}`,
		`{"v":1,"type":"result","id":"c1","data":[1,{"a":"b"}]}`,
		`{"v":1,"type":"error","id":"c1","error":{"code":"TIMEOUT","message":"m"}}`,
		`{"v":1,"type":"command","id":"c1","method":"click","tabId":"4","params":{},"timeoutMs":5}`,
		`{"v":1,"type":"result","id":"c1","Id":"c2"}`,
		`{"v":1e0,"type":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := Decode(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(fr)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		fr2, err := Decode(again)
		if err != nil {
			t.Fatalf("re-decode %s: %v", again, err)
		}
		if fr2.Type != fr.Type || fr2.ID != fr.ID || fr2.Method != fr.Method {
			t.Fatalf("round trip changed the frame: %+v vs %+v", fr, fr2)
		}
	})
}

// A decide frame's request is the extension's word only for what it sees
// of a request: the session, the hook, the backend and the address are
// the server's, and no spelling of them in a frame sets them.
func TestDecideRequestCannotSetTheServersFields(t *testing.T) {
	t.Parallel()
	f, err := Decode([]byte(`{"v":1,"type":"decide","id":"d1","request":{"url":"https://a.test/","method":"GET",` +
		`"session":"other","Session":"other","via":"proxy","Via":"proxy","backend":"cdp","Backend":"cdp","Addr":"10.0.0.1","addr":"10.0.0.1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Request
	if r.URL != "https://a.test/" || r.Method != "GET" || r.Session != "" || r.Via != "" || r.Backend != "" || r.Addr.IsValid() {
		t.Errorf("decoded request: %+v", r)
	}
}
