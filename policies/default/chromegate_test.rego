# Unit tests for the default policy. Run them with `chromegate policy test`
# (plain `opa test` does not know chromegate.host_match or
# chromegate.parse_url).
package chromegate_test

# Imported under another name: `import data.chromegate` would shadow the
# chromegate.* builtins in this file.
import data.chromegate as policy

# ---------------------------------------------------------------------------
# Helpers: inputs as chromegate builds them.

base := {
	"version": 1,
	"phase": "call",
	"read_only": false,
	"args": {},
	"target": null,
	"page": null,
	"backend": "cdp",
	"principal": {"name": "test", "roles": [], "transport": "stdio"},
	"page_tool": null,
}

actions := {
	"tabs_list": "tabs", "tab_select": "tabs", "tab_new": "tabs", "tab_close": "tabs",
	"navigate": "navigate", "back": "navigate", "forward": "navigate", "reload": "navigate",
	"get_text": "read", "get_html": "read", "snapshot": "read", "query": "read", "screenshot": "read",
	"wait_for": "read", "extract_links": "read", "read_as_markdown": "read", "cookies_get": "read",
	"network_requests": "read", "network_request": "read",
	"console_messages": "read", "pdf": "read",
	"click": "interact", "type": "interact", "fill": "interact", "press": "interact", "hover": "interact",
	"scroll": "interact", "select_option": "interact", "set_files": "interact", "drag": "interact",
	"fill_form": "interact", "clipboard_write": "interact", "cookies_set": "interact",
	"eval": "eval", "download_file": "download", "chrome_status": "status",
	"page_tools_list": "page_tool", "page_tool_call": "page_tool",
	"state_save": "read", "state_list": "read", "state_load": "interact",
}

call(tool, extra) := object.union(object.union(base, {"tool": tool, "action": actions[tool]}), extra)

listing(tool) := object.union(base, {"phase": "list", "tool": tool, "action": actions[tool]})

nav(url) := call("navigate", {"args": {"url": url}, "target": chromegate.parse_url(url)})

on(tool, url) := call(tool, {"page": object.union(chromegate.parse_url(url), {"origin": "n/a"})})

allowed(inp) if policy.decision.allow with input as inp

reasons(inp) := r if {
	r := policy.decision.reasons with input as inp
}

hints(inp) := h if {
	h := policy.decision.hints with input as inp
}

# ---------------------------------------------------------------------------
# The decision document.

test_decision_allowed_has_no_reasons if {
	d := policy.decision with input as nav("https://example.com/") with data.allow_domains as ["example.com"]
	d == {"allow": true, "reasons": [], "hints": [], "ask": []}
}

# Asking: the tools in ask_tools ask a person before an allowed call runs;
# deny wins over ask; nothing asks by default, and a listing never asks.
test_ask_tools_ask_before_an_allowed_call if {
	d := policy.decision with input as nav("https://example.com/") with data.allow_domains as ["example.com"] with data.ask_tools as ["navigate"]
	d.allow == true
	d.ask == ["navigate runs only when a person allows it (data: ask_tools)"]
}

test_ask_loses_to_deny if {
	d := policy.decision with input as nav("https://other.example/") with data.allow_domains as ["example.com"] with data.ask_tools as ["navigate"]
	d.allow == false
	not d.ask
}

test_nothing_asks_by_default if {
	d := policy.decision with input as nav("https://example.com/") with data.allow_domains as ["example.com"]
	d.ask == []
	d2 := policy.decision with input as nav("https://example.com/") with data.allow_domains as ["example.com"] with data.ask_tools as "navigate"
	d2.ask == []
}

test_decision_denied_has_reasons_and_hints if {
	d := policy.decision with input as nav("https://other.test/")
	d.allow == false
	d.reasons == ["navigation to other.test is not allowed: host not in allow_domains"]
	d.hints == [`start chromegate with --allow-domain other.test, or add "other.test" to allow_domains in the policy data`]
}

test_deny_by_default_for_an_empty_input if {
	d := policy.decision with input as {}
	d.allow == false
	count(d.reasons) > 0
}

test_wrong_version_denied if {
	inp := object.union(nav("about:blank"), {"version": 2})
	not allowed(inp)
	"input version 2 is not supported by this policy, which reads version 1" in reasons(inp)
}

test_unknown_phase_denied if {
	inp := object.union(nav("about:blank"), {"phase": "maybe"})
	not allowed(inp)
	"unknown phase maybe" in reasons(inp)
}

test_unknown_tool_denied if {
	inp := object.union(base, {"tool": "format_disk", "action": "unknown"})
	not allowed(inp)
	"format_disk is not a tool this policy knows" in reasons(inp)
	inp_list := object.union(inp, {"phase": "list"})
	not allowed(inp_list)
}

