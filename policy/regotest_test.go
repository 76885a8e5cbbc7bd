package policy

import (
	"bytes"
	"strings"
	"testing"
)

func TestTestRunsDefaultPolicyTests(t *testing.T) {
	var out bytes.Buffer
	passed, failed, err := Test(t.Context(), nil, &out, true)
	if err != nil {
		t.Fatal(err)
	}
	if failed > 0 || passed == 0 {
		t.Errorf("passed %d, failed %d:\n%s", passed, failed, out.String())
	}
	if !strings.Contains(out.String(), "coverage: ") {
		t.Errorf("no coverage line:\n%s", out.String())
	}
	t.Log(out.String())
}
