# METADATA
# title: chromegate example policy for Claude Desktop with your own Chrome
# description: |
#   Your real Chrome, with your logged-in sessions, driven by your assistant.
#   It may browse and act (click, type, fill, close tabs) on the hosts you
#   list in allow_domains (or with --allow-domain), never on the ones in
#   never_domains (your mail, your bank, account settings: never_domains
#   wins), and never run scripts, download, upload your files or read or
#   write your cookies.
package chromegate

# ---------------------------------------------------------------------------
# Hosts.

default listed := []

listed := data.allow_domains if is_array(data.allow_domains)

default never := []

never := data.never_domains if is_array(data.never_domains)

host_ok(t) if {
	t.scheme in {"http", "https"}
	t.ip_class == "unresolved"
	chromegate.host_match(listed, t.host)
	not chromegate.host_match(never, t.host)
}

# Your own machine and network only when listed exactly.
host_ok(t) if {
	t.scheme in {"http", "https"}
	t.ip_class != "unresolved"
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
}

denial_reasons := sort(deny) if count(deny) > 0

denial_reasons := [sprintf("no rule of the desktop policy allows %v", [object.get(input, "tool", "this call")])] if count(deny) == 0

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
