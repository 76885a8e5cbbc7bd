# Unit tests of information flow (flow.rego) under the security team's
# labels (data.json): the intranet is confidential, the threat-intel sites
# untrusted. The helpers are chromegate_test.rego's.
package chromegate_test

import data.chromegate as policy

both := ["appsec", "auditor"]

intranet := "https://intranet.example.com"

carrying(inp, flows) := object.union(inp, {"flow": flows, "read_origins": [intranet, "https://urlscan.io"]})

from_intranet(via, to) := [{"from_origin": intranet, "to_origin": to, "via": via, "length": 24, "total": 24}]

named_by_urlscan(via, to) := [{"from_origin": "https://urlscan.io", "to_origin": to, "via": via, "length": 15, "total": 0}]

test_intranet_content_stays_on_the_intranet if {
	inp := as_roles(carrying(nav("https://www.example.com/?q=x"), from_intranet("url", "https://www.example.com")), both)
	allowed(as_roles(nav("https://www.example.com/?q=x"), both))
	not allowed(inp)
	reasons(inp) == ["navigate carries 24 characters read on https://intranet.example.com, which is labelled confidential, to https://www.example.com (url): what is read there stays there"]
	# Back on the intranet itself it may go.
	allowed(as_roles(carrying(nav("https://intranet.example.com/search?q=x"), from_intranet("url", intranet)), both))
}

test_intranet_content_in_a_request_refused if {
	img := carrying(req("https://app.example.com/p.gif?d=x", {"request": {"resource_type": "image"}}), from_intranet("request.url", "https://app.example.com"))
	allowed(req("https://app.example.com/p.gif?d=x", {"request": {"resource_type": "image"}}))
	not allowed(img)
	reasons(img) == ["this request carries 24 characters read on https://intranet.example.com, which is labelled confidential, to https://app.example.com (request.url): what is read there stays there"]
}

test_flow_ask_asks_a_person if {
	inp := as_roles(carrying(nav("https://www.example.com/?q=x"), from_intranet("url", "https://www.example.com")), both)
	d := policy.decision with input as inp with data.flow_ask as true
	d.allow == true
	d.ask == ["navigate carries 24 characters read on https://intranet.example.com, which is labelled confidential, to https://www.example.com (url): what is read there stays there"]
	count(policy.flow_asks) == 1 with input as inp with data.flow_ask as true
}

test_hosts_named_by_untrusted_sites_refused if {
	roles := ["threat-intel"]
	inp := as_roles(carrying(nav("https://www.virustotal.com/gui/x"), named_by_urlscan("url.host", "https://www.virustotal.com")), roles)
	allowed(as_roles(nav("https://www.virustotal.com/gui/x"), roles))
	not allowed(inp)
	reasons(inp) == ["navigate goes to https://www.virustotal.com, a host first seen in what https://urlscan.io showed, which is labelled untrusted: navigate only to hosts the user or a trusted page gave"]
	# A page's frame there: the same; an image from there is no navigation.
	fr := carrying(frame("https://www.example.com/"), named_by_urlscan("request.host", "https://www.example.com"))
	not allowed(fr)
	allowed(carrying(req("https://app.example.com/i.png", {"request": {"resource_type": "image"}}), named_by_urlscan("request.host", "https://app.example.com")))
	# A host the intranet named first is not the untrusted rule's.
	allowed(as_roles(carrying(nav("https://www.example.com/"), from_intranet("url.host", "https://www.example.com")), both))
}

test_labels_by_pattern_and_malformed if {
	inp := as_roles(carrying(nav("https://www.example.com/"), [{"from_origin": "https://api.abuse.ch", "to_origin": "https://www.example.com", "via": "url.host", "length": 15, "total": 0}]), both)
	not allowed(inp)
	allowed(inp) with data.labels as ["not", "an", "object"]
}