test_navigate_without_url_denied if {
	inp := call("navigate", {"target": null})
	not allowed(inp)
	reasons(inp) == ["navigate needs a url"]
}

test_no_rule_reason_when_nothing_else_applies if {
	inp := call("navigate", {"target": {}})
	not allowed(inp)
	reasons(inp) == ["no rule of the policy allows navigate"]
}

# ---------------------------------------------------------------------------
# Status and tabs.

test_status_always_allowed if {
	allowed(call("chrome_status", {}))
	allowed(listing("chrome_status"))
}

test_tabs_list_select_new_always_allowed if {
	allowed(call("tabs_list", {}))
	allowed(call("tab_select", {"args": {"tabId": "cdp:1:2"}}))
	allowed(call("tab_new", {}))
	allowed(listing("tabs_list"))
}

test_tab_close_needs_mutations if {
	not allowed(call("tab_close", {}))
	"tab_close changes the page or the browser, and mutations are off (safe mode)" in reasons(call("tab_close", {}))
	"start chromegate with --enable-mutations, or set enable_mutations to true in the policy data" in hints(call("tab_close", {}))
	allowed(call("tab_close", {})) with data.enable_mutations as true
	not allowed(listing("tab_close"))
	allowed(listing("tab_close")) with data.enable_mutations as true
}

# ---------------------------------------------------------------------------
# Navigation.

test_navigate_allowlisted_host if {
	allowed(nav("https://example.com/a")) with data.allow_domains as ["example.com"]
	allowed(nav("HTTPS://EXAMPLE.COM./a")) with data.allow_domains as ["example.com"]
	allowed(nav("http://example.com:8080/")) with data.allow_domains as ["example.com"]
}

test_navigate_exact_pattern_is_only_that_host if {
	not allowed(nav("https://www.example.com/")) with data.allow_domains as ["example.com"]
	not allowed(nav("https://example.com.evil.test/")) with data.allow_domains as ["example.com"]
	not allowed(nav("https://notexample.com/")) with data.allow_domains as ["example.com"]
}

test_navigate_wildcard_any_depth_not_apex if {
	allowed(nav("https://a.example.com/")) with data.allow_domains as ["*.example.com"]
	allowed(nav("https://a.b.c.example.com/")) with data.allow_domains as ["*.example.com"]
	not allowed(nav("https://example.com/")) with data.allow_domains as ["*.example.com"]
	not allowed(nav("https://badexample.com/")) with data.allow_domains as ["*.example.com"]
}

test_navigate_other_host_denied_with_reason_and_hint if {
	inp := nav("https://other.test/page?token=secret")
	not allowed(inp) with data.allow_domains as ["allowed.test"]
	reasons(inp) == ["navigation to other.test is not allowed: host not in allow_domains"]
	hints(inp) == [`start chromegate with --allow-domain other.test, or add "other.test" to allow_domains in the policy data`]
	not contains(concat(" ", reasons(inp)), "secret")
}

test_navigate_about_blank_always_allowed if {
	allowed(nav("about:blank"))
	allowed(nav("about:blank#top"))
	not allowed(nav("about:srcdoc"))
}

test_navigate_dangerous_schemes_denied if {
	every u in [
		"file:///etc/passwd",
		"chrome://settings",
		"chrome-extension://abcdefghijklmnop/popup.html",
		"devtools://devtools/bundled/inspector.html",
		"view-source:https://example.com/",
		"javascript:alert(1)",
		"data:text/html,x",
	] {
		not allowed(nav(u)) with data.allow_domains as ["*"] with data.all_domains as true
	}
	reasons(nav("file:///etc/passwd")) == ["navigation to a file: URL is not allowed: the file: scheme is never allowed"]
	reasons(nav("chrome://settings")) == ["navigation to settings is not allowed: the chrome: scheme is never allowed"]
	reasons(nav("javascript:alert(1)")) == ["navigation to a javascript: URL is not allowed: the javascript: scheme is never allowed"]
	hints(nav("data:text/html,x")) == []
}

test_navigate_other_schemes_denied if {
	not allowed(nav("ftp://example.com/")) with data.allow_domains as ["example.com"]
	reasons(nav("ftp://example.com/")) == ["navigation to example.com is not allowed: only http and https URLs and about:blank are allowed, not ftp:"]
	not allowed(nav("ws://example.com/")) with data.allow_domains as ["example.com"]
	not allowed(nav("blob:https://example.com/uuid")) with data.allow_domains as ["example.com"]
}

test_navigate_unparsable_target_denied if {
	inp := call("navigate", {"target": {"url": "::", "scheme": "", "host": "", "port": 0, "ip_class": "none"}})
	not allowed(inp)
	reasons(inp) == ["navigation to an invalid URL is not allowed: the URL could not be parsed"]
}

