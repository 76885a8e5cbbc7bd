# Unit tests of the default policy's request phase, secrets and storage
# state; the helpers are chromegate_test.rego's (`chromegate policy test`).
package chromegate_test

import data.chromegate as policy

# ---------------------------------------------------------------------------
# Requests a page makes on its own (phase "request"). The target is the
# request's origin; its ip_class is the resolved address's when the proxy
# resolved the name, else the URL host's. Only request.url holds the path.

origin(t) := object.union(t, {"url": sprintf("%s://%s/", [t.scheme, t.host])}) if t.host != ""

origin(t) := t if t.host == ""

req(url, extra) := object.union(
	object.union(base, {
		"phase": "request", "tool": "", "action": "request", "read_only": true,
		"target": origin(chromegate.parse_url(url)),
		"request": {
			"url": url, "method": "GET", "resource_type": "script", "navigation": false, "top_level": false,
			"frame_origin": "https://example.com", "page_origin": "https://example.com", "address": "", "via": "proxy",
		},
		"session": "",
	}),
	extra,
)

# A name the proxy resolved: ip_class is the address's.
resolved(url, class, address) := req(url, {"target": {"ip_class": class}, "request": {"address": address}})

# A document load: a popup (a new top-level page) or an iframe.
popup(url) := req(url, {"request": {"resource_type": "document", "navigation": true, "top_level": true, "page_origin": ""}})

iframe(url) := req(url, {"request": {"resource_type": "document", "navigation": true}})

test_request_public_hosts_allowed_by_default if {
	allowed(req("https://cdn.example.net/lib.js?v=2", {}))
	allowed(resolved("https://cdn.example.net/lib.js", "public", "93.184.216.34"))
	allowed(req("http://93.184.216.34/pixel.gif", {"request": {"resource_type": "image"}}))
	allowed(req("https://api.example.net/v1", {"request": {"method": "POST", "resource_type": "fetch"}}))
	d := policy.decision with input as req("https://cdn.example.net/lib.js", {})
	d == {"allow": true, "reasons": [], "hints": [], "ask": []}
}

test_request_websockets_allowed_like_web_requests if {
	allowed(req("wss://live.example.net/socket", {"request": {"resource_type": "websocket"}}))
	allowed(req("ws://live.example.net/socket", {"request": {"resource_type": "websocket"}}))
	local := resolved("ws://allowed.test:8080/socket", "loopback", "127.0.0.1")
	not allowed(local)
	reasons(local) == ["request to allowed.test is not allowed: allowed.test is a loopback address, allowed only when listed exactly in allow_domains"]
	hints(local) == [`start chromegate with --allow-domain allowed.test (exactly this host: wildcards and --unsafe-all-domains never match local addresses), or add "allowed.test" to allow_domains in the policy data`]
	allowed(local) with data.allow_domains as ["allowed.test"]
}

test_request_other_schemes_denied if {
	every u in ["javascript:alert(1)", "data:text/javascript,alert(1)", "file:///etc/passwd", "chrome-extension://abcdefghijklmnop/x.js", "ftp://example.net/f"] {
		not allowed(req(u, {})) with data.all_domains as true with data.allow_domains as ["*"]
	}
	reasons(req("javascript:alert(1)", {})) == ["request to a javascript: URL is not allowed: only http, https, ws and wss requests leave the browser"]
	reasons(req("data:text/javascript,alert(1)", {})) == ["request to a data: URL is not allowed: only http, https, ws and wss requests leave the browser"]
	reasons(req("ftp://example.net/f", {})) == ["request to example.net is not allowed: only http, https, ws and wss requests leave the browser"]
	hints(req("javascript:alert(1)", {})) == []
}

