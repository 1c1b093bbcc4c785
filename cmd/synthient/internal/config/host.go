package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/synthient-go/synthient"
)

// DefaultHost is the host of synthient.DefaultBaseURL, to which a key
// kept without a host is bound.
const DefaultHost = "https://api.synthient.com"

// HostOf returns the host a key kept for the base URL rawURL is bound
// to: its scheme, host name and port, in lower case and without the
// scheme's default port ("https://api.synthient.com",
// "http://127.0.0.1:8080"). "" is synthient.DefaultBaseURL. A URL that
// is not an absolute http or https URL with a host is an error.
func HostOf(rawURL string) (string, error) {
	if rawURL == "" {
		rawURL = synthient.DefaultBaseURL
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
		return "", fmt.Errorf("the base URL %q is not an absolute http or https URL", rawURL)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 address
	}
	return scheme + "://" + host, nil
}