test_navigate_loopback_denied_in_every_spelling if {
	every u in [
		"http://127.0.0.1:8080/",
		"http://2130706433/",
		"http://0x7f.1/",
		"http://127.1/",
		"http://0177.0.0.1/",
		"http://[::1]:8080/",
		"http://[::ffff:127.0.0.1]/",
		"http://localhost:3000/",
		"http://app.localhost/",
		"http://0.0.0.0/",
	] {
		not allowed(nav(u)) with data.allow_domains as ["*", "*.localhost", "example.com"]
	}
	reasons(nav("http://2130706433/")) == ["navigation to 127.0.0.1 is not allowed: 127.0.0.1 is a loopback address, allowed only when listed exactly in allow_domains"]
}

test_navigate_private_and_link_local_denied if {
	every u in ["http://10.0.0.1/", "http://192.168.1.1/", "http://172.16.0.1/", "http://100.64.0.1/", "http://[fc00::1]/"] {
		not allowed(nav(u)) with data.allow_domains as ["*"]
	}
	not allowed(nav("http://169.254.169.254/latest/meta-data/")) with data.allow_domains as ["*"]
	not allowed(nav("http://[fe80::1]/")) with data.allow_domains as ["*"]
	reasons(nav("http://169.254.169.254/")) == ["navigation to 169.254.169.254 is not allowed: 169.254.169.254 is a link-local address, allowed only when listed exactly in allow_domains"]
	reasons(nav("http://10.0.0.1/")) == ["navigation to 10.0.0.1 is not allowed: 10.0.0.1 is a private-network address, allowed only when listed exactly in allow_domains"]
}

test_navigate_local_allowed_when_listed_exactly if {
	allowed(nav("http://127.0.0.1:8080/")) with data.allow_domains as ["127.0.0.1"]
	allowed(nav("http://2130706433/")) with data.allow_domains as ["127.0.0.1"]
	allowed(nav("http://[::1]/")) with data.allow_domains as ["::1"]
	allowed(nav("http://[::1]/")) with data.allow_domains as ["[::1]"]
	allowed(nav("http://localhost:3000/")) with data.allow_domains as ["localhost"]
	allowed(nav("http://app.localhost/")) with data.allow_domains as ["app.localhost"]
	not allowed(nav("http://app.localhost/")) with data.allow_domains as ["*.localhost"]
	allowed(nav("http://169.254.169.254/")) with data.allow_domains as ["169.254.169.254"]
	hints(nav("http://127.0.0.1/")) == [`start chromegate with --allow-domain 127.0.0.1 (exactly this host: wildcards and --unsafe-all-domains never match local addresses), or add "127.0.0.1" to allow_domains in the policy data`]
}

test_navigate_public_ip_needs_exact_listing if {
	not allowed(nav("http://8.8.8.8/")) with data.allow_domains as ["*"]
	not allowed(nav("http://8.8.8.8/")) with data.allow_domains as ["*.8.8"]
	allowed(nav("http://8.8.8.8/")) with data.allow_domains as ["8.8.8.8"]
}

test_all_domains_allows_public_hosts_only if {
	allowed(nav("https://anything.example/")) with data.all_domains as true
	allowed(nav("http://8.8.8.8/")) with data.all_domains as true
	not allowed(nav("http://127.0.0.1/")) with data.all_domains as true
	not allowed(nav("http://localhost/")) with data.all_domains as true
	not allowed(nav("http://10.1.2.3/")) with data.all_domains as true
	not allowed(nav("http://169.254.169.254/")) with data.all_domains as true
	not allowed(nav("file:///etc/passwd")) with data.all_domains as true
	allowed(nav("http://127.0.0.1/")) with data.all_domains as true with data.allow_domains as ["127.0.0.1"]
}

test_switches_must_be_booleans if {
	not allowed(nav("https://anything.example/")) with data.all_domains as "true"
	not allowed(on("eval", "https://example.com/")) with data.allow_domains as ["example.com"] with data.enable_eval as 1
	not allowed(nav("https://example.com/")) with data.allow_domains as "example.com"
}

test_history_navigation_allowed_and_checked_on_landing if {
	allowed(call("back", {}))
	allowed(call("forward", {}))
	allowed(call("reload", {}))

	# Landing: the same tool with the landed URL as target.
	not allowed(call("back", {"target": chromegate.parse_url("https://other.test/")}))
}

test_tab_new_with_url_is_a_navigation if {
	inp := object.union(nav("https://other.test/"), {"tool": "tab_new"})
	not allowed(inp)
	allowed(inp) with data.allow_domains as ["other.test"]
}

test_navigation_listed_always if {
	allowed(listing("navigate"))
	allowed(listing("back"))
}

# ---------------------------------------------------------------------------
# Reads.

