package cdp

import "strings"

// The launched browser makes no call of its own (see the package doc).
// Playwright's default switches already turn off most of Chromium's own
// traffic (--disable-background-networking, --disable-component-update,
// --disable-default-apps, --disable-client-side-phishing-detection,
// --disable-field-trial-config, --metrics-recording-only,
// --disable-breakpad, --disable-sync, the OptimizationHints feature);
// Debian's Chromium 156, launched with them and left on about:blank, still
// asked Google within a second of starting, and again every minute:
//
//   - clients2.google.com/time/1/current — network time
//     (NetworkTimeServiceQuerying);
//   - update.googleapis.com/service/update2/json — an on-demand install of
//     the on-device model manifest (component ceofaddefefcbblgcgnibnonglccbfja),
//     which --disable-component-update does not cover;
//   - accounts.google.com/ListAccounts — the Google account cookie jar,
//     which --allow-browser-signin=false does not stop.
//
// quietSwitches close those and the rest of the list in the doc; two of
// them point a Google service at an address Chromium refuses to dial
// (port 1 is on its unsafe-port list, checked before any proxy or DNS, and
// .invalid never resolves): for the component updater and Google sign-in
// there is no switch that turns the service off, only its server.
var quietSwitches = []string{
	"--disable-background-networking",
	"--disable-component-update",
	"--component-updater=url-source=" + refusedURL("component-updater"),
	"--gaia-url=" + refusedURL("gaia"),
	"--allow-browser-signin=false",
	"--disable-sync",
	"--disable-domain-reliability",
	"--disable-client-side-phishing-detection",
	"--safebrowsing-disable-auto-update",
	"--disable-default-apps",
	"--disable-breakpad",
	"--metrics-recording-only",
	"--no-pings",
	"--no-first-run",
	"--no-default-browser-check",
}

// refusedURL is an https URL no request to which leaves the browser.
func refusedURL(name string) string { return "https://" + name + ".chromegate.invalid:1/" }

// quietFeatures are the features turned off for the same reason.
var quietFeatures = []string{
	"NetworkTimeServiceQuerying", // the time, from clients2.google.com
	"OptimizationHints",          // page hints from the optimization guide
	"OptimizationGuideModelDownloading",
	"AutofillServerCommunication", // form field types, from each page's forms
	"PreconnectToSearch",          // an idle connection to the search engine
	"MediaRouter",                 // cast-device discovery on the local network
	"Translate",                   // language detection and translation
	"InterestFeedContentSuggestions",
	"CertificateTransparencyComponentUpdater",
}

// playwrightDisabledFeatures is Playwright 1.60's own --disable-features
// list (chromiumSwitches.ts). Chromium honours only the last
// --disable-features switch and ours comes after Playwright's, so ours
// repeats Playwright's list; TestDisabledFeaturesKeepPlaywrights checks it
// against the installed driver.
var playwrightDisabledFeatures = []string{
	"AvoidUnnecessaryBeforeUnloadCheckSync", "BoundaryEventDispatchTracksNodeRemoval",
	"DestroyProfileOnBrowserClose", "DialMediaRouteProvider", "GlobalMediaControls",
	"HttpsUpgrades", "LensOverlay", "MediaRouter", "PaintHolding",
	"ThirdPartyStoragePartitioning", "Translate", "AutoDeElevate", "RenderDocument",
	"OptimizationHints", "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
}

// mergeFeatureSwitch pulls every --NAME=a,b switch out of args and returns
// the rest with one merged switch (base first, then the values found) at
// the end: Chromium reads only the last of them.
func mergeFeatureSwitch(args []string, name string, base []string) []string {
	prefix := "--" + name + "="
	features := append([]string(nil), base...)
	out := args[:0:0]
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			features = append(features, strings.Split(v, ",")...)
			continue
		}
		out = append(out, a)
	}
	return append(out, prefix+strings.Join(dedupe(features), ","))
}
