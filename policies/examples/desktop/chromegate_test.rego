package chromegate_test

import data.chromegate as policy

base := {
	"version": 1, "phase": "call", "read_only": false, "args": {},
	"target": null, "page": null, "backend": "ext",
	"principal": {"name": "me", "roles": [], "transport": "stdio"},
	"page_tool": null,
}

call(tool, action, extra) := object.union(object.union(base, {"tool": tool, "action": action}), extra)

nav(url) := call("navigate", "navigate", {"target": chromegate.parse_url(url)})

on(tool, action, url) := call(tool, action, {"page": chromegate.parse_url(url)})

allowed(inp) if policy.decision.allow with input as inp

decision(inp) := d if {
	d := policy.decision with input as inp
}

test_listed_hosts if {
	allowed(nav("https://github.com/openai"))
	allowed(nav("https://gist.github.com/x"))
	allowed(nav("https://en.wikipedia.org/wiki/Rego"))
	allowed(nav("about:blank"))
	not allowed(nav("https://example.com/"))
	decision(nav("https://example.com/")) == {
		"allow": false,
		"reasons": ["navigation to example.com is not allowed: not in allow_domains"],
		"hints": ["add example.com to allow_domains (or start chromegate with --allow-domain example.com)"],
	}
}

test_never_domains_win if {
	not allowed(nav("https://online.bank.example/")) with data.allow_domains as ["*"]
	decision(nav("https://mail.google.com/")) == {
		"allow": false,
		"reasons": ["navigation to mail.google.com is not allowed: it is in never_domains"],
		"hints": [],
	} with data.allow_domains as ["*.google.com"]
	not allowed(on("get_text", "read", "https://accounts.google.com/")) with data.allow_domains as ["*.google.com"]
	allowed(nav("https://docs.google.com/")) with data.allow_domains as ["*.google.com"]
}

test_local_only_when_listed_exactly if {
	not allowed(nav("http://localhost:8888/")) with data.allow_domains as ["*"]
	allowed(nav("http://localhost:8888/")) with data.allow_domains as ["localhost"]
	not allowed(nav("http://192.168.1.1/")) with data.allow_domains as ["*"]
	allowed(nav("http://192.168.1.1/")) with data.allow_domains as ["192.168.1.1"]
}

test_dangerous_schemes if {
	decision(nav("file:///Users/me/.ssh/id_rsa")).reasons == ["navigation to a file: URL is not allowed: file: URLs are not allowed"]
	decision(on("get_text", "read", "chrome://settings/passwords")).reasons == ["get_text is not allowed on settings: chrome: URLs are not allowed"]
	not allowed(nav("chrome://settings/passwords"))
}

test_acting_on_listed_pages if {
	every tool in ["click", "type", "fill", "press", "select_option", "drag", "fill_form", "clipboard_write", "hover", "scroll"] {
		allowed(on(tool, "interact", "https://github.com/"))
	}
	allowed(call("tab_close", "tabs", {}))
	not allowed(on("click", "interact", "about:blank"))
	not allowed(on("click", "interact", "https://example.com/"))
	decision(on("click", "interact", "https://example.com/")).reasons == ["click is not allowed on example.com: not in allow_domains"]
}

test_reads_on_listed_pages if {
	allowed(on("screenshot", "read", "https://github.com/"))
	allowed(on("get_text", "read", "about:blank"))
	not allowed(on("get_text", "read", "https://example.com/"))
	not allowed(call("get_text", "read", {}))
}

test_never_tools if {
	every tool in ["eval", "download_file", "set_files", "cookies_get", "cookies_set"] {
		inp := on(tool, "interact", "https://github.com/")
		not allowed(inp) with data.enable_eval as true
		decision(inp).reasons == [sprintf("%s is never allowed on this desktop", [tool])]
		not allowed(object.union(inp, {"phase": "list"}))
	}
}

test_page_tools_on_listed_pages if {
	inp := object.union(on("page_tool_call", "page_tool", "https://github.com/"), {"page_tool": {"origin": "https://github.com", "name": "search", "annotations": {}}})
	allowed(inp)
	allowed(object.union(base, {"phase": "list", "tool": "page_tool_call", "action": "page_tool"}))
}

test_history_and_status if {
	allowed(call("back", "navigate", {}))
	allowed(call("chrome_status", "status", {}))
	decision(call("navigate", "navigate", {})).reasons == ["no rule of the desktop policy allows navigate"]
}

test_malformed_data if {
	not allowed(nav("https://github.com/")) with data.allow_domains as "github.com"
	allowed(nav("https://online.bank.example/")) with data.allow_domains as ["*"] with data.never_domains as "*.bank.example"
}

