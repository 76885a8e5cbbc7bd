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
