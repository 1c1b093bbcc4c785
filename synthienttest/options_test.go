package synthienttest_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient/synthienttest"
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 15*time.Second, synthienttest.DefaultHeartbeat)
	assert.Equal(t, 30*time.Minute, synthienttest.DefaultStreamLifetime)
	assert.Equal(t, 2, synthienttest.DefaultStreamLimit)
	assert.Equal(t, 50_000, synthienttest.DefaultCredits)
}

// An invalid option value makes NewServer panic, as the fake is a test
// helper; a nil option is ignored.
func TestOptionsPanicOnInvalidValues(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]synthienttest.Option{
		"WithClock(nil)":                   synthienttest.WithClock(nil),
		"WithCredits(-1)":                  synthienttest.WithCredits(-1),
		"WithExportDays(-1)":               synthienttest.WithExportDays(-1),
		"WithExportDays(3661)":             synthienttest.WithExportDays(3661),
		"WithExportSize(7)":                synthienttest.WithExportSize(7),
		"WithExportSizeFunc(nil)":          synthienttest.WithExportSizeFunc(nil),
		"WithPresignExpiry(0)":             synthienttest.WithPresignExpiry(0),
		"WithPresignExpiry(8 days)":        synthienttest.WithPresignExpiry(8 * 24 * time.Hour),
		"WithStreamLimit(-1)":              synthienttest.WithStreamLimit(-1),
		"WithEventInterval(0)":             synthienttest.WithEventInterval(0),
		"WithHeartbeat(0)":                 synthienttest.WithHeartbeat(0),
		"WithStreamLifetime(0)":            synthienttest.WithStreamLifetime(0),
		"WithMaxEvents(-1)":                synthienttest.WithMaxEvents(-1),
		"WithRateLimit(unknown bucket)":    synthienttest.WithRateLimit("nope", 1, 1),
		"WithRateLimit(0 per second)":      synthienttest.WithRateLimit(synthienttest.BucketLookup, 0, 1),
		"WithRateLimit(NaN per second)":    synthienttest.WithRateLimit(synthienttest.BucketLookup, math.NaN(), 1),
		"WithRateLimit(+Inf per second)":   synthienttest.WithRateLimit(synthienttest.BucketLookup, math.Inf(1), 1),
		"WithRateLimit(a burst of 0)":      synthienttest.WithRateLimit(synthienttest.BucketLookup, 1, 0),
		"WithListenAddr(not an address)":   synthienttest.WithListenAddr("not an address"),
		"WithListenAddr(a port too large)": synthienttest.WithListenAddr("127.0.0.1:70000"),
	} {
		assert.Panics(t, func() { synthienttest.NewServer(opt) }, name)
	}
	srv := synthienttest.NewServer(nil)
	srv.Close()
}
