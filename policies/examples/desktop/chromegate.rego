# METADATA
# title: chromegate example policy for Claude Desktop with your own Chrome
# description: |
#   Your real Chrome, with your logged-in sessions, driven by your assistant.
#   It may browse and act (click, type, fill, close tabs) on the hosts you
#   list in allow_domains (or with --allow-domain), never on the ones in
#   never_domains (your mail, your bank, account settings: never_domains
#   wins), and never run scripts, download, upload your files or read or
#   write your cookies. The pages it drives load as usual from public hosts,
#   but send nothing to never_domains (where you are logged in) and reach
#   your machine or network only at hosts you listed exactly.
package chromegate

# ---------------------------------------------------------------------------
# Hosts.

default listed := []

listed := data.allow_domains if is_array(data.allow_domains)

default never := []

never := data.never_domains if is_array(data.never_domains)

host_ok(t) if {
	t.scheme in {"http", "https"}
	host_listed(t)
	not chromegate.host_match(never, t.host)
}

# A name matches by wildcard; so does one a request's proxy resolved to a
# public address (the extension never resolves: names stay "unresolved").
public_classes := {"public", "unresolved"}

host_listed(t) if {
	t.ip_class in public_classes
	chromegate.host_match(listed, t.host)
}

# Your own machine and network only when listed exactly.
host_listed(t) if {
	not t.ip_class in public_classes
	t.host in listed
}

url_ok(t) if t.url == "about:blank"

url_ok(t) if host_ok(t)

# Never on your desktop, whatever the flags say.
never_tools := {"eval", "download_file", "set_files", "cookies_get", "cookies_set"}

# ---------------------------------------------------------------------------
# Decision.

decision := {"allow": true, "reasons": [], "hints": []} if allow

decision := {"allow": false, "reasons": denial_reasons, "hints": sort(hints)} if not allow

default allow := false

allow if {
	input.version == 1
	input.phase == "list"
	not input.tool in never_tools
	input.action in {"status", "tabs", "navigate", "read", "interact", "page_tool"}
}

allow if {
	input.version == 1
	input.phase == "call"
	not input.tool in never_tools
	call_ok
	secrets_allowed
}

allow if {
	input.version == 1
	input.phase == "request"
	request_ok
}

denial_reasons := sort(deny) if count(deny) > 0

denial_reasons := [sprintf("no rule of the desktop policy allows %v", [denied_subject])] if count(deny) == 0

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
	input.action == "read"
	input.page != null
	url_ok(input.page)
}

# Acting needs a page of a listed host (not about:blank).
call_ok if {
	input.action in {"interact", "page_tool"}
	input.page != null
	host_ok(input.page)
}

# ---------------------------------------------------------------------------
# Requests the pages make (phase "request"; the target is the request's
# origin).

request_schemes := {"http", "https", "ws", "wss"}

# A popup or a frame's document goes where the assistant may navigate.
request_ok if {
	input.request.navigation == true
	url_ok(input.target)
}

# Anything else: any public host but never_domains (a page the assistant
# drives must not reach your mail or bank with your cookies); your machine
# and network only at hosts listed exactly.
request_ok if {
	not input.request.navigation == true
	input.target.scheme in request_schemes
	input.target.ip_class in public_classes
	not chromegate.host_match(never, input.target.host)
}

request_ok if {
	not input.request.navigation == true
	input.target.scheme in request_schemes
	not input.target.ip_class in public_classes
	input.target.host in listed
}

# ---------------------------------------------------------------------------
# Reasons and hints.

deny contains sprintf("%v is never allowed on this desktop", [input.tool]) if {
	input.tool in never_tools
}

deny contains sprintf("navigation to %v is not allowed: %v", [name(input.target), problem(input.target)]) if {
	input.phase == "call"
	input.action == "navigate"
	input.target != null
	not url_ok(input.target)
}

deny contains sprintf("%v is not allowed on %v: %v", [input.tool, name(input.page), problem(input.page)]) if {
	input.phase == "call"
	input.action in {"read", "interact", "page_tool"}
	not input.tool in never_tools
	input.page != null
	not url_ok(input.page)
}

deny contains sprintf("navigation to %v is not allowed: %v", [name(input.target), problem(input.target)]) if {
	input.phase == "request"
	input.request.navigation == true
	not url_ok(input.target)
}

deny contains sprintf("request to %v is not allowed: only http, https, ws and wss requests leave the browser", [name(input.target)]) if {
	input.phase == "request"
	not input.request.navigation == true
	not input.target.scheme in request_schemes
}

deny contains sprintf("request to %v is not allowed: it is in never_domains", [name(input.target)]) if {
	input.phase == "request"
	not input.request.navigation == true
	input.target.scheme in request_schemes
	input.target.ip_class in public_classes
	chromegate.host_match(never, input.target.host)
}

deny contains sprintf("request to %v is not allowed: your machine or network, reachable only at hosts listed exactly in allow_domains", [name(input.target)]) if {
	input.phase == "request"
	not input.request.navigation == true
	input.target.scheme in request_schemes
	not input.target.ip_class in public_classes
	not input.target.host in listed
}

name(t) := t.host if t.host != ""

name(t) := sprintf("a %v: URL", [t.scheme]) if t.host == ""

problem(t) := "it is in never_domains" if {
	t.scheme in {"http", "https"}
	chromegate.host_match(never, t.host)
}

problem(t) := "not in allow_domains" if {
	t.scheme in {"http", "https"}
	not chromegate.host_match(never, t.host)
}

problem(t) := sprintf("%v: URLs are not allowed", [t.scheme]) if not t.scheme in {"http", "https"}

hints contains sprintf("add %v to allow_domains (or start chromegate with --allow-domain %v)", [input.target.host, input.target.host]) if {
	input.action == "navigate"
	input.target.scheme in {"http", "https"}
	not chromegate.host_match(never, input.target.host)
}

# ---------------------------------------------------------------------------
# Plugin tools (your own recipes): allowed unless a step calls a tool that
# is never allowed here; each step is then decided above, as its own tool,
# on its own page.

never_step if {
	some t in input.plugin.tools
	t in never_tools
}

allow if {
	input.version == 1
	input.phase in {"list", "call"}
	input.action == "plugin"
	not never_step
}

deny contains sprintf("plugin %v calls a tool that is never allowed on this desktop", [input.tool]) if {
	input.action == "plugin"
	never_step
}

# ---------------------------------------------------------------------------
# Secrets: a call that refers to an operator's secret (input.secrets, from
# <secret:NAME>) runs only on a page of an origin the operator bound it to
# (data.secret_origins, set by --secret-origins). Without this rule a secret
# would go wherever the model may type.

secret_names := s if {
	s := input.secrets
	is_array(s)
} else := []

secret_origins_of(name) := o if {
	o := data.secret_origins[name]
	is_array(o)
} else := []

secret_ok(name) if input.page.origin in secret_origins_of(name)

secrets_allowed if {
	every name in secret_names {
		secret_ok(name)
	}
}

deny contains sprintf("secret %v may not be typed on %v; it is bound to %v", [name, object.get(object.get(input, "page", {}), "origin", "an unknown page"), concat(", ", secret_origins_of(name))]) if {
	input.phase == "call"
	some name in secret_names
	not secret_ok(name)
}
