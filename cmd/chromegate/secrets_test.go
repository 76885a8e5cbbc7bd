package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.env")
	if err := os.WriteFile(file, []byte("PASSWORD=correct horse battery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CHROMEGATE_SECRET_TOKEN", "tok-0123456789")
	var s secretFlags
	s.file = file
	for _, v := range []string{"PASSWORD=https://login.test,https://Login.test:443", "TOKEN=https://api.test;"} {
		if err := s.origins.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	v, err := s.load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"PASSWORD": {"https://login.test"}, "TOKEN": {"https://api.test"}}
	if diff := cmp.Diff(want, v.Origins()); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	if _, ok := os.LookupEnv("CHROMEGATE_SECRET_TOKEN"); ok {
		t.Error("the secret's variable stayed in the environment, for the browser to inherit")
	}
	// The policy gets the bindings as data; the decision log writes through
	// the redaction.
	p := policyFlags{vault: v}
	if diff := cmp.Diff(want, p.data()["secret_origins"]); diff != "" {
		t.Errorf("policy data (-want +got):\n%s", diff)
	}

	if err := s.origins.Set("PASSWORD=https://other.test"); err == nil {
		t.Error("a second binding of PASSWORD was accepted")
	}
	var bad secretFlags
	bad.origins.Set("NOPE=https://a.test")
	if _, err := bad.load(); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("binding an undeclared secret: %v", err)
	}
	os.Chmod(file, 0o644)
	if _, err := (&secretFlags{file: file}).load(); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a file others can read: %v", err)
	}
}
