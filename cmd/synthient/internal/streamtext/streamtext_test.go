package streamtext_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/streamtext"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// Tests of streamtext.go: the text form of a stream's events.

// Each feed's events print as one line each in text: the time first (an
// ADB command has none: its session), then the feed's fields.
func TestStreamTextEveryFeed(t *testing.T) {
	t.Parallel()
	adbLine := regexp.MustCompile(`^sha256:[0-9a-f]{64}  #\d+  \S`)
	for _, feed := range synthient.Feeds {
		t.Run(string(feed), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, "stream", string(feed), "--max-events", "3")
			clitest.RequireCode(t, r, clierr.OK)
			out := clitest.Lines(r.Stdout)
			require.Len(t, out, 3, "lines:\n%s", r.Stdout)
			for _, l := range out {
				if feed == synthient.FeedHoneypotADB {
					assert.Regexp(t, adbLine, l)
					continue
				}
				assert.Regexp(t, clitest.EventLineRe, l)
			}
		})
	}
}

// eventLine renders the fields of each feed's event, escapes what could
// break the line, and declines what is not the feed's event (which is
// then printed as its JSON).
func TestEventLine(t *testing.T) {
	t.Parallel()
	type eventCase struct {
		name string
		feed synthient.Feed
		raw  string
		want string // "" for none
	}
	tests := []eventCase{
		{"proxy", synthient.FeedProxies, `{"ip":"1.2.3.4","provider":"P","type":"T","timestamp":1780000000,"country_code":"DE","asn":3320}`,
			"2026-05-28 20:26:40Z  1.2.3.4  P  T  DE  AS3320"},
		{"proxy missing fields", synthient.FeedProxies, `{"ip":"1.2.3.4"}`, "-  1.2.3.4  -  -  -  -"},
		{"anonymizer", synthient.FeedAnonymizers, `{"range_start":"10.0.0.0","range_end":"10.0.0.255","provider":"TOR","type":"TOR_NODE","timestamp":1780000000,"country_code":"CA","asn":1}`,
			"2026-05-28 20:26:40Z  10.0.0.0-10.0.0.255  TOR  TOR_NODE  CA  AS1"},
		{"torrent", synthient.FeedTorrents, `{"info_hash":"ab","name":"n","total_size":2048,"file_count":1,"peers":[{},{}],"timestamp":1780000000}`,
			"2026-05-28 20:26:40Z  ab  n  2.0 KiB  1 file  2 peers"},
		{"ja4t", synthient.FeedJA4T, `{"ip":"1.2.3.4","ja4t":"64240_2","provider":"P","type":"T","timestamp":1780000000,"country_code":"JP","asn":7}`,
			"2026-05-28 20:26:40Z  1.2.3.4  64240_2  P  T  JP  AS7"},
		{"http, milliseconds", synthient.FeedHoneypotHTTP, `{"timestamp":1780000000123,"domain":"a.example","port":80,"details":{"method":"GET","uri":"/x"},"meta":{"provider":"OVH","pool_id":7}}`,
			"2026-05-28 20:26:40.123Z  a.example:80  GET /x  OVH 7"},
		{"https", synthient.FeedHoneypotHTTPS, `{"timestamp":1780000000123,"domain":"a.example","port":443,"details":"{}"}`,
			"2026-05-28 20:26:40.123Z  a.example:443  TLS ClientHello  -"},
		{"dns", synthient.FeedHoneypotDNS, `{"timestamp":1780000000123,"domain":"q.example","port":53}`,
			"2026-05-28 20:26:40.123Z  q.example  port 53  -"},
		{"adb", synthient.FeedHoneypotADB, `{"session":"sha256:ab","sequential_id":2,"command":"c2hlbGw6aWQA"}`,
			"sha256:ab  #2  shell:id"},
		{"a value cannot break the line", synthient.FeedProxies, `{"ip":"1.2.3.4\nsynthient: forged","provider":"P\tQ"}`,
			`-  1.2.3.4\x0asynthient: forged  P\x09Q  -  -  -`},
		{"a long request is cut", synthient.FeedHoneypotHTTP, `{"domain":"d","details":{"method":"GET","uri":"/` + strings.Repeat("a", 100) + `"}}`,
			"-  d  GET /" + strings.Repeat("a", 74) + "…  -"},
		{"not the feed's event", synthient.FeedProxies, `{"ip":["1.2.3.4"]}`, ""},
		{"not JSON", synthient.FeedProxies, `nope`, ""},
		{"unknown feed", synthient.Feed("nope"), `{"ip":"1.2.3.4"}`, ""},
	}
	for _, feed := range synthient.Feeds {
		// An event of none of the feed's fields, as another feed's event
		// or an unknown one, is not rendered with the fields' decoration.
		for _, raw := range []string{`{"k":"v"}`, `{}`, `{"unknown":1}`} {
			tests = append(tests, eventCase{"none of " + string(feed) + "'s fields: " + raw, feed, raw, ""})
		}
	}
	tests = append(tests, eventCase{"a proxy on anonymizers", synthient.FeedAnonymizers, `{"ip":"2.2.2.2","provider":"P"}`, "-  -  P  -  -  -"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line, ok := streamtext.EventLine(tt.feed, []byte(tt.raw))
			assert.Equal(t, tt.want != "", ok, "ok")
			assert.Equal(t, tt.want, line)
		})
	}
}

// FuzzEventLine: whatever a server sends as an event, eventLine neither
// panics nor makes a line that holds a control character (a line break
// would forge a line; an escape sequence would reach the terminal).
func FuzzEventLine(f *testing.F) {
	for _, seed := range []string{
		`{"ip":"1.2.3.4","provider":"P","type":"T","timestamp":1780000000,"country_code":"DE","asn":3320}`,
		`{"range_start":"10.0.0.0","range_end":"10.0.0.255"}`,
		`{"info_hash":"ab","peers":[{},{}],"total_size":-1}`,
		`{"timestamp":1780000000123,"domain":"a\nb","details":{"method":"GET","uri":"/\u001b[2J"}}`,
		`{"details":"{\"x\":1}","meta":{"pool_id":7}}`,
		`{"session":"s","command":"AAEC"}`,
		`{"timestamp":-9223372036854775808}`,
		`nope`, `{}`, `[]`, `null`,
	} {
		for i := range synthient.Feeds {
			f.Add(i, seed)
		}
	}
	f.Fuzz(func(t *testing.T, feed int, raw string) {
		feeds := synthient.Feeds
		line, ok := streamtext.EventLine(feeds[uint(feed)%uint(len(feeds))], []byte(raw))
		if !ok {
			assert.Empty(t, line)
			return
		}
		assert.False(t, strings.ContainsFunc(line, textsafe.ControlRune), "a control character in %q", line)
	})
}