test_request_loopback_name_needs_exact_listing if {
	inp := resolved("https://allowed.test/api", "loopback", "127.0.0.1")
	allowed(inp) with data.allow_domains as ["allowed.test"]
	not allowed(inp) with data.allow_domains as ["*.test"]
	not allowed(inp) with data.allow_domains as ["*"]
	not allowed(inp) with data.all_domains as true
	not allowed(inp) with data.all_domains as true with data.asset_domains as ["allowed.test"] with data.strict_egress as true
	reasons(inp) == ["request to allowed.test is not allowed: allowed.test is a loopback address, allowed only when listed exactly in allow_domains"] with data.allow_domains as ["*.test"]

	# The same name resolved to a public address is any public name.
	allowed(resolved("https://allowed.test/api", "public", "93.184.216.34"))
}

test_request_private_and_link_local_denied if {
	every inp in [
		req("http://169.254.169.254/latest/meta-data/", {}),
		req("http://[fe80::1]/", {}),
		req("http://10.0.0.1/", {}),
		req("http://192.168.1.1/", {}),
		req("http://127.0.0.1:9222/json", {}),
		req("http://localhost:3000/", {}),
		resolved("http://metadata.example.net/latest/", "link_local", "169.254.169.254"),
		resolved("http://intranet.example.net/", "private", "10.1.2.3"),
	] {
		not allowed(inp) with data.allow_domains as ["*", "*.example.net"] with data.all_domains as true
	}
	reasons(req("http://169.254.169.254/latest/meta-data/", {})) == ["request to 169.254.169.254 is not allowed: 169.254.169.254 is a link-local address, allowed only when listed exactly in allow_domains"]
	reasons(resolved("http://intranet.example.net/", "private", "10.1.2.3")) == ["request to intranet.example.net is not allowed: intranet.example.net is a private-network address, allowed only when listed exactly in allow_domains"]
	allowed(req("http://169.254.169.254/x", {})) with data.allow_domains as ["169.254.169.254"]
	allowed(req("http://127.0.0.1:9222/json", {})) with data.allow_domains as ["127.0.0.1"]
}

test_request_navigation_decided_like_a_navigation if {
	# A popup or an iframe goes only where the model could navigate.
	every inp in [popup("https://other.test/login"), iframe("https://other.test/embed")] {
		not allowed(inp) with data.allow_domains as ["example.com"]
		reasons(inp) == ["navigation to other.test is not allowed: host not in allow_domains"] with data.allow_domains as ["example.com"]
		hints(inp) == [`start chromegate with --allow-domain other.test, or add "other.test" to allow_domains in the policy data`]
		allowed(inp) with data.allow_domains as ["other.test"]
	}
	allowed(iframe("https://a.example.com/")) with data.allow_domains as ["*.example.com"]
	allowed(popup("about:blank"))
	not allowed(iframe("javascript:alert(1)")) with data.all_domains as true
	reasons(iframe("javascript:alert(1)")) == ["navigation to a javascript: URL is not allowed: the javascript: scheme is never allowed"]
	hints(iframe("javascript:alert(1)")) == []
	not allowed(iframe("data:text/html,x")) with data.all_domains as true
	not allowed(iframe("wss://example.com/")) with data.allow_domains as ["example.com"]
	local := object.union(iframe("http://allowed.test/"), {"target": {"ip_class": "loopback"}})
	not allowed(local) with data.allow_domains as ["*.test"]
	reasons(local) == ["navigation to allowed.test is not allowed: allowed.test is a loopback address, allowed only when listed exactly in allow_domains"]
	allowed(local) with data.allow_domains as ["allowed.test"]
}

# Strict egress with two allowed and two asset host patterns.
strictly_allowed(inp) if {
	allowed(inp) with data.strict_egress as true
		with data.allow_domains as ["example.com", "*.example.org"]
		with data.asset_domains as ["*.cdn.test", "fonts.test"]
}

