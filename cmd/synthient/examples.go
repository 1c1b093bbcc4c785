package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Example lines of each command's help, by command path.
// Every line runs as it is against --fake (TestExamplesRun), the files it
// names put in a temporary directory.
var examples = map[string][]string{
	"synthient lookup ip":        {"synthient lookup ip 8.8.8.8", "synthient lookup ip 2001:4860:4860::8888 -o json", "synthient lookup ip 8.8.8.8 --jq .network.asn"},
	"synthient lookup ips":       {"synthient lookup ips 1.1.1.1 8.8.8.8", "synthient lookup ips --file addresses.txt --dry-run", "synthient lookup ips --file addresses.txt -o json --failed resend.txt --unknown check.txt", "synthient lookup ips --file addresses.txt -o csv"},
	"synthient lookup domain":    {"synthient lookup domain example.com", "synthient lookup domain example.com --limit 10 -o json"},
	"synthient account":          {"synthient account", "synthient account --jq .lookup_quota.credits"},
	"synthient health":           {"synthient health"},
	"synthient exports list":     {"synthient exports list proxies --limit 5", "synthient exports list honeypot_dns --all -o json", "synthient exports list proxies --all -o csv"},
	"synthient exports meta":     {"synthient exports meta proxies latest", "synthient exports meta anonymizers latest -o json"},
	"synthient exports download": {"synthient exports download proxies latest --out proxies.parquet --verify"},
	"synthient exports head":     {"synthient exports head proxies latest --rows 5", "synthient exports head honeypot_http latest --rows 3 -o json"},
	"synthient exports schema":   {"synthient exports schema anonymizers latest", "synthient exports schema torrents latest -o json"},
	"synthient stream":           {"synthient stream proxies --max-events 5", "synthient stream honeypot_http --max-events 5 --reconnect -o json"},
	"synthient version":          {"synthient version", "synthient version -o json"},
	"synthient demo":             {"synthient demo"},
	"synthient fake-server":      {"synthient fake-server --listen 127.0.0.1:8080"},
}

// addExamples sets the Example of each command of the tree under root that
// examples lists.
func addExamples(root *cobra.Command) {
	if lines, ok := examples[root.CommandPath()]; ok {
		root.Example = "  " + strings.Join(lines, "\n  ")
	}
	for _, c := range root.Commands() {
		addExamples(c)
	}
}
