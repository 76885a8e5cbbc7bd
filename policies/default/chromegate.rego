# METADATA
# title: chromegate default policy
# description: |
#   Safe by default. Every tool call is denied unless a rule below allows it.
#   Navigation only to hosts in allow_domains and about:blank; reads,
#   interactions and eval only on pages whose host is in allow_domains (reads
#   also on about:blank); dangerous schemes never; loopback, private and
#   link-local addresses only when listed exactly; eval, downloads and
#   mutating tools off until their switch is on. Requests pages make on
#   their own: frames and popups only where a navigation may go; anything
#   else to any public host (with strict_egress, only allow_domains and
#   asset_domains), to a local address only when listed exactly. The
#   command-line flags only set the data this policy reads (see data.json and
#   policies/README.md).
package chromegate

# ---------------------------------------------------------------------------
# Data: the switches the flags set. Anything missing or of the wrong type
# counts as off.

default allow_domains := []

allow_domains := d if {
	d := data.allow_domains
	is_array(d)
}

enable_mutations if data.enable_mutations == true

enable_eval if data.enable_eval == true

enable_downloads if data.enable_downloads == true

all_domains if data.all_domains == true

# Strict egress: a page's requests may only go to allow_domains and the
# asset hosts listed in asset_domains (CDNs, font hosts). Off, requests to
# any public host are allowed, so ordinary pages keep working; local
# addresses need an exact listing either way.
strict_egress if data.strict_egress == true

default asset_domains := []

asset_domains := d if {
	d := data.asset_domains
	is_array(d)
}

# Plugin tools (by name) whose steps may change pages while mutations are
# otherwise off: the operator vouches for what the plugin does, not for
# anything the model might click.
default plugin_mutations := []

plugin_mutations := d if {
	d := data.plugin_mutations
	is_array(d)
}

# ---------------------------------------------------------------------------
# The decision chromegate asks for.

# Allowed calls take the first rule, so that on the common path nothing but
# allow is evaluated.
decision := {"allow": true, "reasons": [], "hints": []} if allowed

decision := {"allow": false, "reasons": denial_reasons, "hints": sort(hints)} if not allowed

# What the rules below allow, unless what the call carries may not go
# where it goes (flow.rego: refuses nothing without data.labels).
allowed if {
	allow
	not flow_refused
}

default allow := false

allow if {
	input.version == 1
	input.phase == "call"
	call_allowed
	secrets_allowed
}

allow if {
	input.version == 1
	input.phase == "list"
	list_allowed
}

allow if {
	input.version == 1
	input.phase == "request"
	input.action == "request"
	request_allowed
}

denial_reasons := sort(deny) if count(deny) > 0

denial_reasons := [sprintf("no rule of the policy allows %v", [denied_subject])] if count(deny) == 0

denied_subject := "this request" if input.phase == "request"

else := object.get(input, "tool", "this call")

# ---------------------------------------------------------------------------
# Vocabulary.

target := input.target

page := input.page

args := object.get(input, "args", {})

web_schemes := {"http", "https"}

dangerous_schemes := {"file", "chrome", "chrome-extension", "devtools", "view-source", "javascript", "data"}

local_classes := {"loopback", "private", "link_local"}

class_words := {"loopback": "loopback", "private": "private-network", "link_local": "link-local"}

known_actions := {"navigate", "read", "interact", "eval", "download", "tabs", "status", "page_tool", "plugin", "request"}

# Tools that change what the user has: page state, cookies, clipboard, files,
# tabs. They need enable_mutations (eval has its own switch). This list
# matches the tools chromegate's tool table (mcp.Tools) declares mutating;
# a Go test keeps them in step.
mutating_tools := {
	"click", "type", "fill", "press", "select_option", "set_files", "drag",
	"fill_form", "clipboard_write", "cookies_set", "tab_close", "eval",
	"page_tool_call", "state_load", "dialog_answer",
}

# A page tool that declares itself read-only, and not consequential, does
# not need mutations. The annotations are the page's claims, trusted only on
# pages already allowed.
read_only_page_tool if {
	input.tool == "page_tool_call"
	input.page_tool.annotations.readOnlyHint == true
	not input.page_tool.annotations.consequentialHint == true
}

