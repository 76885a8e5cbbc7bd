package chromegate_test

import data.chromegate as policy

base := {
	"version": 1, "phase": "call", "read_only": false, "args": {},
	"target": null, "page": null, "backend": "cdp",
	"principal": {"name": "ci-job", "roles": [], "transport": "stdio"},
	"page_tool": null,
}

call(tool, action, extra) := object.union(object.union(base, {"tool": tool, "action": action}), extra)

nav(url) := call("navigate", "navigate", {"target": chromegate.parse_url(url)})

on(tool, action, url) := call(tool, action, {"page": chromegate.parse_url(url)})

allowed(inp) if policy.decision.allow with input as inp

reasons(inp) := r if {
	r := policy.decision.reasons with input as inp
}

test_navigate_test_hosts if {
	allowed(nav("http://localhost:3000/login"))
	allowed(nav("http://127.0.0.1:8080/"))
	allowed(nav("https://shop.test/cart"))
	allowed(nav("https://a.b.staging.example.com/"))
	allowed(nav("about:blank"))
}

test_navigate_elsewhere_denied if {
	not allowed(nav("https://example.com/"))
	reasons(nav("https://example.com/")) == ["navigation to example.com is not allowed: not a test host"]
	not allowed(nav("http://[::1]:3000/"))
	not allowed(nav("http://169.254.169.254/"))
	not allowed(nav("file:///etc/passwd"))
	not allowed(nav("http://2130706434/"))
}

test_wildcard_never_matches_addresses if {
	not allowed(nav("http://10.0.0.1/")) with data.test_hosts as ["*"]
	allowed(nav("https://anything.example/")) with data.test_hosts as ["*"]
}

test_allow_domain_flag_adds_hosts if {
	allowed(nav("https://example.com/")) with data.allow_domains as ["example.com"]
}

test_history_allowed if {
	allowed(call("back", "navigate", {}))
	not allowed(call("navigate", "navigate", {}))
}

test_interactions_allowed_on_test_hosts if {
	every tool in ["click", "type", "fill", "press", "select_option", "drag", "fill_form", "hover"] {
		allowed(on(tool, "interact", "http://localhost:3000/"))
	}
	not allowed(on("click", "interact", "https://example.com/"))
	reasons(on("click", "interact", "https://example.com/")) == ["click is not allowed on example.com: not a test host"]
	reasons(call("click", "interact", {})) == ["click is not allowed on an unknown page: not a test host"]
}

test_reads_allowed_on_test_hosts if {
	allowed(on("screenshot", "read", "https://shop.test/"))
	allowed(on("get_text", "read", "about:blank"))
	not allowed(on("get_text", "read", "https://example.com/"))
}

test_forbidden_tools_never if {
	every tool in ["eval", "set_files", "download_file", "cookies_get", "cookies_set"] {
		not allowed(on(tool, "interact", "http://localhost:3000/"))
	}
	reasons(on("eval", "eval", "http://localhost:3000/")) == ["eval is never allowed for the CI agent"]
}

test_status_and_tabs if {
	allowed(call("chrome_status", "status", {}))
	allowed(call("tab_close", "tabs", {}))
}

test_http_principal_needs_ci_role if {
	inp := object.union(nav("http://localhost:3000/"), {"principal": {"name": "intruder", "roles": ["dev"], "transport": "http"}})
	not allowed(inp)
	reasons(inp) == ["principal intruder is not a CI agent (needs the ci role)"]
	allowed(object.union(inp, {"principal": {"name": "runner-7", "roles": ["ci"], "transport": "http"}}))
}

test_listing if {
	allowed(object.union(base, {"phase": "list", "tool": "click", "action": "interact"}))
	not allowed(object.union(base, {"phase": "list", "tool": "eval", "action": "eval"}))
	not allowed(object.union(base, {"phase": "list", "tool": "set_files", "action": "interact"}))
}

test_no_rule_fallback if {
	inp := call("navigate", "navigate", {"phase": "other"})
	reasons(inp) == ["no rule of the CI policy allows navigate"]
}

test_malformed_data_allows_nothing_more if {
	not allowed(nav("http://localhost:3000/")) with data.test_hosts as "localhost"
	allowed(nav("http://localhost:3000/")) with data.allow_domains as "example.com"
	not allowed(nav("https://example.com/")) with data.allow_domains as "example.com"
}

plugin(tools) := call("signup", "plugin", {"plugin": {"name": "signup", "step": "", "tools": tools}})

test_plugin_allowed_unless_a_step_is_forbidden if {
	allowed(plugin(["navigate", "fill_form", "get_text"]))
	allowed(object.union(plugin(["navigate", "click"]), {"phase": "list"}))
	not allowed(plugin(["navigate", "eval"]))
	not allowed(object.union(plugin(["download_file"]), {"phase": "list"}))
	reasons(plugin(["navigate", "eval"])) == ["plugin signup calls a tool never allowed for the CI agent"]
}