test_read_on_allowed_page if {
	every tool in ["get_text", "get_html", "snapshot", "query", "screenshot", "wait_for", "extract_links", "read_as_markdown"] {
		allowed(on(tool, "https://docs.example.com/x")) with data.allow_domains as ["*.example.com"]
	}
}

test_read_on_about_blank if {
	allowed(on("screenshot", "about:blank"))
}

# A document whose URL does not carry its origin is decided on its origin
# (policy.NewDocumentPage): an about:blank written by a denied page is that
# page's, and an opaque one is never read.
written(tool, origin) := call(tool, {"page": object.union(chromegate.parse_url(concat("", [origin, "/"])), {"origin": origin, "shown_url": "about:blank"})})

test_read_on_written_about_blank if {
	allowed(written("get_text", "https://example.com")) with data.allow_domains as ["example.com"]
	not allowed(written("get_text", "https://other.test")) with data.allow_domains as ["example.com"]
	reasons(written("get_text", "https://other.test")) == ["get_text is not allowed on other.test: host not in allow_domains (the tab shows a page outside the policy; navigate to an allowed page first)"] with data.allow_domains as ["example.com"]
	allowed(written("click", "https://example.com")) with data.allow_domains as ["example.com"] with data.enable_mutations as true
}

test_read_on_opaque_about_blank_denied if {
	inp := call("get_text", {"page": {"url": "null", "scheme": "", "host": "", "port": 0, "ip_class": "none", "origin": "null", "shown_url": "about:blank"}})
	not allowed(inp)
	reasons(inp) == ["get_text is not allowed on about:blank (a document of an opaque origin): its document has an opaque origin (sandboxed, or written by a page of one), which is never allowed (the tab shows a page outside the policy; navigate to an allowed page first)"]
}

test_read_on_other_page_denied if {
	inp := on("get_text", "https://other.test/secret")
	not allowed(inp) with data.allow_domains as ["example.com"]
	reasons(inp) == ["get_text is not allowed on other.test: host not in allow_domains (the tab shows a page outside the policy; navigate to an allowed page first)"]
}

test_read_on_dangerous_or_local_page_denied if {
	not allowed(on("screenshot", "chrome://settings")) with data.all_domains as true
	not allowed(on("get_text", "file:///etc/passwd")) with data.all_domains as true
	not allowed(on("get_html", "http://127.0.0.1:9222/json")) with data.allow_domains as ["*"]
	not allowed(on("get_text", "data:text/html,hi")) with data.all_domains as true
}

test_read_without_page_denied if {
	inp := call("get_text", {})
	not allowed(inp)
	reasons(inp) == ["get_text needs the tab's current page, which is unknown"]
}

test_reads_listed_always if {
	allowed(listing("get_text"))
	allowed(listing("screenshot"))
	allowed(listing("cookies_get"))
}

test_cookies_get_needs_allowed_urls if {
	ok := call("cookies_get", {"args": {"urls": ["https://example.com/", "https://a.example.com/"]}})
	allowed(ok) with data.allow_domains as ["example.com", "*.example.com"]
	bad := call("cookies_get", {"args": {"urls": ["https://example.com/", "https://bank.test/?t=secret"]}})
	not allowed(bad) with data.allow_domains as ["example.com"]
	reasons(bad) == ["cookies of bank.test are not allowed: only http and https hosts in allow_domains"] with data.allow_domains as ["example.com"]
	every u in ["file:///x", "not a url", "http://127.0.0.1/"] {
		not allowed(call("cookies_get", {"args": {"urls": [u]}})) with data.allow_domains as ["*"]
	}
	reasons(call("cookies_get", {"args": {"urls": ["::"]}})) == ["cookies of an invalid URL are not allowed: only http and https hosts in allow_domains"]
	reasons(call("cookies_get", {"args": {"urls": [7]}})) == ["cookies of an invalid URL are not allowed: only http and https hosts in allow_domains"]
}

test_cookies_get_every_cookie_denied if {
	not allowed(call("cookies_get", {})) with data.all_domains as true
	not allowed(call("cookies_get", {"args": {"urls": []}})) with data.all_domains as true
	reasons(call("cookies_get", {})) == ["cookies_get needs urls, each of an allowed http or https host; reading every cookie is not allowed"]
}

# ---------------------------------------------------------------------------
# Interactions and safe mode.

test_mutating_tools_denied_in_safe_mode if {
	every tool in ["click", "type", "fill", "press", "select_option", "set_files", "drag", "fill_form", "clipboard_write"] {
		inp := on(tool, "https://example.com/")
		not allowed(inp) with data.allow_domains as ["example.com"]
		sprintf("%s changes the page or the browser, and mutations are off (safe mode)", [tool]) in reasons(inp)
	}
}

