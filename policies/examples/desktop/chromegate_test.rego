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