test_request_strict_egress_allows_listed_and_asset_hosts_only if {
	strictly_allowed(req("https://example.com/app.js", {}))
	strictly_allowed(req("https://a.example.org/app.js", {}))
	strictly_allowed(req("https://x.cdn.test/lib.js", {}))
	strictly_allowed(req("https://fonts.test/f.woff2", {"request": {"resource_type": "font"}}))
	strictly_allowed(resolved("https://x.cdn.test/lib.js", "public", "93.184.216.34"))
	strictly_allowed(resolved("https://a.example.org/", "public", "93.184.216.34"))
	not strictly_allowed(req("https://tracker.test/p.gif", {}))
	not strictly_allowed(req("wss://live.test/socket", {}))
	not strictly_allowed(req("https://cdn.test/lib.js", {}))
}

test_request_strict_egress_reasons_and_hints if {
	inp := req("https://tracker.test/p.gif?uid=secret", {})
	not allowed(inp) with data.strict_egress as true
	reasons(inp) == ["request to tracker.test is not allowed: strict egress allows only hosts in allow_domains and asset_domains"] with data.strict_egress as true
	hints(inp) == [
		`start chromegate with --allow-domain tracker.test, or add "tracker.test" to allow_domains in the policy data`,
		`to let pages load from tracker.test without navigating there, start chromegate with --asset-domain tracker.test, or add "tracker.test" to asset_domains in the policy data`,
	] with data.strict_egress as true
	not contains(concat(" ", reasons(inp)), "secret") with data.strict_egress as true
	ws := req("wss://live.test/socket", {})
	count(hints(ws)) == 2 with data.strict_egress as true
}

test_request_strict_egress_ip_literals_need_exact_allow_domains if {
	ip := resolved("http://93.184.216.34/x", "public", "93.184.216.34")
	not allowed(ip) with data.strict_egress as true with data.allow_domains as ["*"] with data.asset_domains as ["*"]
	not allowed(ip) with data.strict_egress as true with data.asset_domains as ["93.184.216.34"]
	allowed(ip) with data.strict_egress as true with data.allow_domains as ["93.184.216.34"]
}

test_request_strict_egress_local_asset_hosts_denied if {
	inp := resolved("http://localhost:8080/x.js", "loopback", "127.0.0.1")
	not allowed(inp) with data.strict_egress as true with data.asset_domains as ["localhost"]
	reasons(inp) == ["request to localhost is not allowed: localhost is a loopback address, allowed only when listed exactly in allow_domains"] with data.strict_egress as true
	hints(inp) == [`start chromegate with --allow-domain localhost (exactly this host: wildcards and --unsafe-all-domains never match local addresses), or add "localhost" to allow_domains in the policy data`] with data.strict_egress as true
	allowed(inp) with data.strict_egress as true with data.allow_domains as ["localhost"]
}

test_request_strict_egress_asset_hosts_are_not_navigation_targets if {
	not allowed(iframe("https://x.cdn.test/")) with data.strict_egress as true with data.asset_domains as ["*.cdn.test"]
	not allowed(popup("https://public.test/")) with data.strict_egress as true
	allowed(iframe("https://example.com/")) with data.strict_egress as true with data.allow_domains as ["example.com"]
}

test_request_strict_egress_switches_must_be_typed if {
	allowed(req("https://tracker.test/", {})) with data.strict_egress as "true"
	not allowed(req("https://x.cdn.test/", {})) with data.strict_egress as true with data.asset_domains as "*.cdn.test"
}

test_request_unknown_ip_class_denied if {
	inp := req("https://odd.test/", {"target": {"ip_class": "somewhere"}})
	not allowed(inp)
	reasons(inp) == ["no rule of the policy allows this request"]
}

test_request_phase_needs_request_action if {
	# A call-shaped input in the request phase is not a request.
	inp := object.union(nav("https://public.test/"), {"phase": "request"})
	not allowed(inp)
	reasons(inp) == ["no rule of the policy allows this request"]
	not allowed(object.union(req("https://public.test/", {}), {"version": 2}))
	misspelt := object.union(req("https://public.test/", {}), {"phase": "requests"})
	not allowed(misspelt)
	"unknown phase requests" in reasons(misspelt)
}

# ---------------------------------------------------------------------------
# Secrets bound to origins.

