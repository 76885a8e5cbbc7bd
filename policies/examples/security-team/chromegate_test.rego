package chromegate_test

import data.chromegate as policy

analyst(roles) := {"name": "analyst", "roles": roles, "transport": "http"}

base := {
	"version": 1, "phase": "call", "read_only": true, "args": {},
	"target": null, "page": null, "backend": "cdp",
	"principal": analyst(["appsec"]), "page_tool": null,
}

call(tool, action, extra) := object.union(object.union(base, {"tool": tool, "action": action}), extra)

nav(url) := call("navigate", "navigate", {"target": chromegate.parse_url(url)})

on(tool, action, url) := call(tool, action, {"page": chromegate.parse_url(url)})

as_roles(inp, roles) := object.union(inp, {"principal": analyst(roles)})

allowed(inp) if policy.decision.allow with input as inp

reasons(inp) := r if {
	r := policy.decision.reasons with input as inp
}

test_roles_decide_hosts if {
	allowed(nav("https://www.example.com/"))
	not allowed(nav("https://urlscan.io/"))
	allowed(as_roles(nav("https://urlscan.io/"), ["threat-intel"]))
	allowed(as_roles(nav("https://urlscan.io/"), ["appsec", "threat-intel"]))
	not allowed(as_roles(nav("https://www.example.com/"), ["auditor"]))
	allowed(as_roles(nav("https://intranet.example.com/"), ["auditor"]))
}

test_other_host_denied_with_roles_named if {
	not allowed(nav("https://other.test/"))
	reasons(nav("https://other.test/")) == ["navigation to other.test is not allowed for roles appsec"]
}

test_no_role_no_hosts if {
	inp := as_roles(nav("https://www.example.com/"), [])
	not allowed(inp)
	reasons(inp) == ["principal analyst has no role in role_domains"]
	not allowed(as_roles(nav("https://www.example.com/"), ["unknown-role"]))
}

test_local_addresses_never if {
	every u in ["http://127.0.0.1/", "http://localhost/", "http://10.0.0.1/", "http://169.254.169.254/"] {
		not allowed(nav(u)) with data.role_domains as {"appsec": ["*", "127.0.0.1", "localhost", "10.0.0.1", "169.254.169.254"]}
	}
}

test_reads_on_role_hosts if {
	every tool in ["get_text", "get_html", "snapshot", "screenshot", "read_as_markdown", "extract_links", "query", "wait_for", "network_requests", "network_request", "console_messages"] {
		allowed(on(tool, "read", "https://app.example.com/"))
	}
	allowed(on("screenshot", "read", "about:blank"))
	not allowed(on("get_text", "read", "https://urlscan.io/"))
	reasons(on("get_text", "read", "https://urlscan.io/")) == ["get_text is not allowed on urlscan.io for roles appsec"]
	not allowed(call("get_text", "read", {}))
}

test_hover_scroll_allowed if {
	allowed(on("hover", "interact", "https://app.example.com/"))
	allowed(on("scroll", "interact", "https://app.example.com/"))
}

test_everything_else_never if {
	every tool in ["click", "type", "fill", "press", "select_option", "set_files", "drag", "fill_form", "clipboard_write", "cookies_get", "cookies_set", "eval", "download_file", "page_tool_call", "tab_close"] {
		inp := on(tool, "interact", "https://app.example.com/")
		not allowed(inp) with data.enable_mutations as true with data.enable_eval as true
		reasons(inp) == [sprintf("%s is not allowed: this team's agents only look", [tool])]
		not allowed(object.union(inp, {"phase": "list"}))
	}
}

test_history_status_tabs if {
	allowed(call("back", "navigate", {}))
	not allowed(call("navigate", "navigate", {}))
	reasons(call("navigate", "navigate", {})) == ["no rule of the security-team policy allows navigate"]
	allowed(call("chrome_status", "status", {}))
	allowed(call("tabs_list", "tabs", {}))
	allowed(object.union(base, {"phase": "list", "tool": "screenshot", "action": "read"}))
}

test_page_tools_list_on_role_hosts if {
	allowed(on("page_tools_list", "page_tool", "https://app.example.com/"))
	not allowed(on("page_tools_list", "page_tool", "https://other.test/"))
}

plugin(tools) := call("triage", "plugin", {"plugin": {"name": "triage", "step": "", "tools": tools}})

