package executor

import "testing"

func TestHitInherit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		hit          Hit
		docURL, orig string
		want         string
	}{
		{"srcdoc entered", Hit{URL: "about:srcdoc", Origin: "://"}, "about:srcdoc", "http://a.test", "http://a.test"},
		{"cross-origin frame", Hit{URL: "about:srcdoc", Origin: "://", Frame: true}, "about:srcdoc", "http://a.test", "://"},
		{"another document", Hit{URL: "about:srcdoc", Origin: "://"}, "about:blank", "http://a.test", "://"},
		{"opaque", Hit{URL: "about:srcdoc", Origin: "://"}, "about:srcdoc", "null", "://"},
		{"URL carries it", Hit{URL: "http://b.test/", Origin: "http://b.test"}, "http://b.test/", "http://a.test", "http://b.test"},
		{"browser's tuple stands", Hit{URL: "about:blank", Origin: "http://c.test"}, "about:blank", "http://a.test", "http://c.test"},
	} {
		h := c.hit
		h.Inherit(c.docURL, c.orig)
		if h.Origin != c.want {
			t.Errorf("%s: origin %q, want %q", c.name, h.Origin, c.want)
		}
	}
}