typing(tool, url, origin, names) := call(tool, {
	"page": object.union(chromegate.parse_url(url), {"origin": origin}),
	"secrets": names,
})

secret_data := {"PASSWORD": ["https://login.test"], "TOKEN": ["https://api.test", "https://login.test"], "LOOSE": []}

test_secret_allowed_on_its_origin if {
	every tool in ["type", "fill", "fill_form"] {
		allowed(typing(tool, "https://login.test/signin", "https://login.test", ["PASSWORD"])) with data.allow_domains as ["login.test"] with data.enable_mutations as true with data.secret_origins as secret_data
	}
	allowed(typing("type", "https://login.test/", "https://login.test", ["PASSWORD", "TOKEN"])) with data.allow_domains as ["login.test"] with data.enable_mutations as true with data.secret_origins as secret_data
}

test_secret_denied_on_another_origin if {
	inp := typing("type", "https://other.test/form", "https://other.test", ["PASSWORD"])
	not allowed(inp) with data.allow_domains as ["login.test", "other.test"] with data.enable_mutations as true with data.secret_origins as secret_data
	reasons(inp) == ["secret PASSWORD may not be typed on https://other.test; it is bound to https://login.test"] with data.allow_domains as ["login.test", "other.test"] with data.enable_mutations as true with data.secret_origins as secret_data
	h := hints(inp) with data.allow_domains as ["login.test", "other.test"] with data.enable_mutations as true with data.secret_origins as secret_data
	count(h) == 1
	not contains(h[0], "other.test")
}

test_secret_origin_is_exact if {
	# Another scheme, port or a subdomain of the origin is another origin.
	every origin in ["http://login.test", "https://login.test:8443", "https://www.login.test"] {
		not allowed(typing("fill", sprintf("%s/", [origin]), origin, ["PASSWORD"])) with data.all_domains as true with data.enable_mutations as true with data.secret_origins as secret_data
	}
}

test_every_secret_of_a_call_must_be_allowed if {
	inp := typing("type", "https://api.test/", "https://api.test", ["TOKEN", "PASSWORD"])
	not allowed(inp) with data.allow_domains as ["api.test"] with data.enable_mutations as true with data.secret_origins as secret_data
}

test_unbound_and_undeclared_secrets_go_nowhere if {
	every name in ["LOOSE", "NOT_IN_DATA"] {
		inp := typing("type", "https://login.test/", "https://login.test", [name])
		not allowed(inp) with data.allow_domains as ["login.test"] with data.enable_mutations as true with data.secret_origins as secret_data
		reasons(inp) == [sprintf("secret %s may not be typed on https://login.test; it is bound to no origin", [name])] with data.allow_domains as ["login.test"] with data.enable_mutations as true with data.secret_origins as secret_data
	}
}

test_secret_needs_a_known_page if {
	inp := call("type", {"secrets": ["PASSWORD"]})
	not allowed(inp) with data.all_domains as true with data.enable_mutations as true with data.secret_origins as secret_data
}

test_secrets_do_not_lift_other_rules if {
	# The page's origin is bound, but mutations are off.
	not allowed(typing("type", "https://login.test/", "https://login.test", ["PASSWORD"])) with data.allow_domains as ["login.test"] with data.secret_origins as secret_data
	# Bound, mutations on, but the host is not allowed.
	not allowed(typing("type", "https://login.test/", "https://login.test", ["PASSWORD"])) with data.enable_mutations as true with data.secret_origins as secret_data
}

test_calls_without_secrets_are_unchanged if {
	allowed(typing("type", "https://other.test/", "https://other.test", [])) with data.allow_domains as ["other.test"] with data.enable_mutations as true with data.secret_origins as secret_data
	allowed(on("type", "https://other.test/")) with data.allow_domains as ["other.test"] with data.enable_mutations as true
	inp := object.union(on("type", "https://other.test/"), {"secrets": null})
	allowed(inp) with data.allow_domains as ["other.test"] with data.enable_mutations as true
}

