package policy

import "github.com/open-policy-agent/opa/v1/ast"

// Flow is one entry of input.flow: a value the call or request sends to
// ToOrigin carries content the session's model was shown from FromOrigin
// (a run of at least 12 characters of it, or pieces of at least 8 that add
// up to 12 over the session; see package mcp/flow). Via says which value:
// "arg:NAME" (an argument, "arg:a.b[0]" inside one), "url" (the path,
// query and fragment of the URL a navigation or download loads),
// "url.host" (its host, which the content of FromOrigin named first),
// "request.url" or "request.host" (a request a page makes). Length is the
// longest matched run in characters (the host's length for a host),
// Total the characters matched from FromOrigin to ToOrigin over the
// session, each counted once. No flow names the text itself.
type Flow struct {
	FromOrigin string `json:"from_origin"`
	ToOrigin   string `json:"to_origin"`
	Via        string `json:"via"`
	Length     int    `json:"length"`
	Total      int    `json:"total"`
}

func flowTerm(fs []Flow) *ast.Term {
	items := make([]*ast.Term, len(fs))
	for i, f := range fs {
		items[i] = ast.ObjectTerm(
			ast.Item(ast.InternedTerm("from_origin"), strTerm(f.FromOrigin)),
			ast.Item(ast.InternedTerm("to_origin"), strTerm(f.ToOrigin)),
			ast.Item(ast.InternedTerm("via"), strTerm(f.Via)),
			ast.Item(ast.InternedTerm("length"), ast.InternedTerm(f.Length)),
			ast.Item(ast.InternedTerm("total"), ast.InternedTerm(f.Total)),
		)
	}
	return ast.ArrayTerm(items...)
}

func stringsTerm(ss []string) *ast.Term {
	items := make([]*ast.Term, len(ss))
	for i, s := range ss {
		items[i] = strTerm(s)
	}
	return ast.ArrayTerm(items...)
}
