# METADATA
# title: chromegate example policy for a security team
# description: |
#   Several analysts' agents share one chromegate over HTTP. Each key carries
#   roles; data.role_domains says which hosts each role may visit. The team
#   only looks: navigation, reads, screenshots, hover and scroll. Nothing
#   that types, clicks, runs scripts, downloads, touches cookies or calls a
#   page's own tools is ever allowed, whatever the flags say, and local or
#   private addresses are never reachable (the sites under study may be
#   hostile; the network they run in must stay out of reach). Egress is
#   strict (data.strict_egress): the pages themselves may only reach the
#   principal's hosts and the asset hosts in data.asset_domains, so a
#   hostile page cannot send what it sees anywhere else.
package chromegate

# ---------------------------------------------------------------------------
# Which hosts this principal may see: the union of its roles' patterns.

principal_patterns contains p if {
	some role in input.principal.roles
	some p in data.role_domains[role]
	is_string(p)
}

# A name matches as a name, also when the proxy resolved it to a public
# address; never when it resolved to a local or private one.
public_classes := {"public", "unresolved"}

role_host(t) if {
	t.ip_class in public_classes
	chromegate.host_match(principal_patterns, t.host)
}

host_ok(t) if {
	t.scheme in {"http", "https"}
	role_host(t)
}

url_ok(t) if t.url == "about:blank"

url_ok(t) if host_ok(t)

# Tools that only look. hover and scroll move nothing the site keeps.
looking_tools := {
	"chrome_status", "tabs_list", "tab_select", "tab_new",
	"navigate", "back", "forward", "reload",
	"get_text", "get_html", "snapshot", "query", "screenshot", "wait_for",
	"extract_links", "read_as_markdown", "hover", "scroll", "page_tools_list",
	"network_requests", "network_request", "console_messages",
}

# ---------------------------------------------------------------------------
# Decision.

decision := {"allow": true, "reasons": [], "hints": [], "ask": sort(ask)} if allowed

decision := {"allow": false, "reasons": denial_reasons, "hints": []} if not allowed

# What the rules below allow, unless what the call or request carries may
# not go where it goes (flow.rego, with data.labels).
allowed if {
	allow
	not flow_refused
}

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

allow if {
	input.version == 1
	input.phase == "request"
	request_ok
}

denial_reasons := sort(deny) if count(deny) > 0

denial_reasons := [sprintf("no rule of the security-team policy allows %v", [denied_subject])] if count(deny) == 0

denied_subject := "this request" if input.phase == "request"

else := object.get(input, "tool", "this call")

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
# Requests the pages make (phase "request"; the target is the request's
# origin, classed by the address the proxy resolved when it did).

request_schemes := {"http", "https", "ws", "wss"}

# Strict egress: off only when the data says so.
strict_egress if data.strict_egress == true

default asset_domains := []

asset_domains := d if {
	d := data.asset_domains
	is_array(d)
}

# A popup or a frame's document goes where the principal may navigate.
request_ok if {
	input.request.navigation == true
	url_ok(input.target)
}

request_ok if {
	not input.request.navigation == true
	egress_ok(input.target)
}

egress_ok(t) if {
	t.scheme in request_schemes
	role_host(t)
}

# Asset hosts (fonts, public CDNs) serve the pages, but are not places to
# visit: a frame or popup to one is a navigation, decided above.
egress_ok(t) if {
	t.scheme in request_schemes
	t.ip_class in public_classes
	strict_egress
	chromegate.host_match(asset_domains, t.host)
}

egress_ok(t) if {
	t.scheme in request_schemes
	t.ip_class in public_classes
	not strict_egress
}

# ---------------------------------------------------------------------------
# Reasons.

deny contains sprintf("%v is not allowed: this team's agents only look", [input.tool]) if {
	input.phase != "request"
	not input.tool in looking_tools
}

deny contains sprintf("navigation to %v is not allowed for roles %v", [target_name, concat(", ", input.principal.roles)]) if {
	input.phase == "request"
	input.request.navigation == true
	not url_ok(input.target)
}

deny contains sprintf("request to %v is not allowed: only http, https, ws and wss requests leave the browser", [target_name]) if {
	input.phase == "request"
	not input.request.navigation == true
	not input.target.scheme in request_schemes
}

deny contains sprintf("request to %v is not allowed: local and private addresses are never reachable", [target_name]) if {
	input.phase == "request"
	not input.request.navigation == true
	input.target.scheme in request_schemes
	not input.target.ip_class in public_classes
}

deny contains sprintf("request to %v is not allowed: strict egress allows only the hosts of roles %v and asset_domains", [target_name, concat(", ", input.principal.roles)]) if {
	input.phase == "request"
	not input.request.navigation == true
	input.target.scheme in request_schemes
	input.target.ip_class in public_classes
	not egress_ok(input.target)
}

target_name := input.target.host if input.target.host != ""

else := sprintf("a %v: URL", [input.target.scheme])

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