mutating if {
	input.tool in mutating_tools
	not read_only_page_tool
	not dialog_dismissal
}

# A save that replaces a saved state changes what the operator has (the
# login a run starts from): a mutation. A save under a new name is not.
mutating if {
	input.tool == "state_save"
	args.overwrite == true
}

# A plugin tool mutates when one of its steps does (eval aside: an eval
# step is decided by its own switch).
mutating if {
	input.action == "plugin"
	some t in input.plugin.tools
	t in mutating_tools
	t != "eval"
}

mutation_blocked if {
	mutating
	input.action != "eval"
	not enable_mutations
	not plugin_mutation_allowed
	not state_origin_decision
}

# The plugin's own call and each of its steps carry input.plugin.
plugin_mutation_allowed if input.plugin.name in plugin_mutations

# ---------------------------------------------------------------------------
# Hosts and URLs.

# A host is allowed when an allow_domains pattern matches it. Wildcards only
# ever match host names: an IP address, localhost or any other local host
# must be listed exactly. all_domains allows every public host, never a
# local one.
host_allowed(t) if {
	t.ip_class == "unresolved"
	chromegate.host_match(allow_domains, t.host)
}

# A name the browser's proxy resolved to a public address matches
# wildcards as a name does; a public IP address must be listed exactly.
host_allowed(t) if {
	t.ip_class == "public"
	not ip_literal(t.host)
	chromegate.host_match(allow_domains, t.host)
}

host_allowed(t) if {
	t.ip_class != "unresolved"
	chromegate.host_match(exact_domains, t.host)
}

host_allowed(t) if {
	all_domains
	t.ip_class in {"public", "unresolved"}
}

exact_domains := [p | some p in allow_domains; not contains(p, "*")]

ip_literal(h) if regex.match(`^(\[.*\]|[0-9.]+)$`, h)

# A page described by its document's opaque origin (see page.shown_url):
# an about:blank, data: or blob: document that a sandboxed page, or one of
# an opaque origin, could have written.
opaque_document(t) if {
	t.url == "null"
	object.get(t, "shown_url", "") != ""
}

about_blank(t) if {
	t.scheme == "about"
	regex.match(`^about:blank([?#].*)?$`, t.url)
}

# url_ok: a URL a tab may go to, or show while it is read. (The common case
# comes first: evaluation stops at the first clause that holds.)
url_ok(t) if web_url_ok(t)

url_ok(t) if about_blank(t)

web_url_ok(t) if {
	t.scheme in {"http", "https"}
	host_allowed(t)
}

# Why a URL is not allowed, in words for the model. Exactly one applies to
# any URL that url_ok refuses.
url_problem(t) := sprintf("the %s: scheme is never allowed", [t.scheme]) if {
	t.scheme in dangerous_schemes
}

url_problem(t) := "the URL could not be parsed" if {
	t.scheme == ""
	not opaque_document(t)
}

url_problem(t) := "its document has an opaque origin (sandboxed, or written by a page of one), which is never allowed" if {
	opaque_document(t)
}

url_problem(t) := sprintf("only http and https URLs and about:blank are allowed, not %s:", [t.scheme]) if {
	t.scheme != ""
	not t.scheme in dangerous_schemes
	not t.scheme in web_schemes
	not about_blank(t)
}

url_problem(t) := sprintf("%s is a %s address, allowed only when listed exactly in allow_domains", [t.host, class_words[t.ip_class]]) if {
	t.scheme in web_schemes
	t.ip_class in local_classes
	not host_allowed(t)
}

url_problem(t) := sprintf("host not in allow_domains", []) if {
	t.scheme in web_schemes
	not t.ip_class in local_classes
	not host_allowed(t)
}

# How to allow a URL, for the hints.
url_hint(t) := host_hint(t) if t.scheme in web_schemes

host_hint(t) := sprintf("start chromegate with --allow-domain %s (exactly this host: wildcards and --unsafe-all-domains never match local addresses), or add %q to allow_domains in the policy data", [t.host, t.host]) if {
	t.ip_class in local_classes
}

host_hint(t) := sprintf("start chromegate with --allow-domain %s, or add %q to allow_domains in the policy data", [t.host, t.host]) if {
	not t.ip_class in local_classes
}

