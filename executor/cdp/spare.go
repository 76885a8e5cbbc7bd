package cdp

// spareRendererFeatures turn off Chromium's spare renderer. Chromium keeps
// one renderer process started ahead for the next navigation, in the
// browser context that navigated last, and throws it away when the next
// navigation happens in another context. With many sessions (a browser
// context each) navigating at once nearly every navigation starts a
// process that is never used: measured under BenchmarkHTTPSessions, 16
// sessions × 5 rounds spawned 121 renderer processes with the spare and
// 29 without it (a renderer per context and its first page), and the
// browser's CPU per call went down with them. One session in one context
// uses its spare, which hides a process start from a cross-site
// navigation, so it is kept there (see Options.NoSpareRenderer).
var spareRendererFeatures = []string{"SpareRendererForSitePerProcess"}
