# Information flow: what the model has read decides where it may write.
#
# chromegate tells the policy, for each call and request, what of the
# content the session's model was shown from other origins it carries where
# (input.flow), and which origins it was shown (input.read_origins). The
# operator labels origins in data.labels: a key is an origin
# ("https://mail.example") or a host pattern as in allow_domains
# ("mail.example", "*.forum.example"), its value a list of labels.
#
#   confidential: nothing read on the origin may flow to another origin
#     (a navigation's URL, a download's, typed text, an eval, a page tool's
#     arguments, a request a page makes).
#   untrusted: a host first named by the origin's content may not be
#     navigated to (a call, a landing, or a document request).
#
# With no labels (the default data) these rules refuse nothing.
# data.flow_ask set to true makes the confidential refusals a person's to
# answer (flow_asks, the decision's ask): chromegate asks through the
# client and goes on only on an explicit yes; a client that cannot ask,
# and a request a page makes, get the refusal.
#
# The same file is in the default policy and the security-team example.
package chromegate

default labels := {}

labels := l if {
	l := data.labels
	is_object(l)
}

flow_ask if data.flow_ask == true

# labelled(origin, label): the operator gave origin the label.
labelled(origin, label) if {
	some pattern, ls in labels
	label in ls
	label_covers(pattern, origin)
}

label_covers(pattern, origin) if pattern == origin

label_covers(pattern, origin) if {
	not contains(pattern, "://")
	chromegate.host_match([pattern], chromegate.parse_url(origin).host)
}

host_vias := {"url.host", "request.host"}

flow_subject := "this request" if input.phase == "request"

else := sprintf("%v", [object.get(input, "tool", "this call")])

# (a) content of a confidential origin going to another origin.
confidential_flow contains sprintf("%v carries %v characters read on %v, which is labelled confidential, to %v (%v): what is read there stays there", [flow_subject, f.length, f.from_origin, f.to_origin, f.via]) if {
	some f in input.flow
	not f.via in host_vias
	f.from_origin != f.to_origin
	labelled(f.from_origin, "confidential")
}

# (b) a navigation to a host an untrusted origin's content named first.
untrusted_host contains sprintf("%v goes to %v, a host first seen in what %v showed, which is labelled untrusted: navigate only to hosts the user or a trusted page gave", [flow_subject, f.to_origin, f.from_origin]) if {
	some f in input.flow
	f.via == "url.host"
	input.phase == "call"
	labelled(f.from_origin, "untrusted")
}

untrusted_host contains sprintf("%v goes to %v, a host first seen in what %v showed, which is labelled untrusted: navigate only to hosts the user or a trusted page gave", [flow_subject, f.to_origin, f.from_origin]) if {
	some f in input.flow
	f.via == "request.host"
	input.request.navigation == true
	labelled(f.from_origin, "untrusted")
}

flow_denials contains r if {
	some r in confidential_flow
	not flow_ask
}

flow_denials contains r if some r in untrusted_host

flow_asks contains r if {
	some r in confidential_flow
	flow_ask
}

flow_refused if count(flow_denials) > 0

deny contains r if some r in flow_denials

ask contains r if some r in flow_asks
