module github.com/chromegate/chromegate

go 1.26.0

require (
	github.com/deckarep/golang-set/v2 v2.8.0 // indirect
	github.com/go-jose/go-jose/v3 v3.0.5 // indirect
	github.com/go-stack/stack v1.8.1 // indirect
	github.com/gobwas/glob v1.1.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/playwright-community/playwright-go v0.6000.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