# What a URL is called in a reason: its host, or "a data: URL".
where(t) := t.host if t.host != ""

where(t) := sprintf("a %s: URL", [t.scheme]) if {
	t.host == ""
	t.scheme != ""
}

where(t) := "an invalid URL" if {
	t.host == ""
	t.scheme == ""
	not opaque_document(t)
}

where(t) := sprintf("%s (a document of an opaque origin)", [t.shown_url]) if opaque_document(t)

# ---------------------------------------------------------------------------
# Phase "call": one tool call.

call_allowed if input.action == "status"

call_allowed if {
	input.action == "tabs"
	not mutation_blocked
}

call_allowed if {
	input.action == "navigate"
	url_ok(input.target)
}

# back, forward and reload go where the tab's history says; they are checked
# where they land, like every navigation.
call_allowed if {
	input.action == "navigate"
	target == null
	input.tool in {"back", "forward", "reload"}
}

call_allowed if {
	input.action == "read"
	input.tool != "cookies_get"
	page_ok
}

call_allowed if {
	input.tool == "cookies_get"
	cookies_get_ok
}

call_allowed if {
	input.action == "interact"
	input.tool != "cookies_set"
	not mutation_blocked
	not dialog_refused
	page_ok
}

call_allowed if {
	input.tool == "cookies_set"
	not mutation_blocked
	cookies_set_ok
}

call_allowed if {
	input.action == "eval"
	enable_eval
	page_ok
}

call_allowed if {
	input.action == "download"
	enable_downloads
	download_source_ok
}

call_allowed if {
	input.action == "page_tool"
	page_ok
	page_tool_ok
}

# A plugin tool runs steps of other tools, and each step is decided as if
# the caller had called its tool; the plugin's own call only needs the
# mutation switch when a step mutates.
call_allowed if {
	input.action == "plugin"
	not mutation_blocked
}

# Listing the page tools of every tab touches no one page: each tool listed
# is then decided on its own (phase "list", with page_tool).
call_allowed if {
	input.tool == "page_tools_list"
	page == null
}

# Reads may look at about:blank; everything else that touches a page needs a
# page of an allowed host.
page_ok if {
	input.action == "read"
	url_ok(input.page)
}

page_ok if {
	input.action != "read"
	web_url_ok(input.page)
}

needs_page if {
	input.action in {"read", "interact", "eval", "page_tool"}
	not input.tool in {"cookies_get", "cookies_set"}
	not input.tool in state_tools
}

needs_page if {
	input.action == "download"
	target == null
}

# Cookies are read for the URLs given, each of which must be allowed;
# reading every cookie of the browser is never allowed.
cookies_get_ok if {
	urls := object.get(args, "urls", [])
	is_array(urls)
	count(urls) > 0
	every u in urls {
		cookie_url_ok(u)
	}
}

cookie_url_ok(u) if {
	is_string(u)
	web_url_ok(chromegate.parse_url(u))
}

# Cookies are set for a URL or a domain, each of which must be allowed.
cookies_set_ok if {
	cookies := object.get(args, "cookies", [])
	is_array(cookies)
	count(cookies) > 0
	every c in cookies {
		cookie_scope_ok(c)
	}
}

cookie_scope_ok(c) if cookie_url_ok(c.url)

cookie_scope_ok(c) if {
	not c.url
	is_string(c.domain)
	web_url_ok(chromegate.parse_url(sprintf("https://%s/", [trim_left(c.domain, ".")])))
}

# A download fetches an allowed http(s) URL, or is started by a click on an
# allowed page.
download_source_ok if {
	target != null
	web_url_ok(target)
}

download_source_ok if {
	target == null
	page_ok
}

page_tool_ok if input.tool == "page_tools_list"

page_tool_ok if {
	input.tool == "page_tool_call"
	page_tool_origin_ok
	not mutation_blocked
}

page_tool_origin_ok if {
	o := chromegate.parse_url(input.page_tool.origin)
	web_url_ok(o)
	o.host == page.host
}

# ---------------------------------------------------------------------------
# Phase "request": one request a page, frame or worker makes on its own. The
# target is the request's origin, its ip_class that of the address the
# browser will connect to when the hook resolved it (the launched browser's
# proxy: a name pointing inward is inward), else of the URL's host.

