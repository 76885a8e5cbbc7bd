package cdp

import (
	"embed"
	"strings"
)

// Page scripts live in scripts/*.js so they can be read and linted as
// JavaScript.
//
//go:embed scripts/*.js
var scriptFS embed.FS

var (
	scriptSelect       = loadScript("select.js")
	scriptText         = loadScript("text.js")
	scriptDims         = loadScript("dims.js")
	scriptHasText      = loadScript("hastext.js")
	evalHead, evalTail = splitEval(loadScript("eval.js"))
)

// loadScript returns an embedded script without its leading comment lines,
// which would otherwise travel with every call.
func loadScript(name string) string {
	b, err := scriptFS.ReadFile("scripts/" + name)
	if err != nil {
		panic("cdp: missing embedded script " + name) // a build defect, caught by every test
	}
	lines := strings.Split(string(b), "\n")
	for len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "//") {
		lines = lines[1:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

const evalMarker = "/*EXPRESSION*/"

func splitEval(src string) (head, tail string) {
	head, tail, ok := strings.Cut(src, evalMarker)
	if !ok {
		panic("cdp: eval.js has no " + evalMarker + " marker")
	}
	return head, tail
}

// wrapExpression splices a model-supplied expression into eval.js, on lines
// of its own.
func wrapExpression(expr string) string {
	return evalHead + "\n" + expr + "\n" + evalTail
}
