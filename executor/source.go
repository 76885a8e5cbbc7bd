package executor

// Every surface is decided on the document that produced what it shows.
// A network-log entry, a console message and a dialog each carry the
// document that made it (Source): the frame's document, attributed by
// the browser's own identifiers (the request's frame, the message's
// execution context, the dialog's frame id), never by a URL the page can
// write (a script's sourceURL, a stack's URL, the top page's address).
// The server decides each Source like a read of that document, withholds
// what a denied one produced and counts it. A backend that cannot name
// the document leaves Source empty, which the server withholds.

// Source names the document that produced a record: its URL as the
// browser committed it and its security origin as the browser gave it
// ("" when the URL's own origin stands). An about:srcdoc or about:blank
// frame's origin is its parent's (a backend that cannot read the
// origin walks up to the first parent whose URL carries one).
type Source struct {
	URL    string `json:"url,omitempty"`
	Origin string `json:"origin,omitempty"`
	// Main marks the tab's main document (whose URL is the tab's page
	// when the record was made).
	Main bool `json:"main,omitempty"`
}

// Known reports whether s names a document at all.
func (s *Source) Known() bool { return s != nil && (s.URL != "" || s.Origin != "") }
