# METADATA
# title: chromegate example policy for a CI agent
# description: |
#   An end-to-end test agent in CI: it may drive the application under test
#   on the hosts in data.test_hosts (plus any --allow-domain), click and type
#   freely, but never run scripts, upload files from the runner or download.
#   Over HTTP only principals with the "ci" role may act; over stdio the
#   caller is the CI job itself. The application's pages may load from the
#   test hosts and from public hosts (CDNs, fonts), never from the rest of
#   the runner's machine or network (other local ports, the cloud metadata
#   address).
package chromegate

# ---------------------------------------------------------------------------
# Data.

# --allow-domain adds to the test hosts.
default flag_hosts := []

flag_hosts := data.allow_domains if is_array(data.allow_domains)

default ci_hosts := []

ci_hosts := array.concat(data.test_hosts, flag_hosts) if is_array(data.test_hosts)

# ---------------------------------------------------------------------------
# Decision.

decision := {"allow": true, "reasons": [], "hints": []} if allow

decision := {"allow": false, "reasons": denial_reasons, "hints": []} if not allow

default allow := false

allow if {
	input.version == 1
	ci_principal
	input.phase == "call"
	call_allowed
	secrets_allowed
}

allow if {
	input.version == 1
	ci_principal
	input.phase == "list"
	listed
}

allow if {
	input.version == 1
	ci_principal
	input.phase == "request"
	request_allowed
}

denial_reasons := sort(deny) if count(deny) > 0

denial_reasons := [sprintf("no rule of the CI policy allows %v", [denied_subject])] if count(deny) == 0

denied_subject := "this request" if input.phase == "request"

else := object.get(input, "tool", "this call")

ci_principal if input.principal.transport == "stdio"

ci_principal if "ci" in input.principal.roles

# ---------------------------------------------------------------------------
# Hosts: names may be matched by wildcard, addresses and localhost must be
# listed exactly (CI servers usually listen on localhost). A page's request
# through chromegate's proxy is classed by the address its name resolved
# to: a name resolved to a public address is still matched as a name, one
# resolved to this machine or the network (app.test in /etc/hosts) must be
# listed exactly, like an address.

public_classes := {"public", "unresolved"}

ci_host(t) if {
	t.ip_class in public_classes
	chromegate.host_match(ci_hosts, t.host)
}

ci_host(t) if {
	not t.ip_class in public_classes
	chromegate.host_match([p | some p in ci_hosts; not contains(p, "*")], t.host)
}

host_ok(t) if {
	t.scheme in {"http", "https"}
	ci_host(t)
}

url_ok(t) if t.url == "about:blank"

url_ok(t) if host_ok(t)

# Never in CI: scripts from the model, files from the runner, downloads.
forbidden_tools := {"eval", "set_files", "download_file", "cookies_get", "cookies_set"}

# ---------------------------------------------------------------------------
# Calls.

call_allowed if input.action in {"status", "tabs"}

call_allowed if {
	input.action == "navigate"
	input.target != null
	url_ok(input.target)
}

call_allowed if {
	input.action == "navigate"
	input.target == null
	input.tool in {"back", "forward", "reload"}
}

call_allowed if {
	input.action in {"read", "interact", "page_tool"}
	not input.tool in forbidden_tools
	url_ok(input.page)
}

listed if {
	input.action in {"status", "tabs", "navigate", "read", "interact", "page_tool"}
	not input.tool in forbidden_tools
}

# ---------------------------------------------------------------------------
# Requests the application's pages make (phase "request"; the target is the
# request's origin).

request_schemes := {"http", "https", "ws", "wss"}

# A document in any frame, or a popup, goes where the agent may navigate.
request_allowed if {
	input.request.navigation == true
	url_ok(input.target)
}

# Anything else: the test hosts, and any public host.
request_allowed if {
	not input.request.navigation == true
	input.target.scheme in request_schemes
	ci_host(input.target)
}

request_allowed if {
	not input.request.navigation == true
	input.target.scheme in request_schemes
	input.target.ip_class in public_classes
}

# ---------------------------------------------------------------------------
# Reasons.

deny contains sprintf("principal %v is not a CI agent (needs the ci role)", [input.principal.name]) if {
	not ci_principal
}

deny contains sprintf("%v is never allowed for the CI agent", [input.tool]) if {
	input.tool in forbidden_tools
}

deny contains sprintf("navigation to %v is not allowed: not a test host", [input.target.host]) if {
	input.phase == "call"
	input.action == "navigate"
	input.target != null
	not url_ok(input.target)
}

deny contains sprintf("navigation to %v is not allowed: not a test host", [target_name]) if {
	input.phase == "request"
	input.request.navigation == true
	not url_ok(input.target)
}

deny contains sprintf("request to %v is not allowed: only http, https, ws and wss requests leave the browser", [target_name]) if {
	input.phase == "request"
	not input.request.navigation == true
	not input.target.scheme in request_schemes
}

deny contains sprintf("request to %v is not allowed: a %v address that is not a test host (list it exactly in test_hosts)", [target_name, input.target.ip_class]) if {
	input.phase == "request"
	not input.request.navigation == true
	input.target.scheme in request_schemes
	not input.target.ip_class in public_classes
	not ci_host(input.target)
}

target_name := input.target.host if input.target.host != ""

else := sprintf("a %v: URL", [input.target.scheme])

default page_host := "an unknown page"

page_host := input.page.host if input.page != null

deny contains sprintf("%v is not allowed on %v: not a test host", [input.tool, page_host]) if {
	input.phase == "call"
	input.action in {"read", "interact", "page_tool"}
	not input.tool in forbidden_tools
	not input.tool in state_tools
	not url_ok(input.page)
}

# ---------------------------------------------------------------------------
# Plugin tools: the plugin's own call is allowed unless one of its steps
# calls a tool the CI agent may never use; each step is then decided above,
# as its own tool.

forbidden_step if {
	some t in input.plugin.tools
	t in forbidden_tools
}

call_allowed if {
	input.action == "plugin"
	not forbidden_step
}

listed if {
	input.action == "plugin"
	not forbidden_step
}

deny contains sprintf("plugin %v calls a tool never allowed for the CI agent", [input.tool]) if {
	input.action == "plugin"
	forbidden_step
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

# ---------------------------------------------------------------------------
# Storage state: a CI run starts logged in from the state the operator saved
# (serve --storage-state), and may save and load states of its own. The
# calls touch no page; each origin of a state is decided on its own
# (input.state), and only the test hosts' state is saved or restored.

state_tools := {"state_save", "state_load", "state_list"}

call_allowed if {
	input.tool in state_tools
	object.get(input, "state", null) == null
	input.target == null
}

call_allowed if {
	input.tool in {"state_save", "state_load"}
	input.state.op in {"save", "load"}
	host_ok(input.target)
}

deny contains sprintf("the state of %v is not %v: not a test host", [target_name, state_verb[input.state.op]]) if {
	input.tool in state_tools
	input.state.op in {"save", "load"}
	not host_ok(input.target)
}

state_verb := {"save": "saved", "load": "loaded"}
