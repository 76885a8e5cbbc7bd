// Package helpers holds the higher-level tools (extract_links,
// read_as_markdown, fill_form, the page snapshot) composed only from
// executor.Executor primitives, so they work unchanged on every backend and
// every primitive they use passes the policy gate. The reading issue fills it.
package helpers