test_looking_plugin_allowed if {
	allowed(plugin(["navigate", "snapshot", "screenshot"]))
	allowed(object.union(plugin(["navigate", "get_text"]), {"phase": "list"}))
	step := object.union(on("get_text", "read", "https://urlscan.io/"), {"plugin": {"name": "triage", "step": "s", "tools": ["get_text"]}})
	not allowed(step)
	allowed(as_roles(step, ["threat-intel"]))
}

test_acting_plugin_denied if {
	not allowed(plugin(["navigate", "click"]))
	not allowed(object.union(plugin(["fill_form"]), {"phase": "list"}))
	reasons(plugin(["navigate", "click"])) == ["triage is not allowed: this team's agents only look"]
}

# ---------------------------------------------------------------------------
# Requests the pages make, under strict egress (data.json): the target is
# the request's origin, classed by the address the proxy resolved.

req(url, extra) := object.union(
	object.union(base, {
		"phase": "request", "tool": "", "action": "request",
		"target": chromegate.parse_url(url),
		"request": {
			"url": url, "method": "GET", "resource_type": "script", "navigation": false, "top_level": false,
			"frame_origin": "https://app.example.com", "page_origin": "https://app.example.com", "address": "", "via": "proxy",
		},
		"session": "",
	}),
	extra,
)

resolved(url, class) := req(url, {"target": {"ip_class": class}})

frame(url) := req(url, {"request": {"resource_type": "document", "navigation": true}})

test_requests_to_role_hosts_and_asset_hosts if {
	allowed(req("https://app.example.com/app.js", {}))
	allowed(resolved("https://static.example.com/app.css", "public"))
	allowed(req("wss://app.example.com/live", {"request": {"resource_type": "websocket"}}))
	allowed(req("https://fonts.gstatic.com/s/x.woff2", {"request": {"resource_type": "font"}}))
	allowed(resolved("https://cdn.jsdelivr.net/npm/x.js", "public"))
	allowed(as_roles(req("https://urlscan.io/api/v1/result", {}), ["threat-intel"]))
}

test_strict_egress_denies_every_other_host if {
	inp := req("https://collector.attacker.test/beacon?d=secret", {"request": {"method": "POST", "resource_type": "ping"}})
	not allowed(inp)
	reasons(inp) == ["request to collector.attacker.test is not allowed: strict egress allows only the hosts of roles appsec and asset_domains"]
	not allowed(req("https://urlscan.io/api/v1/result", {}))
	not allowed(req("http://93.184.216.34/x", {})) with data.asset_domains as ["*"]
}

test_without_strict_egress_public_hosts_allowed if {
	allowed(req("https://collector.attacker.test/beacon", {})) with data.strict_egress as false
	not allowed(req("https://fonts.gstatic.com/x", {})) with data.asset_domains as "fonts.gstatic.com"
}

test_requests_never_reach_local_addresses if {
	every inp in [
		req("http://127.0.0.1:9222/json", {}),
		req("http://169.254.169.254/latest/meta-data/", {}),
		req("http://10.0.0.1/", {}),
		resolved("https://rebind.example.com/", "loopback"),
		resolved("https://intranet.example.com/", "private"),
	] {
		not allowed(inp) with data.role_domains as {"appsec": ["*", "127.0.0.1", "10.0.0.1", "169.254.169.254", "intranet.example.com"]} with data.strict_egress as false
	}
	reasons(resolved("https://rebind.example.com/", "loopback")) == ["request to rebind.example.com is not allowed: local and private addresses are never reachable"]
}

test_requests_of_other_schemes_denied if {
	not allowed(req("data:text/javascript,1", {}))
	reasons(req("data:text/javascript,1", {})) == ["request to a data: URL is not allowed: only http, https, ws and wss requests leave the browser"]
}

test_frames_and_popups_go_where_the_roles_may if {
	allowed(frame("https://www.example.com/embed"))
	allowed(frame("about:blank"))
	not allowed(frame("https://fonts.gstatic.com/"))
	reasons(frame("https://fonts.gstatic.com/")) == ["navigation to fonts.gstatic.com is not allowed for roles appsec"]
	allowed(as_roles(frame("https://urlscan.io/"), ["threat-intel"]))
}

test_request_no_rule_fallback if {
	inp := object.union(req("https://app.example.com/app.js", {}), {"version": 2})
	reasons(inp) == ["no rule of the security-team policy allows this request"]
}