# The rules read input.request field by field, never whole: a policy that
# reads input.request.url (or the whole object) makes chromegate cache
# request decisions per URL instead of per origin.
request_schemes := {"http", "https", "ws", "wss"}

# A document load in any frame — a tab, a popup, an iframe — goes only
# where a navigation may.
navigation_request if input.request.navigation == true

request_allowed if {
	navigation_request
	url_ok(target)
}

# Everything else a page fetches: web and WebSocket schemes only; a local
# address only when its host is listed exactly; any public host unless
# strict egress, then only allowed and asset hosts.
request_allowed if {
	not navigation_request
	subresource_ok(target)
}

subresource_ok(t) if {
	t.scheme in request_schemes
	host_allowed(t)
}

subresource_ok(t) if {
	t.scheme in request_schemes
	not strict_egress
	t.ip_class in {"public", "unresolved"}
}

subresource_ok(t) if {
	t.scheme in request_schemes
	strict_egress
	t.ip_class in {"public", "unresolved"}
	not ip_literal(t.host)
	chromegate.host_match(asset_domains, t.host)
}

# ---------------------------------------------------------------------------
# Dialogs: dialog_answer answers the alert, confirm, prompt or beforeunload
# a page waits on, an interaction on that page (input.dialog names the
# dialog: its type and message, the page's words). Accepting is a mutation,
# like the click it confirms. Dismissing (Cancel) never is: it is what the
# server itself does to a dialog of a page outside the policy, and in safe
# mode it is the only way on from a page that opened one; so the tool is
# listed in safe mode too.

dialog_dismissal if {
	input.phase == "call"
	input.tool == "dialog_answer"
	object.get(args, "accept", null) == false
}

list_allowed if input.tool == "dialog_answer"

# refuse_dialogs: regular expressions; accepting a dialog whose message
# matches one is refused even with mutations on (a deletion the operator
# wants a person to confirm). A pattern that does not compile refuses
# (the evaluation fails, and chromegate denies).
default refuse_dialogs := []

refuse_dialogs := d if {
	d := data.refuse_dialogs
	is_array(d)
}

dialog_refused if {
	input.tool == "dialog_answer"
	not dialog_dismissal
	some p in refuse_dialogs
	regex.match(p, object.get(object.get(input, "dialog", {}), "message", ""))
}

deny contains "accepting this dialog is refused by the operator (refuse_dialogs): a person must answer it" if {
	input.phase == "call"
	dialog_refused
}

hints contains "dismiss it (dialog_answer accept=false), or ask the user to answer it" if {
	input.phase == "call"
	dialog_refused
}

# ---------------------------------------------------------------------------
# Emulation: emulate changes how the session's pages behave (viewport,
# clock, language, media features, CPU and network speed), not what is on
# them: an interaction on the tab's page, allowed in safe mode. A user
# agent or a position is another matter: it is what a site the user is
# logged in to sees of the user's device and whereabouts, and a site may
# act on a change (log the session out, lock the account, show or refuse
# what a region may see). Emulating either is a mutation; so is a device
# preset that carries a phone's user agent (every one but the desktop
# screens). Taking an emulation away (reset, alone) never is.

desktop_devices := {"Desktop 720p", "Desktop 1080p", "Desktop HiDPI"}

emulate_identity if {
	input.phase == "call"
	input.tool == "emulate"
	some k in {"latitude", "longitude"}
	object.get(args, k, null) != null
}

# An empty user_agent is the browser's own again: no identity emulated.
emulate_identity if {
	input.phase == "call"
	input.tool == "emulate"
	object.get(args, "user_agent", "") != ""
}

emulate_identity if {
	input.phase == "call"
	input.tool == "emulate"
	d := object.get(args, "device", null)
	d != null
	not d in desktop_devices
}

mutating if emulate_identity

# ---------------------------------------------------------------------------
# Phase "list": a tool is listed iff some call of it could be allowed.

list_allowed if input.action in {"status", "navigate", "read"}

list_allowed if {
	input.action in {"tabs", "interact"}
	not mutation_blocked
}

list_allowed if {
	input.action == "eval"
	enable_eval
}

list_allowed if {
	input.action == "download"
	enable_downloads
}

list_allowed if input.tool == "page_tools_list"