test_malformed_secret_data_binds_nothing if {
	not allowed(typing("type", "https://login.test/", "https://login.test", ["PASSWORD"])) with data.allow_domains as ["login.test"] with data.enable_mutations as true with data.secret_origins as ["https://login.test"]
	not allowed(typing("type", "https://login.test/", "https://login.test", ["PASSWORD"])) with data.allow_domains as ["login.test"] with data.enable_mutations as true with data.secret_origins as {"PASSWORD": "https://login.test"}
}

# ---------------------------------------------------------------------------
# Storage state.

state_origin(tool, op, source, origin) := call(tool, {
	"args": {"name": "login"},
	"target": chromegate.parse_url(origin),
	"state": {"op": op, "origin": origin, "source": source},
})

test_state_calls_need_no_page if {
	allowed(call("state_save", {"args": {"name": "login"}}))
	allowed(call("state_list", {}))
	allowed(listing("state_save"))
	allowed(listing("state_list"))
}

# A save under a new name is a read; one that replaces a saved state (the
# login a run starts from) is a change, refused in safe mode.
test_state_overwrite_needs_mutations if {
	allowed(call("state_save", {"args": {"name": "login", "overwrite": false}}))
	not allowed(call("state_save", {"args": {"name": "login", "overwrite": true}}))
	reasons(call("state_save", {"args": {"name": "login", "overwrite": true}})) == ["state_save changes the page or the browser, and mutations are off (safe mode)"]
	allowed(call("state_save", {"args": {"name": "login", "overwrite": true}})) with data.enable_mutations as true
	allowed(state_origin("state_save", "save", "tool", "https://app.example.com")) with data.allow_domains as ["*.example.com"]
}

test_state_load_needs_mutations if {
	not allowed(call("state_load", {"args": {"name": "login"}}))
	not allowed(listing("state_load"))
	allowed(call("state_load", {"args": {"name": "login"}})) with data.enable_mutations as true
	allowed(listing("state_load")) with data.enable_mutations as true
	reasons(call("state_load", {"args": {"name": "login"}})) == ["state_load changes the page or the browser, and mutations are off (safe mode)"]
}

test_state_saved_only_for_allowed_origins if {
	allowed(state_origin("state_save", "save", "tool", "https://app.example.com")) with data.allow_domains as ["*.example.com"]
	not allowed(state_origin("state_save", "save", "tool", "https://bank.test")) with data.allow_domains as ["*.example.com"]
	reasons(state_origin("state_save", "save", "tool", "https://bank.test")) == ["the state of bank.test is not saved: host not in allow_domains"] with data.allow_domains as ["*.example.com"]
}

test_state_loaded_like_a_navigation if {
	allowed(state_origin("state_load", "load", "tool", "https://app.example.com")) with data.allow_domains as ["*.example.com"]
	allowed(state_origin("state_load", "load", "serve", "https://app.example.com")) with data.allow_domains as ["*.example.com"]
	not allowed(state_origin("state_load", "load", "serve", "https://bank.test")) with data.allow_domains as ["*.example.com"]
	r := reasons(state_origin("state_load", "load", "tool", "http://127.0.0.1:8080")) with data.all_domains as true
	r == ["the state of 127.0.0.1 is not loaded: 127.0.0.1 is a loopback address, allowed only when listed exactly in allow_domains"]
	h := hints(state_origin("state_load", "load", "tool", "https://bank.test"))
	h == ["start chromegate with --allow-domain bank.test, or add \"bank.test\" to allow_domains in the policy data"]
}

test_state_origin_is_decided_by_its_own_tool if {
	# A save decision cannot stand in for a load, nor the reverse.
	not allowed(state_origin("state_save", "load", "tool", "https://app.example.com")) with data.allow_domains as ["app.example.com"]
	not allowed(state_origin("state_load", "save", "tool", "https://app.example.com")) with data.allow_domains as ["app.example.com"]
	not allowed(state_origin("state_list", "save", "tool", "https://app.example.com")) with data.allow_domains as ["app.example.com"]
}