test_mutating_tools_allowed_with_mutations_on_allowed_page if {
	every tool in ["click", "type", "fill", "press", "select_option", "set_files", "drag", "fill_form", "clipboard_write"] {
		allowed(on(tool, "https://example.com/")) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	}
}

test_mutating_tools_denied_on_other_page_even_with_mutations if {
	not allowed(on("click", "https://other.test/")) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	not allowed(on("click", "about:blank")) with data.enable_mutations as true
	reasons(on("type", "about:blank")) == ["type changes the page or the browser, and mutations are off (safe mode)", "type is not allowed on about:blank, only on pages of hosts in allow_domains"]
}

test_hover_and_scroll_allowed_in_safe_mode if {
	allowed(on("hover", "https://example.com/")) with data.allow_domains as ["example.com"]
	allowed(on("scroll", "https://example.com/")) with data.allow_domains as ["example.com"]
	not allowed(on("hover", "https://other.test/")) with data.allow_domains as ["example.com"]
}

test_mutating_tools_listed_only_with_mutations if {
	not allowed(listing("click"))
	"click changes the page or the browser, and mutations are off (safe mode)" in reasons(listing("click"))
	allowed(listing("click")) with data.enable_mutations as true
	allowed(listing("hover"))
	not allowed(listing("cookies_set"))
	allowed(listing("cookies_set")) with data.enable_mutations as true
}

test_cookies_set_needs_mutations_and_allowed_scope if {
	by_url := call("cookies_set", {"args": {"cookies": [{"name": "a", "value": "[redacted]", "url": "https://example.com/"}]}})
	not allowed(by_url) with data.allow_domains as ["example.com"]
	allowed(by_url) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	by_domain := call("cookies_set", {"args": {"cookies": [{"name": "a", "value": "[redacted]", "domain": ".a.example.com", "path": "/"}]}})
	allowed(by_domain) with data.allow_domains as ["*.example.com"] with data.enable_mutations as true
	outside := call("cookies_set", {"args": {"cookies": [{"name": "sid", "value": "[redacted]", "domain": "bank.test"}]}})
	not allowed(outside) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	reasons(outside) == ["cookie sid is scoped outside allow_domains"] with data.enable_mutations as true
	none := call("cookies_set", {"args": {}})
	reasons(none) == ["cookies_set needs cookies, each scoped to an allowed http or https url or domain"] with data.enable_mutations as true
}

# ---------------------------------------------------------------------------
# Eval.

test_eval_off_by_default if {
	inp := on("eval", "https://example.com/")
	not allowed(inp) with data.allow_domains as ["example.com"]
	reasons(inp) == ["eval is off"] with data.allow_domains as ["example.com"]
	hints(inp) == ["start chromegate with --unsafe-enable-eval, or set enable_eval to true in the policy data"] with data.allow_domains as ["example.com"]
}

test_eval_with_switch_on_allowed_page_only if {
	allowed(on("eval", "https://example.com/")) with data.allow_domains as ["example.com"] with data.enable_eval as true
	not allowed(on("eval", "https://other.test/")) with data.allow_domains as ["example.com"] with data.enable_eval as true
	not allowed(on("eval", "about:blank")) with data.enable_eval as true
	not allowed(on("eval", "http://127.0.0.1/")) with data.all_domains as true with data.enable_eval as true
}

test_eval_needs_no_mutations if {
	allowed(on("eval", "https://example.com/")) with data.allow_domains as ["example.com"] with data.enable_eval as true with data.enable_mutations as false
}

test_eval_listed_only_with_switch if {
	not allowed(listing("eval"))
	reasons(listing("eval")) == ["eval is off"]
	allowed(listing("eval")) with data.enable_eval as true
}

# ---------------------------------------------------------------------------
# Downloads.

dl(url) := call("download_file", {"args": {"url": url}, "target": chromegate.parse_url(url)})

test_downloads_off_by_default if {
	not allowed(dl("https://example.com/f.zip")) with data.allow_domains as ["example.com"]
	reasons(dl("https://example.com/f.zip")) == ["downloads are off"] with data.allow_domains as ["example.com"]
	not allowed(listing("download_file"))
	allowed(listing("download_file")) with data.enable_downloads as true
}

test_downloads_from_allowed_hosts_only if {
	allowed(dl("https://example.com/f.zip")) with data.allow_domains as ["example.com"] with data.enable_downloads as true
	not allowed(dl("https://other.test/f.zip")) with data.allow_domains as ["example.com"] with data.enable_downloads as true
	reasons(dl("https://other.test/f.zip")) == ["download from other.test is not allowed: host not in allow_domains"] with data.enable_downloads as true
	not allowed(dl("file:///etc/passwd")) with data.enable_downloads as true with data.all_domains as true
	not allowed(dl("about:blank")) with data.enable_downloads as true
	reasons(dl("about:blank")) == ["download from about:blank is not allowed"] with data.enable_downloads as true
	not allowed(dl("http://169.254.169.254/x")) with data.enable_downloads as true with data.all_domains as true
}