list_allowed if {
	input.action == "plugin"
	not mutation_blocked
}

# The generic page-tool caller is listed: read-only page tools need no
# switch. A live page tool is listed when its page could be read.
list_allowed if {
	input.tool == "page_tool_call"
	object.get(input, "page_tool", null) == null
}

list_allowed if {
	input.tool == "page_tool_call"
	web_url_ok(chromegate.parse_url(input.page_tool.origin))
	not mutation_blocked
}

# ---------------------------------------------------------------------------
# Secrets. A call that refers to an operator's secret (<secret:NAME> in
# typed text or a filled value; input.secrets names them) runs only on a
# page of an origin the operator bound that secret to (--secret-origins,
# data: secret_origins, {"NAME": ["https://login.example.com"]}). A secret
# bound to no origin goes nowhere. The server substitutes the value only
# after this allowed the call; the policy never sees it.

default secret_origins := {}

secret_origins := d if {
	d := data.secret_origins
	is_object(d)
}

call_secrets := s if {
	s := input.secrets
	is_array(s)
} else := []

secret_bound_to(name) := o if {
	o := secret_origins[name]
	is_array(o)
} else := []

page_origin := o if {
	o := input.page.origin
	is_string(o)
} else := "an unknown page"

secret_ok(name) if input.page.origin in secret_bound_to(name)

secrets_allowed if {
	every name in call_secrets {
		secret_ok(name)
	}
}

deny contains sprintf("secret %v may not be typed on %v; it is bound to %v", [name, page_origin, concat(", ", secret_bound_to(name))]) if {
	input.phase == "call"
	some name in call_secrets
	not secret_ok(name)
	count(secret_bound_to(name)) > 0
}

deny contains sprintf("secret %v may not be typed on %v; it is bound to no origin", [name, page_origin]) if {
	input.phase == "call"
	some name in call_secrets
	count(secret_bound_to(name)) == 0
}

# Binding a secret to another origin is the operator's decision, never the
# page's: the hint names the secret's own origins, not the page's.
hints contains sprintf("type %v only on a page of %v; to bind it to other origins the operator starts chromegate with --secret-origins %v=ORIGIN,… (data: secret_origins)", [name, concat(", ", secret_bound_to(name)), name]) if {
	input.phase == "call"
	some name in call_secrets
	not secret_ok(name)
	count(secret_bound_to(name)) > 0
}

hints contains sprintf("the operator binds %v to the origins it may be typed on with --secret-origins %v=ORIGIN,… (data: secret_origins)", [name, name]) if {
	input.phase == "call"
	some name in call_secrets
	count(secret_bound_to(name)) == 0
}

# ---------------------------------------------------------------------------
# Storage state: state_save, state_load, state_list (and the file of
# serve --storage-state, restored into each new context as state_load).
#
# The call itself touches no page: saving and listing are allowed, loading
# needs mutations (it changes cookies and storage, like cookies_set). Then
# every origin the state touches is decided on its own, with input.state =
# {op, origin, source} and input.target the origin's URL (a cookie's origin
# is the host of its domain): saved like a read of that origin, restored
# like a navigation to it. An origin that is not allowed is skipped, and
# the result names it.

state_tools := {"state_save", "state_load", "state_list"}

# One origin of a storage-state call: the call itself was decided (with
# the mutation switch, for state_load); the origin is decided by host.
state_origin_decision if object.get(input, "state", null) != null

state_call if {
	input.tool in state_tools
	object.get(input, "state", null) == null
	target == null
}

call_allowed if {
	state_call
	not mutation_blocked
}

call_allowed if {
	input.tool == "state_save"
	input.state.op == "save"
	web_url_ok(target)
}

call_allowed if {
	input.tool == "state_load"
	input.state.op == "load"
	web_url_ok(target)
}

deny contains sprintf("the state of %s is not %s: %s", [where(target), state_verb[input.state.op], url_problem(target)]) if {
	input.phase == "call"
	input.tool in state_tools
	input.state.op in {"save", "load"}
	not web_url_ok(target)
}

state_verb := {"save": "saved", "load": "loaded"}

hints contains url_hint(target) if {
	input.phase == "call"
	input.tool in state_tools
	input.state.op in {"save", "load"}
	not web_url_ok(target)
}
