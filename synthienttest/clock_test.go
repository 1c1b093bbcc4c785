package synthienttest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient/synthienttest"
)

func TestManualClock(t *testing.T) {
	t.Parallel()
	clk := synthienttest.NewManualClock(testNow)
	assert.Equal(t, testNow, clk.Now())
	clk.Advance(90 * time.Second)
	assert.Equal(t, testNow.Add(90*time.Second), clk.Now())
	clk.Set(testNow.Add(-time.Hour))
	assert.Equal(t, testNow.Add(-time.Hour), clk.Now(), "Set moves the clock back too")
}

// The fake reads its clock in UTC, whatever the clock's location.
func TestServerClockIsUTC(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CEST", 2*3600)
	srv, clk := newServer(t)
	clk.Set(testNow.In(berlin))
	srv.Reset()
	do(t, rawClient(t), "GET", srv.URL+"/health", "", "")
	got := srv.Requests()[0].Time
	assert.Equal(t, time.UTC, got.Location())
	assert.True(t, got.Equal(testNow), "logged time %v", got)
}