test_download_by_click_on_allowed_page if {
	inp := on("download_file", "https://example.com/files")
	allowed(inp) with data.allow_domains as ["example.com"] with data.enable_downloads as true
	not allowed(on("download_file", "https://other.test/")) with data.allow_domains as ["example.com"] with data.enable_downloads as true
}

# ---------------------------------------------------------------------------
# WebMCP page tools.

page_tool(origin, annotations) := {"origin": origin, "name": "search", "annotations": annotations}

tool_call(url, pt) := object.union(on("page_tool_call", url), {"page_tool": pt})

test_page_tools_list_on_allowed_page if {
	allowed(on("page_tools_list", "https://example.com/")) with data.allow_domains as ["example.com"]
	not allowed(on("page_tools_list", "https://other.test/")) with data.allow_domains as ["example.com"]
	allowed(listing("page_tools_list"))
}

test_read_only_page_tool_needs_no_mutations if {
	inp := tool_call("https://example.com/", page_tool("https://example.com", {"readOnlyHint": true}))
	allowed(inp) with data.allow_domains as ["example.com"]
}

test_other_page_tools_need_mutations if {
	inp := tool_call("https://example.com/", page_tool("https://example.com", {}))
	not allowed(inp) with data.allow_domains as ["example.com"]
	allowed(inp) with data.allow_domains as ["example.com"] with data.enable_mutations as true
}

test_consequential_page_tool_needs_mutations if {
	inp := tool_call("https://example.com/", page_tool("https://example.com", {"readOnlyHint": true, "consequentialHint": true}))
	not allowed(inp) with data.allow_domains as ["example.com"]
	reasons(inp) == ["page_tool_call changes the page or the browser, and mutations are off (safe mode)"] with data.allow_domains as ["example.com"]
	allowed(inp) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	listed := object.union(listing("page_tool_call"), {"page_tool": page_tool("https://example.com", {"readOnlyHint": true, "consequentialHint": true})})
	not allowed(listed) with data.allow_domains as ["example.com"]
	allowed(listed) with data.allow_domains as ["example.com"] with data.enable_mutations as true
}

test_page_tools_list_of_every_tab if {
	every_tab := object.union(on("page_tools_list", "https://example.com/"), {"page": null})
	allowed(every_tab)
	calling := object.union(on("page_tool_call", "https://example.com/"), {"page": null, "page_tool": page_tool("https://example.com", {"readOnlyHint": true})})
	not allowed(calling) with data.allow_domains as ["example.com"]
}

test_page_tool_of_another_origin_denied if {
	inp := tool_call("https://example.com/", page_tool("https://other.test", {"readOnlyHint": true}))
	not allowed(inp) with data.allow_domains as ["example.com", "other.test"]
	reasons(inp) == ["page tool search does not belong to an allowed page"] with data.allow_domains as ["example.com", "other.test"]
	missing := on("page_tool_call", "https://example.com/")
	reasons(missing) == ["page_tool_call changes the page or the browser, and mutations are off (safe mode)", "page_tool_call needs page_tool"] with data.allow_domains as ["example.com"]
	reasons(missing) == ["page_tool_call needs page_tool"] with data.allow_domains as ["example.com"] with data.enable_mutations as true
}

test_page_tools_listed_by_origin if {
	allowed(listing("page_tool_call"))
	live := object.union(listing("page_tool_call"), {"page_tool": page_tool("https://example.com", {"readOnlyHint": true})})
	allowed(live) with data.allow_domains as ["example.com"]
	not allowed(live) with data.allow_domains as ["other.test"]
	reasons(live) == ["page tool search does not belong to an allowed page"] with data.allow_domains as ["other.test"]
	writer := object.union(listing("page_tool_call"), {"page_tool": page_tool("https://example.com", {})})
	not allowed(writer) with data.allow_domains as ["example.com"]
	allowed(writer) with data.allow_domains as ["example.com"] with data.enable_mutations as true
}

# ---------------------------------------------------------------------------
# The policy's view of tools matches chromegate's (its tool table, mcp.Tools).

test_every_tool_has_an_action if {
	every tool, action in actions {
		action in policy.known_actions
		tool != ""
	}
}

# ---------------------------------------------------------------------------
# Plugin tools: the plugin's own call needs the mutation switch only when a
# step mutates; each step is decided as its tool, wherever it comes from.

plugin_call(tools) := object.union(base, {"tool": "signup", "action": "plugin", "plugin": {"name": "signup", "step": "", "tools": tools}})

plugin_step(tool, url) := object.union(on(tool, url), {"plugin": {"name": "signup", "step": "s", "tools": ["navigate", tool]}})