test_plugin_steps_decided_as_their_tools if {
	step := object.union(on("click", "interact", "https://example.com/"), {"plugin": {"name": "signup", "step": "s", "tools": ["click"]}})
	not allowed(step)
	allowed(step) with data.allow_domains as ["example.com"]
}

# ---------------------------------------------------------------------------
# Requests the application's pages make: the target is the request's
# origin, classed by the address the proxy resolved when it did.

req(url, extra) := object.union(
	object.union(base, {
		"phase": "request", "tool": "", "action": "request", "read_only": true,
		"target": chromegate.parse_url(url),
		"request": {
			"url": url, "method": "GET", "resource_type": "script", "navigation": false, "top_level": false,
			"frame_origin": "http://localhost:3000", "page_origin": "http://localhost:3000", "address": "", "via": "proxy",
		},
		"session": "",
	}),
	extra,
)

resolved(url, class) := req(url, {"target": {"ip_class": class}})

frame(url) := req(url, {"request": {"resource_type": "document", "navigation": true}})

test_requests_to_test_hosts_and_public_hosts if {
	allowed(req("http://localhost:3000/app.js", {}))
	allowed(req("ws://127.0.0.1:3000/hmr", {"request": {"resource_type": "websocket"}}))
	allowed(req("https://shop.test/api/cart", {"request": {"method": "POST", "resource_type": "fetch"}}))
	allowed(resolved("https://cdn.staging.example.com/app.css", "public"))
	allowed(req("https://fonts.gstatic.com/s/roboto.woff2", {}))
	allowed(resolved("https://fonts.gstatic.com/s/roboto.woff2", "public"))
}

test_requests_to_the_runners_network_denied if {
	not allowed(req("http://169.254.169.254/latest/meta-data/", {}))
	reasons(req("http://169.254.169.254/latest/meta-data/", {})) == ["request to 169.254.169.254 is not allowed: a link_local address that is not a test host (list it exactly in test_hosts)"]
	not allowed(req("http://127.0.0.2:5432/", {}))
	not allowed(req("http://10.0.0.1/", {}))

	# A test-host name that resolved to this machine must be listed exactly.
	not allowed(resolved("http://app.test:3000/", "loopback"))
	allowed(resolved("http://app.test:3000/", "loopback")) with data.test_hosts as ["app.test"]
}

test_requests_of_other_schemes_denied if {
	not allowed(req("javascript:alert(1)", {}))
	reasons(req("javascript:alert(1)", {})) == ["request to a javascript: URL is not allowed: only http, https, ws and wss requests leave the browser"]
	not allowed(req("file:///etc/passwd", {}))
}

test_frames_and_popups_go_where_navigation_may if {
	allowed(frame("http://localhost:3000/embed"))
	allowed(frame("about:blank"))
	not allowed(frame("https://example.com/"))
	reasons(frame("https://example.com/")) == ["navigation to example.com is not allowed: not a test host"]
	allowed(frame("https://example.com/")) with data.allow_domains as ["example.com"]
}

test_requests_need_a_ci_principal if {
	inp := object.union(req("http://localhost:3000/app.js", {}), {"principal": {"name": "intruder", "roles": [], "transport": "http"}})
	not allowed(inp)
	reasons(inp) == ["principal intruder is not a CI agent (needs the ci role)"]
}

test_request_no_rule_fallback if {
	inp := object.union(req("http://localhost:3000/app.js", {}), {"version": 2})
	not allowed(inp)
	reasons(inp) == ["no rule of the CI policy allows this request"]
}

test_secret_only_on_its_origin if {
	page := object.union(chromegate.parse_url("http://localhost:3000/login"), {"origin": "http://localhost:3000"})
	inp := call("type", "interact", {"page": page, "secrets": ["PASSWORD"]})
	allowed(inp) with data.secret_origins as {"PASSWORD": ["http://localhost:3000"]}
	not allowed(inp) with data.secret_origins as {"PASSWORD": ["https://shop.test"]}
	reasons(inp) == ["secret PASSWORD may not be typed on http://localhost:3000; it is bound to https://shop.test"] with data.secret_origins as {"PASSWORD": ["https://shop.test"]}
	not allowed(inp)
}

state_origin(tool, op, origin) := call(tool, {"state_save": "read", "state_load": "interact"}[tool], {
	"args": {"name": "login"},
	"target": chromegate.parse_url(origin),
	"state": {"op": op, "origin": origin, "source": "serve"},
})

test_storage_state_of_test_hosts_only if {
	allowed(call("state_load", "interact", {"args": {"name": "login"}}))
	allowed(call("state_save", "read", {"args": {"name": "login"}}))
	allowed(call("state_list", "read", {}))
	allowed(state_origin("state_load", "load", "http://localhost:3000"))
	allowed(state_origin("state_save", "save", "https://shop.test"))
	not allowed(state_origin("state_load", "load", "https://accounts.example.com"))
	reasons(state_origin("state_load", "load", "https://accounts.example.com")) == ["the state of accounts.example.com is not loaded: not a test host"]
	not allowed(state_origin("state_load", "load", "http://10.0.0.1"))
}
