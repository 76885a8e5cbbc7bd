# METADATA
# title: chromegate example policy for a security team
# description: |
#   Several analysts' agents share one chromegate over HTTP. Each key carries
#   roles; data.role_domains says which hosts each role may visit. The team
#   only looks: navigation, reads, screenshots, hover and scroll. Nothing
#   that types, clicks, runs scripts, downloads, touches cookies or calls a
#   page's own tools is ever allowed, whatever the flags say, and local or
#   private addresses are never reachable (the sites under study may be
#   hostile; the network they run in must stay out of reach).
package chromegate

# ---------------------------------------------------------------------------
# Which hosts this principal may see: the union of its roles' patterns.

principal_patterns contains p if {
	some role in input.principal.roles
	some p in data.role_domains[role]
	is_string(p)
}

host_ok(t) if {
	t.scheme in {"http", "https"}
	t.ip_class in {"public", "unresolved"}
	chromegate.host_match(principal_patterns, t.host)
}

url_ok(t) if t.url == "about:blank"

url_ok(t) if host_ok(t)

# Tools that only look. hover and scroll move nothing the site keeps.
looking_tools := {
	"chrome_status", "tabs_list", "tab_select", "tab_new",
	"navigate", "back", "forward", "reload",
	"get_text", "get_html", "snapshot", "query", "screenshot", "wait_for",
	"extract_links", "read_as_markdown", "hover", "scroll", "page_tools_list",
}

# ---------------------------------------------------------------------------
# Decision.

decision := {"allow": true, "reasons": [], "hints": []} if allow

decision := {"allow": false, "reasons": denial_reasons, "hints": []} if not allow

default allow := false

allow if {
	input.version == 1
	input.phase == "list"
	input.tool in looking_tools
}

allow if {
	input.version == 1
	input.phase == "call"
	input.tool in looking_tools
	call_ok
}

denial_reasons := sort(deny) if count(deny) > 0

denial_reasons := [sprintf("no rule of the security-team policy allows %v", [object.get(input, "tool", "this call")])] if count(deny) == 0

call_ok if input.action in {"status", "tabs"}

call_ok if {
	input.action == "navigate"
	input.target != null
	url_ok(input.target)
}

call_ok if {
	input.action == "navigate"
	input.target == null
	input.tool in {"back", "forward", "reload"}
}

call_ok if {
	input.action in {"read", "interact", "page_tool"}
	input.page != null
	url_ok(input.page)
}

# ---------------------------------------------------------------------------
# Reasons.

deny contains sprintf("%v is not allowed: this team's agents only look", [input.tool]) if {
	not input.tool in looking_tools
}

deny contains sprintf("principal %v has no role in role_domains", [input.principal.name]) if {
	input.tool in looking_tools
	input.action in {"navigate", "read", "interact", "page_tool"}
	count(principal_patterns) == 0
}

deny contains sprintf("navigation to %v is not allowed for roles %v", [input.target.host, concat(", ", input.principal.roles)]) if {
	input.phase == "call"
	input.action == "navigate"
	input.target != null
	count(principal_patterns) > 0
	not url_ok(input.target)
}

deny contains sprintf("%v is not allowed on %v for roles %v", [input.tool, input.page.host, concat(", ", input.principal.roles)]) if {
	input.phase == "call"
	input.tool in looking_tools
	input.action in {"read", "interact", "page_tool"}
	input.page != null
	count(principal_patterns) > 0
	not url_ok(input.page)
}

# ---------------------------------------------------------------------------
# Plugin tools: one whose steps all only look is allowed, and each step is
# then decided above as its own tool; any other plugin is not (the reason
# above, "only look", names it).

looking_plugin if {
	input.action == "plugin"
	every t in input.plugin.tools {
		t in looking_tools
	}
}

allow if {
	input.version == 1
	input.phase in {"list", "call"}
	looking_plugin
}