test_read_only_plugin_allowed if {
	allowed(plugin_call(["navigate", "get_text"]))
	allowed(object.union(plugin_call(["navigate", "get_text"]), {"phase": "list"}))
}

test_mutating_plugin_needs_mutations if {
	not allowed(plugin_call(["navigate", "click"]))
	not allowed(object.union(plugin_call(["navigate", "click"]), {"phase": "list"}))
	allowed(plugin_call(["navigate", "click"])) with data.enable_mutations as true
	some r in reasons(plugin_call(["navigate", "click"]))
	contains(r, "mutations are off")
	some h in hints(plugin_call(["navigate", "click"]))
	contains(h, "plugin_mutations")
}

test_eval_step_alone_does_not_need_mutations if {
	allowed(plugin_call(["navigate", "eval"]))
}

test_plugin_mutations_allow_only_that_plugin if {
	allowed(plugin_call(["click"])) with data.plugin_mutations as ["signup"]
	not allowed(plugin_call(["click"])) with data.plugin_mutations as ["other"]
	allowed(plugin_step("click", "https://example.com/")) with data.plugin_mutations as ["signup"] with data.allow_domains as ["example.com"]
	not allowed(on("click", "https://example.com/")) with data.plugin_mutations as ["signup"] with data.allow_domains as ["example.com"]
}

test_plugin_step_is_decided_as_its_tool if {
	not allowed(plugin_step("get_text", "https://example.com/"))
	allowed(plugin_step("get_text", "https://example.com/")) with data.allow_domains as ["example.com"]
	not allowed(plugin_step("click", "https://other.example/")) with data.plugin_mutations as ["signup"] with data.allow_domains as ["example.com"]
}

test_plugin_mutations_not_a_list_counts_as_none if {
	not allowed(plugin_call(["click"])) with data.plugin_mutations as "signup"
}

# ---------------------------------------------------------------------------
# Dialogs: dialog_answer is an interaction on the dialog's page; accepting
# needs mutations, dismissing never does.

answer(accept, url, dialog) := object.union(base, {
	"tool": "dialog_answer", "action": "interact", "args": {"accept": accept},
	"page": object.union(chromegate.parse_url(url), {"origin": "n/a"}),
	"dialog": dialog,
})

delete_all := {"type": "confirm", "message": "Delete all 1,204 records? This cannot be undone."}

test_dialog_accept_needs_mutations if {
	inp := answer(true, "https://example.com/", delete_all)
	not allowed(inp) with data.allow_domains as ["example.com"]
	"dialog_answer changes the page or the browser, and mutations are off (safe mode)" in reasons(inp) with data.allow_domains as ["example.com"]
	allowed(inp) with data.allow_domains as ["example.com"] with data.enable_mutations as true
}

test_dialog_dismiss_needs_no_mutations if {
	allowed(answer(false, "https://example.com/", delete_all)) with data.allow_domains as ["example.com"]
	# An accept spelt as anything but false is an accept.
	not allowed(answer("false", "https://example.com/", delete_all)) with data.allow_domains as ["example.com"]
	not allowed(answer(null, "https://example.com/", delete_all)) with data.allow_domains as ["example.com"]
}

test_dialog_answer_only_on_allowed_pages if {
	not allowed(answer(false, "https://other.test/", delete_all)) with data.allow_domains as ["example.com"]
	not allowed(answer(true, "https://other.test/", delete_all)) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	not allowed(answer(false, "about:blank", delete_all))
}

test_dialog_answer_listed_in_safe_mode if {
	allowed(object.union(base, {"phase": "list", "tool": "dialog_answer", "action": "interact"}))
}

test_dialog_accept_refused_by_pattern if {
	inp := answer(true, "https://example.com/", delete_all)
	not allowed(inp) with data.allow_domains as ["example.com"] with data.enable_mutations as true with data.refuse_dialogs as ["(?i)\\bdelete"]
	reasons(inp) == ["accepting this dialog is refused by the operator (refuse_dialogs): a person must answer it"] with data.allow_domains as ["example.com"] with data.enable_mutations as true with data.refuse_dialogs as ["(?i)\\bdelete"]
	allowed(answer(false, "https://example.com/", delete_all)) with data.allow_domains as ["example.com"] with data.refuse_dialogs as ["(?i)\\bdelete"]
	allowed(answer(true, "https://example.com/", {"type": "confirm", "message": "Save?"})) with data.allow_domains as ["example.com"] with data.enable_mutations as true with data.refuse_dialogs as ["(?i)\\bdelete"]
	# The pattern reads the message only: a page cannot dodge it through the type.
	not allowed(answer(true, "https://example.com/", {"type": "alert", "message": "DELETE everything"})) with data.allow_domains as ["example.com"] with data.enable_mutations as true with data.refuse_dialogs as ["(?i)\\bdelete"]
}

