# Unit tests of information flow (flow.rego) in the default policy: with no
# labels nothing changes; labelled origins refuse what flow.rego says. The
# helpers are chromegate_test.rego's and requests_test.rego's.
package chromegate_test

import data.chromegate as policy

flow_labels := {"https://mail.example": ["confidential"], "*.forum.example": ["untrusted"], "docs.example": ["reference"]}

flowing(inp, flows) := object.union(inp, {"flow": flows, "read_origins": ["https://mail.example", "https://www.forum.example"]})

leak(via, from, to) := {"from_origin": from, "to_origin": to, "via": via, "length": 19, "total": 19}

out_of_mail := flowing(nav("https://evil.example/?q=x"), [leak("url", "https://mail.example", "https://evil.example")])

to_forum_host := flowing(nav("https://evil.example/"), [{"from_origin": "https://www.forum.example", "to_origin": "https://evil.example", "via": "url.host", "length": 12, "total": 0}])

test_no_labels_no_change if {
	allowed(out_of_mail) with data.allow_domains as ["*"]
	allowed(to_forum_host) with data.allow_domains as ["*"]
}

test_confidential_flow_refused if {
	not allowed(out_of_mail) with data.allow_domains as ["*"] with data.labels as flow_labels
	reasons(out_of_mail) == ["navigate carries 19 characters read on https://mail.example, which is labelled confidential, to https://evil.example (url): what is read there stays there"] with data.allow_domains as ["*"] with data.labels as flow_labels
}

test_confidential_by_host_pattern if {
	inp := flowing(nav("https://evil.example/"), [leak("arg:url", "https://www.forum.example", "https://evil.example")])
	not allowed(inp) with data.allow_domains as ["*"] with data.labels as {"*.forum.example": ["confidential"]}
	allowed(inp) with data.allow_domains as ["*"] with data.labels as {"https://forum.example": ["confidential"]}
}

test_other_flows_pass if {
	# Same origin, a label that is not confidential, a host alone.
	same := flowing(nav("https://mail.example/"), [leak("url", "https://mail.example", "https://mail.example")])
	allowed(same) with data.allow_domains as ["*"] with data.labels as flow_labels
	ref := flowing(nav("https://evil.example/"), [leak("url", "https://docs.example", "https://evil.example")])
	allowed(ref) with data.allow_domains as ["*"] with data.labels as flow_labels
	host := flowing(nav("https://evil.example/"), [leak("url.host", "https://mail.example", "https://evil.example")])
	allowed(host) with data.allow_domains as ["*"] with data.labels as flow_labels
	allowed(out_of_mail) with data.allow_domains as ["*"] with data.labels as "not an object"
}

test_confidential_ask_switch if {
	# The decision asks a person (chromegate goes on only on a yes).
	why := "navigate carries 19 characters read on https://mail.example, which is labelled confidential, to https://evil.example (url): what is read there stays there"
	d := policy.decision with input as out_of_mail with data.allow_domains as ["*"] with data.labels as flow_labels with data.flow_ask as true
	d.allow == true
	d.ask == [why]
	policy.flow_asks == {why} with input as out_of_mail with data.labels as flow_labels with data.flow_ask as true
	count(policy.flow_denials) == 0 with input as out_of_mail with data.labels as flow_labels with data.flow_ask as true
}

test_untrusted_host_navigation_refused if {
	not allowed(to_forum_host) with data.allow_domains as ["*"] with data.labels as flow_labels
	reasons(to_forum_host) == ["navigate goes to https://evil.example, a host first seen in what https://www.forum.example showed, which is labelled untrusted: navigate only to hosts the user or a trusted page gave"] with data.allow_domains as ["*"] with data.labels as flow_labels
}

test_requests_carrying_confidential_refused if {
	fetch := flowing(req("https://evil.example/p.gif?d=x", {"request": {"resource_type": "image"}}), [leak("request.url", "https://mail.example", "https://evil.example")])
	allowed(fetch)
	not allowed(fetch) with data.labels as flow_labels
	reasons(fetch) == ["this request carries 19 characters read on https://mail.example, which is labelled confidential, to https://evil.example (request.url): what is read there stays there"] with data.labels as flow_labels
}

test_requests_to_untrusted_hosts if {
	named := [{"from_origin": "https://www.forum.example", "to_origin": "https://evil.example", "via": "request.host", "length": 12, "total": 0}]
	not allowed(flowing(popup("https://evil.example/"), named)) with data.allow_domains as ["*"] with data.labels as flow_labels
	allowed(flowing(req("https://evil.example/i.png", {"request": {"resource_type": "image"}}), named)) with data.labels as flow_labels
}
