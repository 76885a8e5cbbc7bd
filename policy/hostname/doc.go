// Package hostname reads hosts as the browser does and matches them against
// chromegate's host patterns: Parse is the WHATWG host parser, Match the
// semantics of the policies' chromegate.host_match builtin. It imports
// nothing of chromegate and no OPA, so code that only matches hosts (the
// helpers) need not pull in the policy engine.
package hostname
