# The default policy's words: why a call or a request was denied, and how
# the operator would allow it (chromegate.rego's decision reads them only
# for a denial). One package with chromegate.rego.
package chromegate

# ---------------------------------------------------------------------------
# Reasons for a denial, and hints on how to allow it. Only consulted when
# the call is denied.

deny contains sprintf("input version %v is not supported by this policy, which reads version 1", [object.get(input, "version", null)]) if {
	object.get(input, "version", null) != 1
}

deny contains sprintf("unknown phase %v", [object.get(input, "phase", null)]) if {
	not object.get(input, "phase", null) in {"call", "list", "request"}
}

deny contains sprintf("%v is not a tool this policy knows", [object.get(input, "tool", null)]) if {
	not object.get(input, "action", null) in known_actions
}

deny contains sprintf("%s changes the page or the browser, and mutations are off (safe mode)", [input.tool]) if {
	mutation_blocked
}

hints contains "start chromegate with --enable-mutations, or set enable_mutations to true in the policy data" if {
	mutation_blocked
}

hints contains sprintf("or add %q to plugin_mutations in the policy data to let only this plugin change pages", [input.plugin.name]) if {
	mutation_blocked
	input.plugin.name
}

deny contains "eval is off" if {
	input.action == "eval"
	not enable_eval
}

hints contains "start chromegate with --unsafe-enable-eval, or set enable_eval to true in the policy data" if {
	input.action == "eval"
	not enable_eval
}

deny contains "downloads are off" if {
	input.action == "download"
	not enable_downloads
}

hints contains "start chromegate with --enable-downloads, or set enable_downloads to true in the policy data" if {
	input.action == "download"
	not enable_downloads
}

# Navigation.

deny contains sprintf("navigation to %s is not allowed: %s", [where(target), url_problem(target)]) if {
	input.phase == "call"
	input.action == "navigate"
	target != null
	not url_ok(target)
}

hints contains url_hint(target) if {
	input.phase == "call"
	input.action == "navigate"
	target != null
	not url_ok(target)
}

deny contains sprintf("%s needs a url", [input.tool]) if {
	input.phase == "call"
	input.action == "navigate"
	target == null
	not input.tool in {"back", "forward", "reload"}
}

# The page a read, interaction or eval touches.

deny contains sprintf("%s needs the tab's current page, which is unknown", [input.tool]) if {
	input.phase == "call"
	needs_page
	page == null
}

deny contains sprintf("%s is not allowed on %s: %s (the tab shows a page outside the policy; navigate to an allowed page first)", [input.tool, where(page), url_problem(page)]) if {
	input.phase == "call"
	needs_page
	page != null
	not url_ok(page)
}

deny contains sprintf("%s is not allowed on about:blank, only on pages of hosts in allow_domains", [input.tool]) if {
	input.phase == "call"
	needs_page
	input.action != "read"
	page != null
	about_blank(page)
}

hints contains url_hint(page) if {
	input.phase == "call"
	needs_page
	page != null
	not url_ok(page)
}

# Cookies.

deny contains "cookies_get needs urls, each of an allowed http or https host; reading every cookie is not allowed" if {
	input.phase == "call"
	input.tool == "cookies_get"
	urls := object.get(args, "urls", [])
	not non_empty_array(urls)
}

deny contains sprintf("cookies of %s are not allowed: only http and https hosts in allow_domains", [url_where(u)]) if {
	input.phase == "call"
	input.tool == "cookies_get"
	some u in object.get(args, "urls", [])
	not cookie_url_ok(u)
}

# url_where names a URL given as an argument by its host, never in full (a
# query string may hold a secret, and reasons are logged).
default url_where(_) := "an invalid URL"

url_where(u) := where(chromegate.parse_url(u)) if is_string(u)

deny contains "cookies_set needs cookies, each scoped to an allowed http or https url or domain" if {
	input.phase == "call"
	input.tool == "cookies_set"
	not non_empty_array(object.get(args, "cookies", []))
}

deny contains sprintf("cookie %v is scoped outside allow_domains", [object.get(c, "name", "")]) if {
	input.phase == "call"
	input.tool == "cookies_set"
	some c in object.get(args, "cookies", [])
	not cookie_scope_ok(c)
}

non_empty_array(a) if {
	is_array(a)
	count(a) > 0
}

# Downloads.

deny contains sprintf("download from %s is not allowed: %s", [where(target), url_problem(target)]) if {
	input.phase == "call"
	input.action == "download"
	target != null
	not url_ok(target)
}

deny contains "download from about:blank is not allowed" if {
	input.phase == "call"
	input.action == "download"
	target != null
	about_blank(target)
}

hints contains url_hint(target) if {
	input.phase == "call"
	input.action == "download"
	target != null
	not url_ok(target)
}

# Page tools.

deny contains sprintf("page tool %v does not belong to an allowed page", [input.page_tool.name]) if {
	input.tool == "page_tool_call"
	input.phase == "call"
	page_ok
	object.get(input, "page_tool", null) != null
	not page_tool_origin_ok
}

deny contains "page_tool_call needs page_tool" if {
	input.tool == "page_tool_call"
	input.phase == "call"
	object.get(input, "page_tool", null) == null
}

deny contains sprintf("page tool %v does not belong to an allowed page", [input.page_tool.name]) if {
	input.tool == "page_tool_call"
	input.phase == "list"
	object.get(input, "page_tool", null) != null
	not web_url_ok(chromegate.parse_url(input.page_tool.origin))
}

# Requests.

deny contains sprintf("navigation to %s is not allowed: %s", [where(target), url_problem(target)]) if {
	input.phase == "request"
	navigation_request
	not url_ok(target)
}

hints contains url_hint(target) if {
	input.phase == "request"
	navigation_request
	not url_ok(target)
}

deny contains sprintf("request to %s is not allowed: only http, https, ws and wss requests leave the browser", [where(target)]) if {
	input.phase == "request"
	not navigation_request
	not target.scheme in request_schemes
}

deny contains sprintf("request to %s is not allowed: %s is a %s address, allowed only when listed exactly in allow_domains", [where(target), target.host, class_words[target.ip_class]]) if {
	input.phase == "request"
	not navigation_request
	target.scheme in request_schemes
	target.ip_class in local_classes
	not host_allowed(target)
}

deny contains sprintf("request to %s is not allowed: strict egress allows only hosts in allow_domains and asset_domains", [where(target)]) if {
	input.phase == "request"
	not navigation_request
	target.scheme in request_schemes
	strict_egress
	not target.ip_class in local_classes
	not subresource_ok(target)
}

# WebSocket requests get the same hint as web ones: a host is listed for
# every scheme.
hints contains host_hint(target) if {
	input.phase == "request"
	not navigation_request
	target.scheme in request_schemes
	not subresource_ok(target)
}

hints contains sprintf("to let pages load from %s without navigating there, start chromegate with --asset-domain %s, or add %q to asset_domains in the policy data", [target.host, target.host, target.host]) if {
	input.phase == "request"
	strict_egress
	not navigation_request
	target.scheme in request_schemes
	not target.ip_class in local_classes
	not subresource_ok(target)
}