plugin(tools) := call("post_status", "plugin", {"plugin": {"name": "post_status", "step": "", "tools": tools}})

test_plugin_allowed_unless_a_step_never_is if {
	allowed(plugin(["navigate", "wait_for", "fill_form"]))
	allowed(object.union(plugin(["navigate", "click"]), {"phase": "list"}))
	not allowed(plugin(["navigate", "eval"]))
	decision(plugin(["navigate", "eval"])).reasons == ["plugin post_status calls a tool that is never allowed on this desktop"]
	step := object.union(on("fill_form", "interact", "https://mail.google.com/"), {"plugin": {"name": "post_status", "step": "s", "tools": ["fill_form"]}})
	not allowed(step)
}

# ---------------------------------------------------------------------------
# Requests the pages make: the target is the request's origin.

req(url, extra) := object.union(
	object.union(base, {
		"phase": "request", "tool": "", "action": "request", "read_only": true,
		"target": chromegate.parse_url(url),
		"request": {
			"url": url, "method": "GET", "resource_type": "script", "navigation": false, "top_level": false,
			"frame_origin": "https://github.com", "page_origin": "https://github.com", "address": "", "via": "extension",
		},
		"session": "",
	}),
	extra,
)

frame(url) := req(url, {"request": {"resource_type": "document", "navigation": true}})

popup(url) := req(url, {"request": {"resource_type": "document", "navigation": true, "top_level": true}})

test_pages_load_from_public_hosts if {
	allowed(req("https://github.githubassets.com/assets/app.js", {}))
	allowed(req("https://fonts.gstatic.com/s/x.woff2", {"request": {"resource_type": "font"}}))
	allowed(req("wss://alive.github.com/_sockets", {"request": {"resource_type": "websocket"}}))
	allowed(req("https://gist.github.com/x.js", {"target": {"ip_class": "public"}, "request": {"address": "140.82.112.4", "via": "proxy"}}))
}

test_requests_never_reach_never_domains if {
	inp := req("https://mail.google.com/mail/u/0/?ui=2", {"request": {"method": "POST", "resource_type": "fetch"}})
	not allowed(inp)
	decision(inp).reasons == ["request to mail.google.com is not allowed: it is in never_domains"]
	not allowed(req("https://online.bank.example/transfer", {})) with data.allow_domains as ["*"]
}

test_requests_to_your_network_only_when_listed_exactly if {
	inp := req("http://192.168.1.1/admin", {})
	not allowed(inp) with data.allow_domains as ["*"]
	decision(inp).reasons == ["request to 192.168.1.1 is not allowed: your machine or network, reachable only at hosts listed exactly in allow_domains"]
	allowed(inp) with data.allow_domains as ["192.168.1.1"]
	rebound := req("http://evil.example/", {"target": {"ip_class": "loopback"}, "request": {"address": "127.0.0.1", "via": "proxy"}})
	not allowed(rebound) with data.allow_domains as ["*"]
	not allowed(req("http://169.254.169.254/latest/", {}))
}

test_requests_of_other_schemes_denied if {
	not allowed(req("javascript:alert(1)", {}))
	decision(req("javascript:alert(1)", {})).reasons == ["request to a javascript: URL is not allowed: only http, https, ws and wss requests leave the browser"]
}

test_frames_and_popups_go_where_navigation_may if {
	allowed(frame("https://gist.github.com/embed"))
	allowed(popup("about:blank"))
	not allowed(popup("https://example.com/"))
	decision(popup("https://example.com/")).reasons == ["navigation to example.com is not allowed: not in allow_domains"]
	not allowed(frame("https://accounts.google.com/signin")) with data.allow_domains as ["*.google.com"]
	decision(frame("https://accounts.google.com/signin")).reasons == ["navigation to accounts.google.com is not allowed: it is in never_domains"]
}

test_request_no_rule_fallback if {
	inp := object.union(req("https://github.githubassets.com/app.js", {}), {"version": 2})
	decision(inp).reasons == ["no rule of the desktop policy allows this request"]
}

test_secret_only_on_its_origin if {
	page := object.union(chromegate.parse_url("https://github.com/login"), {"origin": "https://github.com"})
	inp := call("fill", "interact", {"page": page, "secrets": ["PASSWORD"]})
	allowed(inp) with data.secret_origins as {"PASSWORD": ["https://github.com"]}
	not allowed(inp) with data.secret_origins as {"PASSWORD": ["https://gist.github.com"]}
	decision(inp).reasons == ["secret PASSWORD may not be typed on https://github.com; it is bound to https://gist.github.com"] with data.secret_origins as {"PASSWORD": ["https://gist.github.com"]}
	not allowed(inp)
}
