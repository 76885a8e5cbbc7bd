package mcp

import (
	"context"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
)

// An action that loads a new document (a click on a link, Enter or a click
// that submits a form, a handler that assigns location) returns before the
// new document replaces the old one. Its changes must be of the new
// document, so the call must know whether one is coming, without waiting
// on every action that loads nothing. The browser says so: the Navigation
// API's navigate event fires when the page asks its main frame for another
// URL, and tells whether it stays in the document, is a download, or was
// cancelled. chromegate listens in its isolated world (scripts/landing.js
// in helpers), armed before each action that may load (armLanding), and
// reads it once after the action, once the page's pending tasks ran (a
// form is submitted in a later task than the click or key that submits
// it). Only when it says a document is coming does the call wait, for its
// request, response and load.
//
// A navigation the page starts later than that (from a timer, or an
// answer from the server) is not waited for: the call shows the page as
// it is, and the next call sees the new document. The same holds when a
// page keeps the event from chromegate's listener. Either way what is
// shown is decided on the URL it was read from (addChanges), so a page
// that hides or forges the signal gets at most a stale outline of a page
// the caller may read.

// landingBound bounds the wait for the request of a navigation the
// signal said was asked for (a cancelled or refused one never comes).
const landingBound = 5 * time.Second

// armLanding begins a watch for navigations on the tab c acts on, when
// c's result is to carry its change and its action may load a document.
// A watch that cannot begin (no document to script, a dialog) is none.
func (s *Server) armLanding(ctx context.Context, c *Call, ex executor.Executor) {
	if ex == nil || !mayLoad(c) || c.Tool.AnswersDialog || !s.changesOn(c) {
		return
	}
	tab := c.TabID()
	if c.before != nil {
		tab = c.before.ID
	}
	w, err := helpers.ArmLanding(ctx, ex, tab)
	if err != nil || !w.API || w.Token == "" {
		return
	}
	c.landing = &w
}

// Verdicts of landingAsked, in the server's debug log.
const (
	landingNone    = "none"    // the page asked for no other document
	landingCross   = "cross"   // it asked for one: waited for it
	landingOther   = "other"   // another document is in the tab already
	landingNetwork = "network" // no signal: the network log's word
)

// landingAsked says whether c's action asked tab's main frame for a new
// document and, when it did, waits until that document's response arrived
// (awaitLanding). began is when the action began.
func (s *Server) landingAsked(ctx context.Context, c *Call, ex executor.Executor, tab string, began time.Time) bool {
	verdict, loads := s.landingVerdict(ctx, c, ex, tab, began)
	s.log.Debug("landing", "tool", c.Tool.Name, "asked", verdict, "loads", loads)
	return loads
}

func (s *Server) landingVerdict(ctx context.Context, c *Call, ex executor.Executor, tab string, began time.Time) (string, bool) {
	var w helpers.LandingWatch // dialog_answer: the tab's last watch
	switch {
	case c.landing != nil && c.landing.TabID == tab:
		w = *c.landing
	case c.landing != nil, !c.Tool.AnswersDialog:
		// The action ended on another tab, or began no watch: what the
		// network log shows already.
		return landingNetwork, s.awaitLanding(ctx, ex, tab, began, time.Time{})
	}
	l, err := helpers.ReadLanding(ctx, ex, tab, w)
	switch {
	case err != nil || l.Unarmed:
		return landingNetwork, s.awaitLanding(ctx, ex, tab, began, time.Time{})
	case l.Other:
		s.awaitLanding(ctx, ex, tab, began, time.Time{})
		return landingOther, true
	case l.Cross:
		return landingCross, s.awaitLanding(ctx, ex, tab, began, time.Now().Add(landingBound))
	case l.Seen == 0 && s.awaitLanding(ctx, ex, tab, began, time.Time{}):
		// No navigation reached chromegate's listener, yet the network
		// log has one (a page stopped the event): one look, no wait.
		return landingNetwork, true
	}
	return landingNone, false
}

// oldDocs are the ref tokens of the documents the tab held before c's
// action: of what the caller last saw, and of the document its watch began
// in.
func oldDocs(c *Call, last *seenOutline) map[string]bool {
	old := map[string]bool{}
	if last != nil {
		old = helpers.OutlineTokens(last.outline)
	}
	if c.landing != nil && c.landing.Doc != "" {
		old[c.landing.Doc] = true
	}
	return old
}