test_dialog_refuse_patterns_must_be_a_list if {
	allowed(answer(true, "https://example.com/", delete_all)) with data.allow_domains as ["example.com"] with data.enable_mutations as true with data.refuse_dialogs as "(?i)delete"
}

# ---------------------------------------------------------------------------
# Emulation: emulate is an interaction on the tab's page; a user agent, a
# position or a phone preset (which carries a user agent) is a mutation.

emulating(url, a) := object.union(base, {
	"tool": "emulate", "action": "interact", "args": a,
	"page": object.union(chromegate.parse_url(url), {"origin": "n/a"}),
})

test_emulate_rendering_allowed_in_safe_mode if {
	allowed(emulating("https://example.com/", {"width": 390, "height": 664, "color_scheme": "dark", "timezone": "Asia/Tokyo", "network": "slow-3g"})) with data.allow_domains as ["example.com"]
	allowed(emulating("https://example.com/", {"device": "Desktop 1080p"})) with data.allow_domains as ["example.com"]
	allowed(emulating("https://example.com/", {"reset": true})) with data.allow_domains as ["example.com"]
	allowed(emulating("https://example.com/", {})) with data.allow_domains as ["example.com"]
	allowed(emulating("https://example.com/", {"user_agent": ""})) with data.allow_domains as ["example.com"]
}

test_emulate_identity_needs_mutations if {
	every a in [{"user_agent": "x"}, {"latitude": 0, "longitude": 0}, {"device": "Pixel 7"}, {"reset": true, "device": "iPhone 13"}] {
		inp := emulating("https://example.com/", a)
		not allowed(inp) with data.allow_domains as ["example.com"]
		"emulate changes the page or the browser, and mutations are off (safe mode)" in reasons(inp) with data.allow_domains as ["example.com"]
	}
}

test_emulate_identity_allowed_with_mutations if {
	allowed(emulating("https://example.com/", {"user_agent": "x", "latitude": 1, "longitude": 2})) with data.allow_domains as ["example.com"]
		with data.enable_mutations as true
}

test_emulate_only_on_allowed_pages if {
	not allowed(emulating("https://other.test/", {"width": 400, "height": 400})) with data.allow_domains as ["example.com"]
	not allowed(emulating("about:blank", {"color_scheme": "dark"})) with data.allow_domains as ["example.com"]
}

test_emulate_listed_in_safe_mode if {
	allowed(object.union(base, {"phase": "list", "tool": "emulate", "action": "interact"}))
}

# ---------------------------------------------------------------------------
# The console and PDF (issue 15, observe): reads of the tab's page, so only
# of an allowed one, without mutations; listed like every read.

test_console_and_pdf_are_reads_of_the_page if {
	every tool in ["console_messages", "pdf"] {
		allowed(on(tool, "https://docs.example.com/x")) with data.allow_domains as ["*.example.com"]
		not allowed(on(tool, "https://other.test/x")) with data.allow_domains as ["*.example.com"]
		not allowed(call(tool, {})) with data.allow_domains as ["*.example.com"]
		allowed(listing(tool))
	}
	reasons(on("console_messages", "https://other.test/x")) == ["console_messages is not allowed on other.test: host not in allow_domains (the tab shows a page outside the policy; navigate to an allowed page first)"] with data.allow_domains as ["example.com"]
}

test_console_and_pdf_never_on_local_pages if {
	not allowed(on("pdf", "file:///etc/passwd")) with data.all_domains as true
	not allowed(on("console_messages", "http://127.0.0.1:9222/json")) with data.allow_domains as ["*"]
}

# ---------------------------------------------------------------------------
# Calls at coordinates (click, hover, scroll, drag at x,y): decided per
# point with page the document under it and input.point set; no rule of
# their own, they are decided as the same action by ref.

at(tool, url) := object.union(on(tool, url), {"args": {"x": 10, "y": 20}, "point": {"x": 10, "y": 20}})

test_point_on_an_allowed_document_is_allowed_like_by_ref if {
	every tool in ["click", "drag"] {
		allowed(at(tool, "https://example.com/")) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	}
	every tool in ["hover", "scroll"] {
		allowed(at(tool, "https://example.com/")) with data.allow_domains as ["example.com"]
	}
}

test_point_on_a_frame_of_a_denied_origin_is_denied if {
	every tool in ["click", "hover", "scroll", "drag"] {
		not allowed(at(tool, "https://widget.example.net/pay")) with data.allow_domains as ["example.com"] with data.enable_mutations as true
	}
}

test_point_click_without_mutations_is_denied_like_by_ref if {
	not allowed(at("click", "https://example.com/")) with data.allow_domains as ["example.com"]
	reasons(at("click", "https://example.com/")) == reasons(on("click", "https://example.com/")) with data.allow_domains as ["example.com"]
}
